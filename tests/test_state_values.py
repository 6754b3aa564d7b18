"""State values (--method state): the expectation over new tiles, the updates, models and the CLI."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import from_grid, move, to_grid
from test_learn import SMALL, ReferenceLearner
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048.games.game2048 import P_FOUR
from td2048.games.wide import wide_from_codes, wide_to_codes
from td2048.kernels.params import learning_params
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.network import Network, parse_network
from td2048.rng import uniform


def naive_expectation(net: Network, codes: list[int]) -> float:
    """Mean over the empty cells of 0.9 V(code 1 there) + 0.1 V(code 2 there), each board evaluated whole."""
    def board(c):
        return wide_from_codes(c) if net.wide else from_grid([c[0:4], c[4:8], c[8:12], c[12:16]])

    total, empty = 0.0, [i for i in range(16) if codes[i] == 0]
    for i in empty:
        one, two = list(codes), list(codes)
        one[i], two[i] = 1, 2
        total += (1 - P_FOUR) * net.value(board(one)) + P_FOUR * net.value(board(two))
    return total / len(empty)


def random_weights(net: Network, seed: int) -> Network:
    net.weights[:] = np.random.default_rng(seed).standard_normal(net.weights.size).astype(np.float32)
    return net


NETWORKS = {  # (network, isomorphisms, clamp, game)
    "small-iso8": (SMALL, 8, None, "2048"),
    "small-iso4": (SMALL, 4, None, "2048"),
    "rows-iso1": ("8x4", 1, None, "2048"),
    "clamped": ("012345,3c,9", 8, 3, "2048"),
    "2584": (FIB_NETWORK, 8, FIB_CLAMP, "2584"),
}


@pytest.fixture(scope="module", params=list(NETWORKS))
def state_network(request):
    name, iso, clamp, game = NETWORKS[request.param]
    return random_weights(Network(parse_network(name, iso, clamp), game=game, method="state"), 7)


@settings(max_examples=80)
@given(codes=st.lists(st.integers(0, 12), min_size=16, max_size=16).filter(lambda c: 0 in c))
def test_expectation_equals_evaluating_every_new_tile(state_network, codes):
    net = state_network
    board = wide_from_codes(codes) if net.wide else from_grid([codes[0:4], codes[4:8], codes[8:12], codes[12:16]])
    assert net.expected_value(board) == pytest.approx(naive_expectation(net, codes), rel=1e-9, abs=1e-9)


def test_expectation_sees_codes_past_15_on_wide_boards():
    net = random_weights(Network(parse_network("0123,4567"), game="2584", method="state"), 3)
    codes = [16, 0, 17, 3] + [1, 2, 0, 0] + [0] * 8
    assert wide_to_codes(wide_from_codes(codes)) == codes
    assert net.expected_value(wide_from_codes(codes)) == pytest.approx(naive_expectation(net, codes), rel=1e-9)


class StateReference(ReferenceLearner):
    """TD on states written out: moves by r + E[V] over new tiles, targets r_t + V(s_t+1), terminal 0.

    The expectation is summed as the kernels sum it (the afterstate's features once, then per empty
    cell the changes of the features that cover it), so that near-ties go the same way; that this
    sum is the expectation is checked above against evaluating every new tile's board whole. Every weight is
    added in float64 (state values' kernels: see td2048.kernels.features)."""

    board_sum = float

    def expectation(self, after):
        base_indices = [i for group in self.indices(after) for i in group]
        base = float(self.w[base_indices[0]])
        for i in base_indices[1:]:
            base += float(self.w[i])
        gain, n = 0.0, 0
        for c in range(16):
            if (after >> (4 * c)) & 0xF:
                continue
            n += 1
            d = []
            for code in (1, 2):
                changed = [i for group in self.indices(after | (code << (4 * c))) for i in group]
                s = 0.0
                for old, new in zip(base_indices, changed):
                    if old != new:
                        s += float(self.w[new]) - float(self.w[old])
                d.append(s)
            gain += (1.0 - P_FOUR) * d[0] + P_FOUR * d[1]
        return base + gain / n

    def can_move(self, board):
        return any(from_grid(move(to_grid(board), d)[0]) != board for d in range(4))

    def episode(self, mode, lam=0.0, nstep=0, epsilon=0.0):
        board = self.spawn(self.spawn(0))
        states, rewards, score = [], [0.0], 0  # rewards[t]: the reward of the move into s_t
        while True:
            best = self.greedy(board, self.expectation)
            if best is None:
                break
            _, after, reward, _ = best
            if epsilon > 0 and uniform(self.rng) < epsilon:
                after, reward = self.explored(board)
            states.append(board)
            rewards.append(float(reward))
            score += reward
            following = self.spawn(after)
            if mode == "forward":
                target = reward + self.value(following) if self.can_move(following) else float(reward)
                self.td_update(board, target)
            board = following
        if mode == "forward":
            self.td_update(board, 0.0)
        else:
            states.append(board)  # the terminal state: trained toward 0, worth 0 to the state before it
            T = len(states)
            target, values = 0.0, [0.0] * T
            for t in range(T - 1, -1, -1):
                values[t] = self.td_update(states[t], target)
                if t == T - 1:
                    values[t] = 0.0
                if nstep > 0:
                    target = sum(rewards[t:min(t + nstep - 1, T - 1) + 1])
                    if t + nstep - 1 <= T - 1:
                        target += values[t + nstep - 1]
                else:
                    target = rewards[t] + (1.0 - lam) * values[t] + lam * target
        return score, len(states) - (0 if mode == "forward" else 1)


@pytest.mark.parametrize("mode, lam, nstep, explore", [
    ("backward", 0.0, 0, "none"), ("forward", 0.0, 0, "none"), ("backward", 0.5, 0, "none"),
    ("backward", 1.0, 0, "none"), ("backward", 0.0, 3, "none"), ("backward", 0.5, 0, "const:0.3"),
    ("forward", 0.0, 0, "const:0.3")])
def test_compiled_state_episodes_equal_the_reference_bit_for_bit(mode, lam, nstep, explore):
    net = Network(parse_network(SMALL), method="state")
    learner = Learner(net, seed=21)
    learner.run(10, 0.1, LearningOptions(update=mode))  # weights no longer all zero
    reference = StateReference(net, learner.rng_state, alpha=0.1)
    block = learner.run(3, 0.1, LearningOptions(update=mode, lam=lam, nstep=nstep, explore=explore))
    epsilon = 0.3 if explore != "none" else 0.0
    for e in range(3):
        assert reference.episode(mode, lam, nstep, epsilon) == (block.scores[e], block.moves[e])
    np.testing.assert_array_equal(reference.w, net.weights)
    assert np.array_equal(reference.rng, learner.rng_state)


@pytest.mark.parametrize("lam, nstep, expected", [
    (0.0, 0, [4.0, 4.0, 5.0]),  # s_1 -> 8 + V(terminal) = 8 + 0; s_0 -> 4 + V(s_1) = 4 + 4
    (1.0, 0, [6.0, 4.0, 5.0]),  # Monte Carlo: s_0 -> 4 + 8 = 12, s_1 -> 8
    (0.5, 0, [5.0, 4.0, 5.0]),  # s_0 -> 4 + 0.5 * 4 + 0.5 * 8 = 10
    (0.0, 2, [6.0, 4.0, 5.0]),  # 2-step: s_0 -> 4 + 8 + V(terminal) = 12
])
def test_state_targets_on_a_hand_worked_episode(lam, nstep, expected):
    """States s_0, s_1, s_2 (terminal) with cell 0 holding codes 1, 2, 3 (one weight each), rewards 4
    and 8 for the moves s_0 -> s_1 -> s_2, alpha 0.5 on a one-feature network. The terminal state's
    weight starts at 10: it moves halfway to 0, yet counts as 0 in the targets before it."""
    net = Network(parse_network("0", isomorphisms=1), method="state")
    net.weights[3] = 10.0
    path = np.array([[1], [2], [3]], np.uint64)
    path_steps = np.array([[0.0, 0], [4.0, 0], [8.0, 0]])  # at i: the reward of the move into s_i
    params = learning_params(0.5, lam, nstep)
    net.kernels.backward_updates(net.weights, np.zeros(1, np.uint8), params, (path, path_steps), 3,
                                 np.empty((3, 1), np.uint64))  # the kernels' scratch rows of feature indices
    assert net.weights[1:4].tolist() == expected
    assert path_steps[:, 1].tolist() == expected[:2] + [0.0]
