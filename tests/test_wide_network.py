"""Networks on 5-bit boards (2584): clamped indices, symmetric values, TD updates (training: test_wide_training.py)."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048.games.wide import py_wide_symmetries, wide_from_codes, wide_to_codes
from td2048.network import Network, parse_network

codes16 = st.lists(st.integers(0, 25), min_size=16, max_size=16)


def clamped_index(codes, cells, clamp):
    return sum(min(codes[c], clamp) * (clamp + 1) ** i for i, c in enumerate(cells))


@functools.cache
def clamped_network() -> Network:
    """Built once: its tables take 450 MB, too many to allocate per example."""
    return Network(parse_network("012345,45689a,3c", clamp=21), game="2584")


@settings(max_examples=150)
@given(codes16)
def test_clamped_indices_match_reference(codes):
    net = clamped_network()
    spec = net.spec
    board = wide_from_codes(codes)
    syms = [wide_to_codes(s) for s in py_wide_symmetries(board)]
    expected = [off + clamped_index(s, cells, 21) for s in syms for cells, off in zip(spec.tuples, spec.table_offsets)]
    assert net.feature_indices(board).tolist() == expected
    assert spec.table_sizes == [22**6, 22**6, 22**2]


@settings(max_examples=60)
@given(codes16)
def test_value_equal_on_symmetric_wide_boards(codes):
    net = Network(parse_network(FIB_NETWORK, clamp=FIB_CLAMP), game="2584")
    net.weights[:] = np.random.default_rng(1).standard_normal(net.weights.size).astype(np.float32)
    values = [net.value(s) for s in py_wide_symmetries(wide_from_codes(codes))]
    assert max(values) - min(values) < 1e-9 * max(1.0, abs(values[0]))


def test_td_update_on_a_wide_board():
    net = Network(parse_network(FIB_NETWORK, clamp=FIB_CLAMP), game="2584")
    board = wide_from_codes([1, 2, 3, 0, 5, 8, 0, 0, 17, 0, 0, 1, 0, 0, 2, 0])
    indices = net.feature_indices(board)
    assert len(set(indices.tolist())) == 16
    v1 = net.td_update(board, 1000.0, 0.1)
    step = np.float32(0.1 / 16 * 1000.0)
    assert (net.weights[indices] == step).all() and v1 == pytest.approx(16 * float(step))
