"""Core speed benchmark: medians of several `td2048 bench` runs, each in a fresh process.

    python benchmarks/bench_core.py                      # 4x6, 5 runs of 5 s
    python benchmarks/bench_core.py --networks 8x4 4x6 8x6 --runs 3 --seconds 3
    python benchmarks/bench_core.py --weights runs/4x6/weights.npz

Prints moves/s of training and testing (single thread). Not a test: figures depend on the
machine and the hour (2-4x between machines of one class); for ratios against TDL2048+ measured
beside td2048, run benchmarks/compare.py.
"""

import argparse
import json
import statistics
import subprocess
import sys


def one_run(network, seconds, weights, update):
    cmd = [sys.executable, "-m", "td2048.cli", "bench", "--json", "--seconds", str(seconds), "--update", update]
    cmd += ["--weights", weights] if weights else ["--network", network]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--networks", nargs="+", default=["4x6"])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--weights", default=None, help="benchmark from a trained weight file instead")
    p.add_argument("--update", default="backward", choices=("backward", "forward"))
    args = p.parse_args()
    networks = [None] if args.weights else args.networks
    print(f"{'network':<12}{'train moves/s':>15}{'test moves/s':>15}   runs (train)")
    for network in networks:
        results = [one_run(network, args.seconds, args.weights, args.update) for _ in range(args.runs)]
        train = statistics.median(r["train_moves_per_s"] for r in results)
        test = statistics.median(r["test_moves_per_s"] for r in results)
        name = results[0]["network"] + ("*" if args.weights else "")
        runs = " ".join(f"{r['train_moves_per_s'] / 1e6:.2f}M" for r in results)
        print(f"{name:<12}{train:>15,.0f}{test:>15,.0f}   {runs}", flush=True)
    if args.weights:
        print(f"* from trained weights {args.weights}")


if __name__ == "__main__":
    main()
