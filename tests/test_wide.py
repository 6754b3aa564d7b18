"""5-bit boards: 2584 rules and 2048 past 32768, against the plain references in naive.py."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import move, slide_line_2584

from td2048.games.wide import (
    py_wide_move,
    py_wide_spawn,
    py_wide_symmetries,
    wide_from_codes,
    wide_to_codes,
)
from td2048.rng import make_rng_state


def boards(high):
    few = st.lists(st.sampled_from([0, 0, 1, 1, 2, 3, high - 1, high]), min_size=16, max_size=16)
    return st.one_of(st.lists(st.integers(0, high), min_size=16, max_size=16), few)


def grid(codes):
    return [list(codes[4 * r:4 * r + 4]) for r in range(4)]


@settings(max_examples=1500)
@given(boards(25), st.integers(0, 3))
def test_2584_moves_match_reference(codes, direction):
    after, reward = py_wide_move("2584", wide_from_codes(codes), direction)
    ref, ref_reward = move(grid(codes), direction, max_code=31, game="2584")
    assert wide_to_codes(after) == sum(ref, []) and reward == ref_reward


@settings(max_examples=1500)
@given(boards(20), st.integers(0, 3))
def test_wide_2048_moves_match_reference(codes, direction):
    after, reward = py_wide_move("2048", wide_from_codes(codes), direction)
    ref, ref_reward = move(grid(codes), direction, max_code=31, game="2048")
    assert wide_to_codes(after) == sum(ref, []) and reward == ref_reward


def test_2584_rules_from_the_spec():
    assert slide_line_2584([2, 1, 1, 0]) == ([3, 1, 0, 0], 3)
    assert slide_line_2584([1, 1, 1, 0]) == ([2, 1, 0, 0], 2)
    assert slide_line_2584([3, 3, 0, 0]) == ([3, 3, 0, 0], 0)  # equal tiles >= 2 do not merge
    assert slide_line_2584([17, 16, 0, 0]) == ([18, 0, 0, 0], 4181)
    after, reward = py_wide_move("2584", wide_from_codes([16, 17] + [0] * 14), 3)
    assert wide_to_codes(after)[0] == 18 and reward == 4181
    after, reward = py_wide_move("2584", wide_from_codes([2, 3] + [0] * 14), 3)  # 2 + 3 = 5
    assert wide_to_codes(after)[0] == 4 and reward == 5


def test_2048_merges_32768_and_65536_pairs():
    after, reward = py_wide_move("2048", wide_from_codes([15, 15, 16, 16] + [0] * 12), 3)
    assert wide_to_codes(after)[:4] == [16, 17, 0, 0] and reward == 65536 + 131072


@given(boards(31))
def test_symmetries_on_both_words(codes):
    g = np.array(codes).reshape(4, 4)
    syms = [wide_to_codes(s) for s in py_wide_symmetries(wide_from_codes(codes))]
    expected = [np.rot90(g, -k) for k in range(4)] + [g[:, ::-1], g[::-1, :], g.T, np.rot90(g, 2).T]
    assert syms == [e.reshape(16).tolist() for e in expected]


def test_new_tiles_on_wide_boards():
    rng = make_rng_state(3)
    codes = [17, 0, 16, 0] + [0] * 12
    board = wide_from_codes(codes)
    seen, twos = set(), 0
    for _ in range(4000):
        after = wide_to_codes(py_wide_spawn(board, rng))
        diff = [i for i in range(16) if after[i] != codes[i]]
        assert len(diff) == 1 and codes[diff[0]] == 0 and after[diff[0]] in (1, 2)
        seen.add(diff[0])
        twos += after[diff[0]] == 2
    assert seen == {i for i in range(16) if codes[i] == 0}
    assert 300 < twos < 500
