"""Training on Ray workers against training on threads, side by side, and what the workers' syncs cost.

    python benchmarks/bench_ray_train.py                         # 4x6 TC, 30,000 episodes, 2 rounds
    python benchmarks/bench_ray_train.py --sync-every 0.25 1     # a Ray run for each sync interval
    python benchmarks/bench_ray_train.py --network 8x6 --episodes 10000 --rounds 1 --no-threads
    python benchmarks/bench_ray_train.py --workers 4 --worker-threads 4      # on a machine of 16 cores

Starts a Ray cluster of K nodes on this machine (--workers K, default 2; T CPUs each, --worker-threads T,
default 1: each worker lands on a node of its own, and the workers talk through the object store as nodes
do), then runs, interleaved round by round, the same training twice: ``td2048 train --ray ADDRESS --workers K
--threads T`` and ``td2048 train --threads K*T``. For each it prints episodes per second (over the blocks
after the first, which may include compiling), the average score of the blocks at equal episodes (the
learning curve, every --every episodes), and for the Ray run what its syncs cost: syncs, seconds per sync,
changed weights and bytes moved per sync, block by block (the log's ``syncs``, ``sync_s`` and ``sync_bytes``).
Timings depend on the machine and the hour: only figures measured in one run mean anything.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def train(out: Path, network: str, episodes: int, seed: int, extra: list[str]) -> list[dict]:
    cmd = [sys.executable, "-m", "td2048.cli", "train", "--network", network, "--episodes", str(episodes),
           "--seed", str(seed), "--out", str(out), "--quiet", "--snapshot-every", "1h", *extra]
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


def speed(log: list[dict], what: str) -> float:
    """Episodes (``what="episodes"``) or moves per second over the blocks after the first, whose seconds include
    starting the workers and, with an empty Numba cache, compiling the kernels."""
    blocks = log[1:] or log
    done = blocks[-1]["episodes"] - (log[0]["episodes"] if len(log) > 1 else 0) if what == "episodes" else \
        sum(b["moves"] for b in blocks)
    return done / sum(b["seconds"] for b in blocks)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="4x6")
    p.add_argument("--episodes", type=int, default=30_000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--sync-every", type=float, nargs="+", default=[1.0],
                   help="seconds between the Ray workers' syncs; several: a Ray run for each (default 1)")
    p.add_argument("--every", type=int, default=5000, help="episodes between points of the learning curve")
    p.add_argument("--method", nargs="*", default=["--tc", "--update", "forward"],
                   help="training options of both runs (default: --tc --update forward)")
    p.add_argument("--no-threads", action="store_true", help="the Ray runs only (their sync costs)")
    p.add_argument("--keep", metavar="DIR", help="keep the run directories there (default: a temporary folder)")
    p.add_argument("--workers", type=int, default=2, help="Ray workers, each on a node of its own (default 2)")
    p.add_argument("--worker-threads", type=int, default=1,
                   help="threads of each worker, and CPUs of each node (default 1)")
    args = p.parse_args()

    from ray.cluster_utils import Cluster

    k, t = args.workers, args.worker_threads
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": t, "include_dashboard": False})
    for _ in range(k - 1):
        cluster.add_node(num_cpus=t)
    cluster.wait_for_nodes()
    ways = {f"ray, sync {every:g} s": ["--ray", cluster.address, "--workers", str(k), "--threads", str(t),
                                       "--sync-every", str(every)]
            for every in args.sync_every}
    if not args.no_threads:
        ways["threads"] = ["--threads", str(k * t)]
    logs: dict[str, list[list[dict]]] = {way: [] for way in ways}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = args.keep or tmp
            for r in range(args.rounds):
                order = list(ways) if r % 2 == 0 else list(reversed(ways))
                for way in order:
                    name = way.replace(" ", "").replace(",", "-")
                    log = train(Path(tmp) / f"{name}-{r}", args.network, args.episodes, r, [*args.method, *ways[way]])
                    logs[way].append(log)
                    eps = speed(log, "episodes")
                    print(f"# round {r + 1} {way}: {eps:,.0f} episodes/s, last block avg {log[-1]['avg']:,.0f}",
                          file=sys.stderr, flush=True)
    finally:
        cluster.shutdown()

    print(f"# {args.network}, {' '.join(args.method)}, {args.episodes} episodes, {args.rounds} round(s), "
          f"seeds 0..{args.rounds - 1}; Ray: {k} workers of {t} thread(s) on {k} nodes of {t} CPU(s)")
    print("| way | episodes/s | moves/s | " + " | ".join(f"avg at {e:,}" for e in
                                                        range(args.every, args.episodes + 1, args.every)) + " |")
    print("|---|---|---|" + "---|" * (args.episodes // args.every))
    rows = {}
    for way, runs in logs.items():
        eps = statistics.median(speed(log, "episodes") for log in runs)
        mps = statistics.median(speed(log, "moves") for log in runs)
        points = []
        for e in range(args.every, args.episodes + 1, args.every):
            # the mean over rounds of the average of the blocks in (e - every, e]
            per_run = [statistics.mean(b["avg"] for b in log if e - args.every < b["episodes"] <= e) for log in runs]
            points.append(statistics.mean(per_run))
        rows[way] = (eps, mps, points)
        print(f"| {way} | {eps:,.0f} | {mps / 1e6:.2f}M | " + " | ".join(f"{x:,.0f}" for x in points) + " |")
    if "threads" in rows:
        eps0, mps0, points0 = rows["threads"]
        for way, (eps, mps, points) in rows.items():
            if way != "threads":
                print(f"| {way} / threads | {eps / eps0:.2f}x | {mps / mps0:.2f}x | " +
                      " | ".join(f"{x / x0:.2f}" for x, x0 in zip(points, points0)) + " |")

    print("\n| Ray run, all rounds | syncs per round | s per sync (median of the rounds) | "
          "episodes per worker per sync |")
    print("|---|---|---|---|")
    for way in (w for w in logs if w.startswith("ray")):
        syncs = [sum(b["syncs"] for b in log[1:]) for log in logs[way]]  # past the first block (starting, compiling)
        seconds = [sum(b["sync_s"] for b in log[1:]) / max(n, 1) for n, log in zip(syncs, logs[way])]
        played = [log[-1]["episodes"] - log[0]["episodes"] for log in logs[way]]
        print(f"| {way} | {statistics.mean(syncs):,.0f} | {statistics.median(seconds):.3f} | "
              f"{statistics.mean(e / max(n, 1) / k for e, n in zip(played, syncs)):,.0f} |")

    print("\n| Ray run (first round), episodes | syncs | s per sync | of which list / merge / write | weights changed "
          "per sync, per worker | merged weights per sync | bytes moved per sync |")
    print("|---|---|---|---|---|---|---|")
    for way in (w for w in logs if w.startswith("ray")):
        log = logs[way][0]
        for e in range(args.every, args.episodes + 1, args.every):
            blocks = [b for b in log if e - args.every < b["episodes"] <= e]
            syncs = sum(b["syncs"] for b in blocks)
            if not syncs:
                print(f"| {way}: {e:,} | 0 | | | | | |")
                continue
            moved = sum(b["sync_bytes"] for b in blocks) / syncs
            seconds = sum(b["sync_s"] for b in blocks) / syncs
            changed = sum(b["sync_changed"] for b in blocks) / syncs / k
            merged = sum(b["sync_merged"] for b in blocks) / syncs
            steps = " / ".join(f"{sum(b['sync_steps_s'][i] for b in blocks) / syncs:.3f}" for i in range(3))
            print(f"| {way}: {e:,} | {syncs} | {seconds:.3f} | {steps} | {changed:,.0f} | {merged:,.0f} | "
                  f"{moved / 1e6:.1f} MB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
