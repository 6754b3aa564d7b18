"""Positions per second of ``td2048 solve`` (both passes, both aims), compiled code warmed.

    python benchmarks/bench_solve.py                      # 2x3, 2x4 and 3x3 (3x3 takes a few minutes)
    python benchmarks/bench_solve.py --boards 2x3,2x4 --game 2048

Each board is solved once after a warm-up solve of 2x2 (which compiles or loads the kernels); the
script prints, per board, the positions, the forward and backward seconds, positions per second and the
peak memory of the process so far.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="2x3,2x4,3x3", help="comma-separated boards (default 2x3,2x4,3x3)")
    parser.add_argument("--game", default="2048", choices=("2048", "2584"))
    args = parser.parse_args(argv)

    from td2048.solve import solve
    from td2048.solve.induction import backward
    from td2048.solve.layers import Rules, enumerate_layers

    solve("2x2", args.game)  # compiles or loads the kernels
    print(f"{'board':>6} {'positions':>12} {'forward s':>10} {'backward s':>11} {'positions/s':>12} {'peak MiB':>9}")
    for board in args.boards.split(","):
        rules = Rules(board, args.game)
        started = time.perf_counter()
        layers = enumerate_layers(rules)
        forward = time.perf_counter() - started
        backward(rules, layers, layers.top_code + 1)
        total = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 if sys.platform == "darwin" else 1 / 1024)
        print(f"{board:>6} {layers.positions:>12,} {forward:>10.2f} {total - forward:>11.2f} "
              f"{layers.positions / total:>12,.0f} {peak / 2**20:>9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
