"""On paper: wall time to a number of training moves on K nodes, from measured sync costs (docs/benchmarks/scaling.md).

    python benchmarks/project_scaling.py                                 # 4x6, TC, the page's figures
    python benchmarks/project_scaling.py --curve 1e6:1.0e6 16e6:3.5e6 64e6:5.7e6 --weights 67108864

A projection, not a measurement. Inputs (each an option, the defaults being the page's measured figures and
stated assumptions): the node's training speed S (moves/s), the curve of weights changed against moves made
since the last sync (``--curve MOVES:CHANGED ...``, from benchmarks/sync_cost.py), the network's weights N, the
bytes per changed weight, the network's bandwidth, and a sync's compute (the scan's seconds, seconds per change
merged, seconds per merged weight written). For K nodes syncing every T seconds: a node's changes C = curve(S T),
all the nodes' changes M = min(N, curve(K S T)), bytes per node per sync 16 (C + M), a sync's seconds = scan +
C x merge + M x write + bytes / bandwidth (a worker merges its range, about C changes from all the workers, on
its threads), and the speed K S T / (T + sync). One node needs no sync.
"""

from __future__ import annotations

import argparse
import math
import sys


def changed(curve: list[tuple[float, float]], moves: float) -> float:
    """Weights changed after ``moves`` moves: log-linear between the curve's points, the last slope beyond."""
    points = sorted(curve)
    if moves <= points[0][0]:
        return points[0][1] * moves / points[0][0]
    for (m0, c0), (m1, c1) in zip(points, points[1:]):
        if moves <= m1 or (m1, c1) == points[-1]:
            slope = math.log(c1 / c0) / math.log(m1 / m0)
            return c0 * (moves / m0) ** slope
    return points[-1][1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speed", type=float, default=27e6, help="a node's training moves/s (default 27M)")
    p.add_argument("--curve", nargs="+", default=["1e6:1004872", "4e6:1892601", "16e6:3492976", "64e6:5957375"],
                   help="MOVES:CHANGED points of the changed-weights curve")
    p.add_argument("--weights", type=float, default=4 * 16**6, help="the network's weights N (default 4x6)")
    p.add_argument("--bytes", type=float, default=16, help="bytes per changed weight (16 with TC)")
    p.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes/s each way per node (default 10 Gb/s)")
    p.add_argument("--scan", type=float, default=0.05, help="seconds of a sync's scan on a node (default 0.05)")
    p.add_argument("--merge", type=float, default=8e-9,
                   help="seconds per change merged (default 8 ns: 65 ns on one thread, over 16 at half efficiency)")
    p.add_argument("--write", type=float, default=3e-9, help="seconds per merged weight written (default 3 ns)")
    p.add_argument("--moves", type=float, default=1e11, help="training moves to make (default 1e11)")
    p.add_argument("--nodes", nargs="+", type=int, default=[1, 8, 64])
    p.add_argument("--sync-every", nargs="+", type=float, default=[1.0, 10.0])
    args = p.parse_args()
    curve = [tuple(float(v) for v in point.split(":")) for point in args.curve]

    print("| nodes | sync every | changes per node per sync (C) | all nodes' changes (M) | bytes per node per "
          "sync | seconds per sync | time syncing | moves/s | time to 10^11 moves |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in args.nodes:
        for t in ([None] if k == 1 else args.sync_every):
            if t is None:
                speed = args.speed
                row = "| 1 | no sync | | | | | 0% |"
            else:
                c = min(args.weights, changed(curve, args.speed * t))
                m = min(args.weights, changed(curve, k * args.speed * t))
                volume = args.bytes * (c + m)
                sync = args.scan + c * args.merge + m * args.write + volume / args.bandwidth
                speed = k * args.speed * t / (t + sync)
                row = (f"| {k} | {t:g} s | {c / 1e6:.1f}M | {m / 1e6:.1f}M | {volume / 1e6:,.0f} MB | {sync:.2f} | "
                       f"{sync / (t + sync):.0%} |")
            seconds = args.moves / speed
            when = f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"
            print(f"{row} {speed / 1e6:,.0f}M | {when} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
