"""Side by side: td2048 and a reference program (TDL2048+) on the same work, interleaved.

    python benchmarks/compare.py --reference /tmp/tdl/2048            # 2x4 8x4 4x5 4x6 8x6, 1 and 2 threads
    python benchmarks/compare.py --reference /tmp/tdl/2048 /tmp/tdl-nobmi2/2048 --networks 4x6 --threads 1 --rounds 5
    python benchmarks/compare.py                                       # td2048's figures only
    python benchmarks/compare.py --reference /tmp/tdl/2048 --networks 4x6 --weights run/model.td2048  # trained

The work: a network trained from zero weights for --episodes episodes, then played (no learning) for
as many; training moves/s and testing moves/s of each program. td2048 runs `td2048 bench --episodes N`
in a fresh process; the reference runs `2048 -n NAMEpatt -t T x N/T -e T x N/T -% -s SEED [-p T]`, so
that each of its T workers gets one equal block. Rounds alternate which program goes first, so
that the drift of a shared machine falls on both; each figure is the median over rounds, with the
range, and each ratio is td2048 / reference per round (median and range). Timings depend on the
machine and the hour: only ratios measured in one run mean anything.

--update picks the training rule, the same in both programs: `forward` is td2048's `--update forward`
against TDL2048+'s `-tt forward` (online TD(0); the afterstate's value is read again when it is updated),
`backward` (td2048's default) against `-tt backward`; `both` measures both. `forward-default` pairs td2048's
`--update forward` with TDL2048+'s default mode (`optimize`), a cheaper rule: it updates with the value the
afterstate had when it was chosen, before the last update moved it, and so reads its weights once instead of
twice; `all` measures the three.

--weights MODEL starts both from a trained model instead of zero weights (TDL2048+ reads it converted
by `td2048 convert` to its .w format, with -i): a trained player's games are long and reach the boards
of a long run, whose weights the two threads of a shared table write less often at once than the
first games' few boards.

--tc trains with temporal coherence in both (TDL2048+'s `-a 1.0 coherence`); with threads, both
write one shared table without locks.

The reference is not part of td2048: build TDL2048+ from its own source with its own makefile and
point --reference at the `2048` binary it makes. Give both of its builds (`make` and `make BMI2=no`, whose
speeds differ by CPU) as `--reference A B`: every round runs each, and the ratios are against the faster build
of that round (training and testing each).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

REFERENCE_NAMES = {"2x4": "2x4patt", "8x4": "8x4patt", "4x5": "4x5patt", "4x6": "4x6patt", "5x6": "5x6patt",
                   "6x6": "6x6patt", "7x6": "7x6patt", "8x6": "8x6patt"}
# --update: (td2048's --update, TDL2048+'s options)
UPDATES = {"forward": ("forward", ["-tt", "forward"]), "backward": ("backward", ["-tt", "backward"]),
           "forward-default": ("forward", [])}
SUMMARY = re.compile(r"^summary\s+\d+ms\s+([0-9.]+)ops", re.MULTILINE)


def run_td2048(network: str, episodes: int, threads: int, update: str, seed: int,
               tc: bool = False, weight_bits: int = 32, weights: str | None = None) -> tuple[float, float]:
    cmd = [sys.executable, "-m", "td2048.cli", "bench", "--network", network, "--episodes", str(episodes),
           "--threads", str(threads), "--update", UPDATES[update][0], "--seed", str(seed), "--json",
           "--weight-bits", str(weight_bits)]
    if tc:
        cmd.append("--tc")
    if weights:
        cmd += ["--weights", weights]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    return result["train_moves_per_s"], result["test_moves_per_s"]


def run_reference(binary: str, network: str, episodes: int, threads: int, update: str,
                  seed: int, tc: bool = False, weights: str | None = None) -> tuple[float, float]:
    blocks = f"{threads}x{episodes // threads}"  # one equal block per worker
    cmd = [binary, "-n", REFERENCE_NAMES[network], "-t", blocks, "-e", blocks, "-%", "-s", str(seed)]
    if threads > 1:
        cmd += ["-p", str(threads)]
    cmd += UPDATES[update][1]
    if tc:
        cmd += ["-a", "1.0", "coherence"]
    if weights:
        cmd += ["-i", weights]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    speeds = [float(x) for x in SUMMARY.findall(out.stdout)]
    if len(speeds) != 2:
        raise SystemExit(f"compare.py: no train and test summary in the output of {' '.join(cmd)}")
    return speeds[0], speeds[1]


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    return f"{model}, {os.cpu_count()} cores, {datetime.date.today().isoformat()}"


def spread(values: list[float], scale: float = 1.0, fmt: str = "{:.2f}") -> str:
    """The median, then the range in brackets."""
    med, lo, hi = statistics.median(values) / scale, min(values) / scale, max(values) / scale
    return f"{fmt.format(med)} ({fmt.format(lo)}-{fmt.format(hi)})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reference", metavar="PATH", nargs="+",
                   help="TDL2048+ `2048` binaries built from its source (both builds: each round runs each, and "
                        "the faster is the round's reference)")
    p.add_argument("--networks", nargs="+", default=["2x4", "8x4", "4x5", "4x6", "8x6"], choices=REFERENCE_NAMES)
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--update", choices=(*UPDATES, "both", "all"), default="both")
    p.add_argument("--episodes", type=int, default=6000, help="episodes of training, then of testing (default 6000)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tc", action="store_true",
                   help="train with temporal coherence in both: td2048's --tc, TDL2048+'s -a 1.0 coherence")
    p.add_argument("--weight-bits", nargs="+", type=int, choices=(32, 16), default=[32],
                   help="td2048's weights: 32 (default), 16, or both (each round runs each; a row for each)")
    p.add_argument("--weights", metavar="MODEL",
                   help="start both programs from this trained .td2048 model (one network: give it alone in "
                        "--networks) instead of zero weights: the long games of a trained player, as in a long run")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        return compare(args, _reference_weights(args, scratch))


def _reference_weights(args: argparse.Namespace, scratch: str) -> str | None:
    """--weights as a TDL2048+ weight file (td2048 convert), for the reference's -i; None without --weights."""
    if not args.weights:
        return None
    if args.tc or len(args.networks) != 1:
        raise SystemExit("compare.py: --weights takes one network in --networks (the model's), and no --tc")
    converted = os.path.join(scratch, "weights.w")
    subprocess.run([sys.executable, "-m", "td2048.cli", "convert", args.weights, converted], check=True,
                   capture_output=True, text=True)
    return converted


def compare(args: argparse.Namespace, reference_weights: str | None) -> int:
    """The interleaved rounds and the table (see the module's docstring)."""
    bits = args.weight_bits
    updates = {"both": ["forward", "backward"], "all": list(UPDATES)}.get(args.update, [args.update])
    cases = [(n, t, u) for n in args.networks for t in args.threads for u in updates]
    figures = {case: {"ref": [], **{f"td{b}": [] for b in bits}} for case in cases}
    start = f"from {os.path.basename(args.weights)}" if args.weights else "from zero"
    print(f"# {machine()}; {args.episodes} episodes trained {start}, then {args.episodes} tested; "
          f"{args.rounds} rounds{'; TC' if args.tc else ''}", flush=True)
    for r in range(args.rounds):
        for case in cases:
            network, threads, update = case
            seed = args.seed + r
            runs = [(f"td{b}", run_td2048, (network, args.episodes, threads, update, seed, args.tc, b,
                                            args.weights)) for b in bits]
            for k, binary in enumerate(args.reference or []):
                runs.append((f"ref{k}", run_reference, (binary, network, args.episodes, threads, update, seed,
                                                        args.tc, reference_weights)))
            if r % 2:
                runs.reverse()
            got = {who: call(*call_args) for who, call, call_args in runs}
            for b in bits:
                figures[case][f"td{b}"].append(got[f"td{b}"])
            builds = [got[f"ref{k}"] for k in range(len(args.reference or []))]
            if builds:  # the faster build of the round, in training and in testing
                figures[case]["ref"].append((max(b[0] for b in builds), max(b[1] for b in builds)))
            line = " ".join(f"{who} {tr / 1e6:.2f}M/{te / 1e6:.2f}M" for who, (tr, te) in sorted(got.items()))
            print(f"# round {r + 1}: {network} {threads} thread(s) {update}: {line}", file=sys.stderr, flush=True)

    header = "| network | threads | training | weights | td2048 train / test moves/s (M) |"
    rule = "|---|---|---|---|---|"
    if args.reference:
        header += " TDL2048+ train / test (M) | ratio train | ratio test |"
        rule += "---|---|---|"
    print(header)
    print(rule)
    for case in cases:
        network, threads, update = case
        for b in bits:
            td = figures[case][f"td{b}"]
            row = f"| {network} | {threads} | {update} | {b}-bit | {spread([t for t, _ in td], 1e6)} / " \
                  f"{spread([s for _, s in td], 1e6)} |"
            if args.reference:
                ref = figures[case]["ref"]
                row += f" {spread([t for t, _ in ref], 1e6)} / {spread([s for _, s in ref], 1e6)} |"
                row += f" {spread([a[0] / r[0] for a, r in zip(td, ref)])} |"
                row += f" {spread([a[1] / r[1] for a, r in zip(td, ref)])} |"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
