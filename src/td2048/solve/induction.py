"""The backward pass: values from the largest tile sum down, and :func:`solve`, the whole solve.

V(s) = max over legal moves a of [r(s, a) + sum over empty cells c and new tiles k of p(c, k)
V(key(after(s, a) + k at c))], one maximum for the expected score and one for each tile's reach. The
layer of sum S needs only the layers S + 2 and S + 4 (2584: S + 1 and S + 2), so only those values, with a
hash index of their keys, are held while it is solved; each layer is valued on every core, then handed on
(to a file being written, or kept when asked) and dropped once no layer left needs it.
"""

from __future__ import annotations

import time

import numpy as np

from td2048.errors import TD2048Error
from td2048.solve.layers import Layers, LayerStore, Rules, enumerate_layers
from td2048.solve.sets import build_index
from td2048.solve.solution import Solution, SolutionWriter, load_solution
from td2048.threads import split_range


def solve(board, game: str = "2048", keep_values: bool = False, out=None, reach: bool = False, on_progress=None,
          workdir=None, endgame=None) -> Solution:
    """Solve a small board exactly: every reachable position's value under perfect play.

    Parameters
    ----------
    board : BoardShape or str
        The board (``"3x3"``, ``"2x4"``).
    game : str
        ``"2048"`` or ``"2584"``.
    keep_values : bool
        Keep every layer's keys and values (all columns) in the returned solution, in memory (small boards).
    out : str or os.PathLike or None
        Write the solution file there as the layers are finished (:class:`SolutionWriter`); the solution
        returned then reads it (memory-mapped).
    reach : bool
        Write each tile's reach probabilities in the file too (by default only the expected scores).
    on_progress : callable or None
        Called as ``on_progress(done, total)`` with the layers done of both passes (``total`` is 0 while
        the forward pass does not know it yet).
    workdir : str or os.PathLike or None
        Where the forward pass keeps the layers' keys until the backward pass reads them (a temporary file,
        deleted at the end; None: beside ``out``, else the system's temporary directory).
    endgame : Endgame or None
        Solve this endgame (:mod:`td2048.solve.endgame`: tiles fixed in place, a tile to build) instead of the
        whole game: each position's one value is then the probability of building the goal.

    Returns
    -------
    Solution
        Its ``expected_score`` and ``reach`` are the start's: the mean over the start positions, each
        weighted by its probability (an endgame's: :attr:`Solution.goal_probability`). Without ``out`` or
        ``keep_values`` it holds only the layers' sizes.
    """
    started = time.perf_counter()
    rules = Rules(board, game, endgame)
    if reach and endgame is not None:
        raise TD2048Error("an endgame's one value is the probability of its goal: it has no reach columns")
    counted = [0]

    def forward(_, __):
        counted[0] += 1
        if on_progress is not None:
            on_progress(counted[0], 0)

    if workdir is None and out is not None:
        from pathlib import Path

        workdir = Path(out).parent
    store = LayerStore(workdir, in_memory=keep_values)
    writer = None
    try:
        layers = enumerate_layers(rules, on_layer=forward, store=store)
        aims = layers.top_code + 1 if endgame is None else 1
        if out is not None:
            writer = SolutionWriter(out, rules.board, game, layers.sums, layers.counts, aims if reach else 1,
                                    aims - 1, endgame)
        values = backward(rules, layers, aims, keep_values, writer.add if writer else None, on_progress)
        start_keys, start_probs, start_sums = rules.start()
        start_values = np.zeros(aims)
        for key, p, s in zip(start_keys, start_probs, start_sums, strict=True):
            i = layers.sums.index(int(s))
            j = int(np.searchsorted(values.start_keys[i], key))
            start_values += p * values.start[i][j]
        if writer is not None:
            writer.finish(start_values)
            writer = None
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        store.close()
    seconds = time.perf_counter() - started
    if out is not None and not keep_values:
        solution = load_solution(out, verify=False, endgame=None)
        solution.seconds = seconds
        return solution
    keys = [layers.keys(i) for i in range(len(layers.sums))] if keep_values else None
    return Solution(rules.board, game, layers.sums, keys, values.kept if keep_values else None, start_values,
                    seconds=seconds, counts=layers.counts, endgame=endgame)


class _Values:
    def __init__(self):
        self.kept: list[np.ndarray | None] = []
        self.start: dict[int, np.ndarray] = {}
        self.start_keys: dict[int, np.ndarray] = {}


def backward(rules: Rules, layers: Layers, aims: int, keep_values: bool = False, on_values=None,
             on_progress=None) -> _Values:
    """The values of every layer, from the largest tile sum down (see :func:`solve`).

    ``on_values(i, keys, values)`` is called with each layer as it is finished."""
    small_step, big_step = rules.tile_steps
    _, _, start_sums = rules.start()
    start_layers = {layers.sums.index(int(s)) for s in start_sums}
    out = _Values()
    out.kept = [None] * len(layers.sums)
    held: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # tile sum: keys, index, values
    nothing = (np.zeros(0, np.uint64), build_index(np.zeros(0, np.uint64)), np.zeros((0, aims)))
    total = 2 * len(layers.sums)
    args = rules.args
    geometry = (args[0], args[4], args[5], args[6], args[7], args[8], args[9])
    shifts = rules.shifts
    for i in range(len(layers.sums) - 1, -1, -1):
        s = layers.sums[i]
        afters = layers.afters(i)
        after_values = np.empty((len(afters), aims))
        small = held.get(s + small_step, nothing)
        big = held.get(s + big_step, nothing)
        missing = sum(split_range(rules.kernels.afterstate_values, len(afters), afters, *geometry, shifts, *small, *big,
                                  after_values))
        keys = layers.keys(i)
        layers.store.release(i)  # read: its disk goes back as the solution's grows
        values = np.empty((len(keys), aims))
        after_index = build_index(afters)
        missing += sum(split_range(rules.kernels.layer_values, len(keys), keys, *args, afters, after_index,
                                   after_values, values, *rules.endgame_args))
        if missing:  # pragma: no cover - a broken forward pass
            raise TD2048Error(f"the layer of tile sum {s} has {missing} children that no layer holds")
        for t in [t for t in held if t > s + small_step]:
            del held[t]  # the layers still to solve lie below S: their children lie at most at S + small_step
        held[s] = (keys, build_index(keys), values)
        if on_values is not None:
            on_values(i, keys, values)
        if keep_values:
            out.kept[i] = values
        if i in start_layers:
            out.start[i] = values
            out.start_keys[i] = keys
        if on_progress is not None:
            on_progress(len(layers.sums) + len(layers.sums) - i, total)
    return out
