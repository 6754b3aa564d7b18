"""TD(0) learning: the compiled episode equals the written-out algorithm, seeds reproduce, networks learn."""

import numpy as np
import pytest
from naive import from_grid, move, to_grid

from td2048.games.bitboard import symmetric_boards
from td2048.games.game2048 import _py_spawn
from td2048.learn import Player, TrainSettings, train
from td2048.network import Network, parse_network

SMALL = "0123,4567,0145"


class ReferenceLearner:
    """TD(0) on afterstates written out in plain Python, float32 weights, the kernels' summation order."""

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
            s = float(self.w[group[0]])
            for i in group[1:]:
                s += float(self.w[i])
            total += s
        return total

    def td_update(self, board, target):
        u = np.float32(self.alpha_split * (target - self.value(board)))
        total = 0.0
        for group in self.indices(board):
            s = 0.0
            for i in group:
                self.w[i] = np.float32(self.w[i] + u)
                s += float(self.w[i])
            total += s
        return total

    def spawn(self, board):
        return int(_py_spawn(np.uint64(board), self.rng))

    def episode(self, mode):
        board = self.spawn(self.spawn(0))
        path, score, previous = [], 0, None
        while True:
            best = None
            for d in range(4):
                grid, reward = move(to_grid(board), d)
                after = from_grid(grid)
                if after != board:
                    v = self.value(after)
                    if best is None or reward + v > best[0]:
                        best = (reward + v, after, reward, v)
            if best is None:
                break
            _, after, reward, v = best
            if mode == "forward" and previous is not None:
                self.td_update(previous, reward + v)
            path.append((after, reward))
            previous = after
            score += reward
            board = self.spawn(after)
        if mode == "forward":
            self.td_update(previous, 0.0)
        else:
            target = 0.0
            for after, reward in reversed(path):
                target = reward + self.td_update(after, target)
        return score, len(path)


@pytest.mark.parametrize("mode", ["backward", "forward"])
def test_compiled_episodes_equal_the_reference_bit_for_bit(mode):
    net = Network(parse_network(SMALL))
    player = Player(net, seed=11)
    player.run(20, mode, 0.1)  # start from weights that are no longer all zero
    reference = ReferenceLearner(net, player.rng_state, alpha=0.1)
    block = player.run(3, mode, 0.1)
    for e in range(3):
        score, moves = reference.episode(mode)
        assert (score, moves) == (block.scores[e], block.moves[e])
    np.testing.assert_array_equal(reference.w, net.weights)
    assert np.array_equal(reference.rng, player.rng_state)


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
    player = Player(net, seed=3)
    player.run(30, "backward", 0.1)
    before = net.weights.copy()
    block = player.run(10, "play")
    assert np.array_equal(before, net.weights)
    assert (block.moves > 0).all() and (block.scores > 0).all()
