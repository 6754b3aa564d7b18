"""The backward pass: values from the largest tile sum down, and :func:`solve`, the whole solve.

V(s) = max over legal moves a of [r(s, a) + sum over empty cells c and new tiles k of p(c, k)
V(key(after(s, a) + k at c))], one maximum for the expected score and one for each tile's reach. The
layer of sum S needs only the layers S + 2 and S + 4 (2584: S + 1 and S + 2), so only those values are
held while it is solved; the values of finished layers go to ``on_values`` (a file being written) or
are kept when asked.
"""

from __future__ import annotations

import time

import numpy as np

import td2048.solve.kernels as kernels
from td2048.errors import TD2048Error
from td2048.solve.layers import Layers, Rules, enumerate_layers
from td2048.solve.solution import Solution
from td2048.threads import split_range


def solve(board, game: str = "2048", keep_values: bool = False, on_values=None, on_progress=None) -> Solution:
    """Solve a small board exactly: every reachable position's value under perfect play.

    Parameters
    ----------
    board : BoardShape or str
        The board (``"3x3"``, ``"2x4"``).
    game : str
        ``"2048"`` or ``"2584"``.
    keep_values : bool
        Keep every layer's values in the returned solution (else only the keys, and the start's values).
    on_values : callable or None
        Called as ``on_values(layer_index, values)`` for each layer, from the largest tile sum down.
    on_progress : callable or None
        Called as ``on_progress(done, total)`` with the layers done of both passes (``total`` is 0 while
        the forward pass does not know it yet).

    Returns
    -------
    Solution
        Its ``expected_score`` and ``reach`` are the start's: the mean over the start positions, each
        weighted by its probability.
    """
    started = time.perf_counter()
    rules = Rules(board, game)
    counted = [0]

    def forward(_, __):
        counted[0] += 1
        if on_progress is not None:
            on_progress(counted[0], 0)

    layers = enumerate_layers(rules, on_layer=forward)
    aims = layers.top_code + 1
    values = backward(rules, layers, aims, keep_values, on_values, on_progress)
    start_keys, start_probs, start_sums = rules.start()
    start_values = np.zeros(aims)
    for key, p, s in zip(start_keys, start_probs, start_sums, strict=True):
        i = layers.sums.index(int(s))
        j = int(np.searchsorted(layers.keys[i], key))
        start_values += p * values.start[i][j]
    return Solution(rules.board, game, layers.sums, layers.keys, values.kept if keep_values else None,
                    start_values, seconds=time.perf_counter() - started)


class _Values:
    def __init__(self):
        self.kept: list[np.ndarray | None] = []
        self.start: dict[int, np.ndarray] = {}


def backward(rules: Rules, layers: Layers, aims: int, keep_values: bool = False, on_values=None,
             on_progress=None) -> _Values:
    """The values of every layer, from the largest tile sum down (see :func:`solve`)."""
    small_step, big_step = rules.tile_steps
    _, _, start_sums = rules.start()
    start_layers = {layers.sums.index(int(s)) for s in start_sums}
    out = _Values()
    out.kept = [None] * len(layers.sums)
    held: dict[int, np.ndarray] = {}
    empty_keys = np.zeros(0, np.uint64)
    empty_values = np.zeros((0, aims))
    total = 2 * len(layers.sums)
    for i in range(len(layers.sums) - 1, -1, -1):
        s = layers.sums[i]
        keys = layers.keys[i]
        values = np.empty((len(keys), aims))
        small_keys, small_values = _layer(layers, held, s + small_step, empty_keys, empty_values)
        big_keys, big_values = _layer(layers, held, s + big_step, empty_keys, empty_values)
        missing = sum(split_range(kernels.layer_values, len(keys), keys, *rules.args, small_keys, small_values,
                                  big_keys, big_values, values))
        if missing:  # pragma: no cover - a broken forward pass
            raise TD2048Error(f"the layer of tile sum {s} has {missing} children that no layer holds")
        held[s] = values
        for t in [t for t in held if t >= s + big_step]:
            del held[t]  # the layers still to solve lie below S: their children lie below S + big_step
        if on_values is not None:
            on_values(i, values)
        if keep_values:
            out.kept[i] = values
        if i in start_layers:
            out.start[i] = values
        if on_progress is not None:
            on_progress(len(layers.sums) + len(layers.sums) - i, total)
    return out


def _layer(layers: Layers, held, tile_sum, empty_keys, empty_values):
    keys = layers.layer(tile_sum)
    if keys is None:
        return empty_keys, empty_values
    return keys, held[tile_sum]
