"""TD(0) learning: the compiled episode equals the written-out algorithm, seeds reproduce, networks learn."""

import numpy as np
import pytest
from naive import from_grid, move, to_grid

from td2048.games.bitboard import LOW_NIBBLES, symmetric_boards
from td2048.games.game2048 import _py_spawn
from td2048.kernels.codegen import generate_source
from td2048.kernels.params import learning_params
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.network import Network, parse_network
from td2048.play import Agent
from td2048.rng import below, uniform
from td2048.settings import TrainSettings
from td2048.training import train

# The suite's 2048 network, the CLI tests' preset too: each distinct network compiles its kernels for
# seconds on a fresh machine, so the files share this one (tuples of several runs of cells are
# checked in test_network.py).
SMALL = "2x4"


class ReferenceLearner:
    """TD(0) on afterstates written out in plain Python, float32 weights, the kernels' summation order: each
    symmetric board's weights in float32 (``board_sum``; state values' kernels: in float64), the boards' sums in
    float64."""

    board_sum = np.float32  # the type a board's weights are added in

    def __init__(self, net: Network, rng_state: np.ndarray, alpha: float):
        self.w = net.weights.copy()
        self.spec = net.spec
        self.rng = rng_state.copy()
        self.alpha_split = alpha / net.spec.n_features

    def indices(self, board):
        out = []
        for sym in symmetric_boards(board)[: self.spec.isomorphisms]:
            grid = to_grid(sym)
            out.append([off + sum(grid[c // 4][c % 4] << (4 * i) for i, c in enumerate(cells))
                        for cells, off in zip(self.spec.tuples, self.spec.table_offsets)])
        return out

    def value(self, board):
        total = 0.0
        for group in self.indices(board):
            s = self.board_sum(self.w[group[0]])
            for i in group[1:]:
                s = self.board_sum(s + self.board_sum(self.w[i]))
            total += float(s)
        return total

    def td_update(self, board, target):
        u = np.float32(self.alpha_split * (target - self.value(board)))
        total = 0.0
        for group in self.indices(board):
            s = self.board_sum(0.0)
            for i in group:
                self.add(i, u)
                s = self.board_sum(s + self.board_sum(self.w[i]))  # the weight read again after its add
            total += float(s)
        return total

    def add(self, i, u):
        """One weight's step of an update whose feature share of the error is u."""
        self.w[i] = np.float32(self.w[i] + u)

    def spawn(self, board):
        return int(_py_spawn(np.uint64(board), self.rng, LOW_NIBBLES))

    @staticmethod
    def greedy(board, value_of):
        """(reward + value, afterstate, reward, value) of the best legal move by ``value_of``; None if none."""
        best = None
        for d in range(4):
            grid, reward = move(to_grid(board), d)
            after = from_grid(grid)
            if after != board:
                v = value_of(after)
                if best is None or reward + v > best[0]:
                    best = (reward + v, after, reward, v)
        return best

    def explored(self, board):
        """(afterstate, reward) of a legal move drawn as the kernels draw it."""
        legal = [d for d in range(4) if from_grid(move(to_grid(board), d)[0]) != board]
        grid, reward = move(to_grid(board), legal[below(self.rng, len(legal))])
        return from_grid(grid), reward

    def episode(self, mode, lam=0.0, nstep=0, epsilon=0.0):
        board = self.spawn(self.spawn(0))
        path, score, previous = [], 0, None
        while True:
            best = self.greedy(board, self.value)
            if best is None:
                break
            _, after, reward, v = best
            if epsilon > 0 and uniform(self.rng) < epsilon:  # the kernels' draws, in their order
                explored, r = self.explored(board)
                if explored != after:  # explored: learned from as played (on-policy)
                    after, reward = explored, r
                    v = self.value(after) if mode == "forward" else v
            if mode == "forward" and previous is not None:
                self.td_update(previous, reward + v)
            path.append((after, reward))
            previous = after
            score += reward
            board = self.spawn(after)
        if mode == "forward":
            self.td_update(previous, 0.0)
        else:
            # targets written out: lambda-returns G_t-1 = r_t + (1 - lambda) V(s'_t) + lambda G_t,
            # or n-step returns r_t + ... + r_t+n-1 + V(s'_t+n-1); V as updated, last target 0
            target, values, T = 0.0, [0.0] * len(path), len(path)
            for t in range(T - 1, -1, -1):
                after, reward = path[t]
                values[t] = self.td_update(after, target)
                if nstep > 0:
                    target = 0.0
                    for j in range(t, min(t + nstep - 1, T - 1) + 1):
                        target += float(path[j][1])
                    if t + nstep - 1 <= T - 1:
                        target += values[t + nstep - 1]
                else:
                    target = reward + (1.0 - lam) * values[t] + lam * target
        return score, len(path)


@pytest.mark.parametrize("mode, lam, nstep", [("backward", 0.0, 0), ("forward", 0.0, 0), ("backward", 0.5, 0),
                                             ("backward", 1.0, 0), ("backward", 0.0, 3), ("backward", 0.0, 1)])
def test_compiled_episodes_equal_the_reference_bit_for_bit(mode, lam, nstep):
    net = Network(parse_network(SMALL))
    learner = Learner(net, seed=11)
    learner.run(20, 0.1, LearningOptions(update=mode))  # start from weights that are no longer all zero
    reference = ReferenceLearner(net, learner.rng_state, alpha=0.1)
    block = learner.run(3, 0.1, LearningOptions(update=mode, lam=lam, nstep=nstep))
    for e in range(3):
        score, moves = reference.episode(mode, lam, nstep)
        assert (score, moves) == (block.scores[e], block.moves[e])
    np.testing.assert_array_equal(reference.w, net.weights)
    assert np.array_equal(reference.rng, learner.rng_state)


def test_same_seed_same_weights():
    def weights(seed, update="backward"):
        settings = TrainSettings(network=SMALL, episodes=300, block=100, seed=seed, update=update)
        net, stats = train(settings)
        return net.weights, stats

    a, stats_a = weights(5)
    b, stats_b = weights(5)
    c, _ = weights(6)
    assert np.array_equal(a, b) and a.any()
    assert [s.avg for s in stats_a] == [s.avg for s in stats_b]
    assert not np.array_equal(a, c)
    assert np.array_equal(weights(5, "forward")[0], weights(5, "forward")[0])


@pytest.mark.parametrize("update", ["backward", "forward"])
def test_small_network_learns(update):
    settings = TrainSettings(network="2x4", episodes=4000, block=500, seed=1, alpha=0.1, update=update)
    _, stats = train(settings)
    assert len(stats) == 8 and stats[-1].episodes == 4000
    first, last = stats[0], stats[-1]
    assert last.avg > 1.5 * first.avg, (first.avg, last.avg)
    assert last.reach_rate(512) > first.reach_rate(512)


def test_playing_does_not_change_weights():
    net = Network(parse_network(SMALL))
    learner = Learner(net, seed=3)
    learner.run(30, 0.1)
    before = net.weights.copy()
    block = Agent(net, seed=3).play(10)
    assert np.array_equal(before, net.weights)
    assert block.moves > 0 and block.avg > 0


def test_lambda_0_and_one_step_are_td0_bit_for_bit():
    weights = []
    for lam, nstep in ((0.0, 0), (0.0, 1)):
        net = Network(parse_network(SMALL))
        Learner(net, seed=4).run(40, 0.1, LearningOptions(lam=lam, nstep=nstep))
        weights.append(net.weights)
    plain = Network(parse_network(SMALL))
    Learner(plain, seed=4).run(40, 0.1)
    assert np.array_equal(weights[0], plain.weights) and np.array_equal(weights[1], plain.weights)


@pytest.mark.parametrize("lam, nstep, expected", [
    (1.0, 0, [12.0, 8.0, 0.0]),  # Monte Carlo: s'_0 -> 8 + 16 = 24, s'_1 -> 16, s'_2 -> 0
    (0.0, 0, [8.0, 8.0, 0.0]),  # TD(0): s'_1 -> 16 + V(s'_2) = 16, s'_0 -> 8 + V(s'_1) = 8 + 8
    (0.5, 0, [10.0, 8.0, 0.0]),  # s'_0 -> 8 + 0.5 * 8 + 0.5 * 16 = 20
    (0.0, 2, [12.0, 8.0, 0.0]),  # 2-step: s'_0 -> 8 + 16 + V(s'_2) = 24
])
def test_backward_targets_on_a_hand_worked_episode(lam, nstep, expected):
    """Three afterstates with cell 0 holding codes 1, 2, 3 (one weight each), rewards 4, 8, 16 for the
    moves that made them, weights starting at 0, alpha 0.5 on a one-feature network."""
    net = Network(parse_network("0", isomorphisms=1))
    path_after = np.array([[1], [2], [3]], np.uint64)
    path_steps = np.array([[4.0, 0], [8.0, 0], [16.0, 0]])
    params = learning_params(0.5, lam, nstep)
    index_rows = np.empty((3, net.spec.n_features), np.uint64)  # the kernels' scratch rows
    net.kernels.backward_updates(net.weights, np.zeros(1, np.uint8), params, (path_after, path_steps), 3, index_rows)
    assert net.weights[1:4].tolist() == expected
    assert path_steps[:, 1].tolist() == expected  # the updated values


@pytest.mark.parametrize("mode, lam, nstep", [("backward", 0.0, 0), ("backward", 0.5, 0), ("backward", 0.0, 3),
                                             ("forward", 0.0, 0)])
def test_exploration_equals_the_reference_bit_for_bit(mode, lam, nstep):
    net = Network(parse_network(SMALL))
    learner = Learner(net, seed=13)
    learner.run(20, 0.1, LearningOptions(update=mode))
    reference = ReferenceLearner(net, learner.rng_state, alpha=0.1)
    block = learner.run(3, 0.1, LearningOptions(update=mode, lam=lam, nstep=nstep, explore="const:0.3"))
    for e in range(3):
        assert reference.episode(mode, lam, nstep, epsilon=0.3) == (block.scores[e], block.moves[e])
    np.testing.assert_array_equal(reference.w, net.weights)


def test_no_exploration_draws_nothing():
    nets = []
    for explore in ("none", "const:0", "exp:1:0.5:0.001"):
        net = Network(parse_network(SMALL))
        Learner(net, seed=4).run(30, 0.1, LearningOptions(explore=explore), first_episode=5)
        nets.append(net.weights)
    assert np.array_equal(nets[0], nets[1]) and np.array_equal(nets[0], nets[2])


def test_exploration_schedules():
    from td2048.errors import TD2048Error
    from td2048.schedules import exploration

    assert exploration("none") == (0.0, 0.0, 0.0, 0.0)
    assert exploration("const:0.01") == (1.0, 0.01, 0.0, 0.0)
    assert exploration("linear:0.1:0:50000") == (2.0, 0.1, 0.0, 50000.0)
    assert exploration("exp:1:0.0005:5000") == (3.0, 1.0, 0.0005, 5000.0)
    for bad in ("const:1.5", "linear:0.1:0", "exp:1:-1:5", "greedy", "const:x", "linear:0.1:2:10"):
        with pytest.raises(TD2048Error, match="bad --explore"):
            exploration(bad)


def test_the_4x6_network_learns_as_the_reference_with_far_prefetches():
    """The default network, whose 256 MiB of weights its kernels ask for into L2 (prefetcht1, see
    kernels.features.FAR_PREFETCH_BYTES), learns bit for bit as the plain-Python reference: a prefetch
    changes when a weight arrives, never its value. (The suite's other networks are cache-sized.)"""
    spec = parse_network("4x6")
    assert "prefetch_far(w" in generate_source(spec) and "prefetch_far(w" not in generate_source(parse_network(SMALL))
    net = Network(spec)
    learner = Learner(net, seed=5)
    learner.run(2, 0.1)  # weights no longer all zero
    reference = ReferenceLearner(net, learner.rng_state, alpha=0.1)
    block = learner.run(1, 0.1)
    assert reference.episode("backward") == (block.scores[0], block.moves[0])
    np.testing.assert_array_equal(reference.w, net.weights)
