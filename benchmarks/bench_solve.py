"""Positions per second, and per second per core, of ``td2048 solve`` (both passes, both aims), compiled code warmed.

    python benchmarks/bench_solve.py                      # 2x3, 2x4 and 3x3 (3x3 takes under a minute)
    python benchmarks/bench_solve.py --boards 2x3,2x4 --game 2584 --threads 1

Each board is solved once after a warm-up solve of 2x2 (which compiles or loads the kernels), its layers'
keys in a temporary file as ``td2048 solve`` keeps them; the script prints, per board, the positions, the
forward and backward seconds, positions per second, positions per second per core (the threads the passes ran
on: ``--threads``, default every core) and the peak memory of the process so far.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="2x3,2x4,3x3", help="comma-separated boards (default 2x3,2x4,3x3)")
    parser.add_argument("--game", default="2048", choices=("2048", "2584"))
    parser.add_argument("--threads", type=int, default=None, help="threads of both passes (default: every core)")
    args = parser.parse_args(argv)
    if args.threads:
        os.environ["NUMBA_NUM_THREADS"] = str(args.threads)  # read by td2048.threads.solver_threads

    from td2048.solve import solve
    from td2048.solve.induction import backward
    from td2048.solve.layers import LayerStore, Rules, enumerate_layers
    from td2048.threads import solver_threads

    solve("2x2", args.game)  # compiles or loads the kernels
    cores = solver_threads()
    print(f"{'board':>6} {'positions':>12} {'forward s':>10} {'backward s':>11} {'positions/s':>12} "
          f"{'per core':>10} {'peak MiB':>9}   ({cores} thread(s))")
    for board in args.boards.split(","):
        rules = Rules(board, args.game)
        store = LayerStore()
        started = time.perf_counter()
        layers = enumerate_layers(rules, store=store)
        forward = time.perf_counter() - started
        backward(rules, layers, layers.top_code + 1)
        total = time.perf_counter() - started
        store.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 if sys.platform == "darwin" else 1 / 1024)
        rate = layers.positions / total
        print(f"{board:>6} {layers.positions:>12,} {forward:>10.2f} {total - forward:>11.2f} {rate:>12,.0f} "
              f"{rate / cores:>10,.0f} {peak / 2**20:>9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
