"""TC's memory layout on threads: each weight's two accumulators in an array of their own, or beside the weight.

    python benchmarks/tc_layout.py                           # 1 and 2 threads, 3 rounds
    python benchmarks/tc_layout.py --threads 1 2 4 8 16      # on a machine of 16 cores

td2048's TC kernels keep the weights in one array and the accumulators (E, A per weight) in another, so an
update writes two cache lines per feature; TDL2048+ keeps a weight and its accumulators side by side in one
struct. On one shared table written by many threads, every line an update writes is taken from the cores
that hold it: one line a feature against two may matter there. This script measures that alone, before
anything of td2048 changes: the same stream of TC moves run on both layouts by 1..N threads at once,
lock-free on one table, as td2048's TC threads run.

The stream: boards of real games (the shipped model's greedy play; each thread plays its own games, so the
threads share the hot weights of the early boards as training threads do), their 4x6 feature indices
computed by td2048's kernels. Each move reads four boards' values (the candidate afterstates of a move:
this board and the next three of the same game) and updates the move before by TC's rule, pipelined as
td2048's forward TC kernels are (each move's weights asked for at once, the accumulators of the update a move
ahead, with the prefetches td2048's kernels use for networks of 64 MiB or more). Layouts:

- ``split``: td2048's, ``w[i]`` and ``acc[2i], acc[2i + 1]`` (4 + 8 bytes, two lines);
- ``side``: one array of 4 floats a weight, ``w, E, A, 0`` (16 bytes, one line; 4/3 of the memory);
- ``packed``: one array of 3 floats a weight, TDL2048+'s 12-byte struct (one line but for 1 weight in 16).

It prints moves per second per layout and thread count (medians of interleaved rounds) and each layout
against ``split``. Only ratios measured in one run mean anything.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from numba import njit

import td2048
from td2048.kernels.merge import prefetch_far
from td2048.models import shipped_model
from td2048.network import fresh_accumulators
from td2048.threads import run_threads

CANDIDATES = 4  # boards whose values a move reads: this one and the next three


@njit(nogil=True, cache=True)
def _value(w, feats, r, stride):
    v = 0.0
    for f in range(feats.shape[1]):
        v += w[stride * feats[r, f]]
    return v


@njit(nogil=True, cache=True)
def _ask(w, feats, r, stride):
    for f in range(feats.shape[1]):
        prefetch_far(w, stride * feats[r, f])


@njit(nogil=True, cache=True)
def tc_moves(w, stride, acc, acc_stride, acc_at, feats, lo, hi, alpha):
    """TC moves on rows lo..hi of ``feats``: weight i at ``w[stride * i]``, its accumulators at
    ``acc[acc_stride * i + acc_at]`` and the next float (``acc`` may be ``w``). Pipelined as td2048's forward TC
    kernels are: the candidates' weights asked for, then the update of the move before (its accumulators asked
    for one move earlier, when they are not on the weight's line), then the candidates' values."""
    n_features = feats.shape[1]
    own_lines = acc_stride != stride  # the accumulators are not on the weight's cache line
    total = 0.0
    pending = -1
    target = 0.0
    for r in range(lo, hi - CANDIDATES):
        for k in range(CANDIDATES):
            _ask(w, feats, r + k, stride)
        if pending >= 0:
            u = np.float32(alpha * (target - _value(w, feats, pending, stride)) / n_features)
            au = abs(u)
            for f in range(n_features):
                i = feats[pending, f]
                j = acc_stride * i + acc_at
                w[stride * i] += u * (abs(acc[j]) / acc[j + 1])
                acc[j] += u
                acc[j + 1] += au
        best = _value(w, feats, r, stride)
        for k in range(1, CANDIDATES):
            best = max(best, _value(w, feats, r + k, stride))
        pending, target = r, 0.9 * best + 1.0
        if own_lines:
            _ask(acc, feats, r, acc_stride)
        total += best
    return total


def game_boards(games: int, seed: int) -> list[list[int]]:
    """The afterstates of ``games`` greedy games of the shipped model, game by game."""
    agent = td2048.Agent(td2048.load(shipped_model()), seed=seed)
    values = np.zeros(4)
    out = []
    for g in range(games):
        agent.start_game(g)
        board = agent.spawn(agent.spawn(agent.empty_board))
        boards = []
        while True:
            d, _, after, board = agent.step(board, values)
            if d < 0 or isinstance(after, tuple):
                break
            boards.append(after)
        out.append(boards)
    return out


def feature_rows(network, boards: list[int]) -> np.ndarray:
    """``uint64[len(boards), features]``: each board's weight indices."""
    out = np.zeros((len(boards), network.spec.n_features), np.uint64)
    for r, b in enumerate(boards):
        network.kernels.feature_indices(np.uint64(b), out, r)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--games", type=int, default=16, help="games of boards per thread (default 16)")
    p.add_argument("--passes", type=int, default=10, help="times each thread plays its moves in a timing (default 10)")
    p.add_argument("--network", default="4x6")
    p.add_argument("--layouts", nargs="+", default=["split", "side", "packed"])
    args = p.parse_args()

    network = td2048.Network(td2048.parse_network(args.network))
    n = network.weights.size
    most = max(args.threads)
    t0 = time.perf_counter()
    streams = [feature_rows(network, [b for game in game_boards(args.games, seed) for b in game])
               for seed in range(most)]
    print(f"# {args.network}: {n:,} weights; {args.games} games a thread, {len(streams[0]):,} moves on thread 0 "
          f"({time.perf_counter() - t0:.0f} s to play them)", file=sys.stderr)
    fresh = fresh_accumulators(n)
    tables = {}
    for layout in args.layouts:
        if layout == "split":  # (weights, stride, accumulators, their stride, offset)
            tables[layout] = (np.zeros(n, np.float32), 1, fresh.copy(), 2, 0)
        else:
            stride = 4 if layout == "side" else 3
            t = np.zeros(n * stride, np.float32)
            t[1::stride] = fresh[0::2]
            t[2::stride] = fresh[1::2]
            tables[layout] = (t, stride, t, stride, 1)

    def run(layout: str, threads: int, passes: int = args.passes) -> float:
        table = tables[layout]
        moves = [0] * threads

        def work(k):
            feats = streams[k]
            for _ in range(passes):
                tc_moves(*table, feats, 0, len(feats), 0.1)
            moves[k] = passes * (len(feats) - CANDIDATES)

        start = time.perf_counter()
        run_threads(threads, work)
        return sum(moves) / (time.perf_counter() - start)

    for layout in args.layouts:  # compile, and touch the pages: the same moves on one thread, the same weights
        run(layout, 1, 1)
    weights = {layout: tables[layout][0][::tables[layout][1]] for layout in args.layouts}
    assert all(np.array_equal(weights[layout], weights[args.layouts[0]]) for layout in args.layouts)
    speeds = {(layout, t): [] for layout in args.layouts for t in args.threads}
    for r in range(args.rounds):
        order = args.layouts if r % 2 == 0 else args.layouts[::-1]
        for t in args.threads:
            for layout in order:
                speeds[layout, t].append(run(layout, t))
        print(f"# round {r + 1} done", file=sys.stderr, flush=True)

    print(f"# TC moves per second (4 value reads and one TC update of {network.spec.n_features} features each), "
          f"medians of {args.rounds} interleaved rounds")
    print("| threads | " + " | ".join(args.layouts) + " | " +
          " | ".join(f"{layout} / split" for layout in args.layouts if layout != "split") + " |")
    print("|---|" + "---|" * (2 * len(args.layouts) - 1))
    for t in args.threads:
        med = {layout: statistics.median(speeds[layout, t]) for layout in args.layouts}
        base = med.get("split")
        cells = [f"{med[layout] / 1e6:.2f}M" for layout in args.layouts]
        ratios = [f"{med[layout] / base:.2f}x" if base else "" for layout in args.layouts if layout != "split"]
        print(f"| {t} | " + " | ".join(cells + ratios) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
