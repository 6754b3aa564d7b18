"""Which learner reaches perfect play, and what the network can hold: the runs of the research page's
"Learning perfect play" section, on one solved board.

    td2048 solve --board 2x3 --out 2x3.solution
    python benchmarks/perfect_learning.py --board 2x3 --solution 2x3.solution --out runs/learning --episodes 1000000
    python benchmarks/perfect_learning.py --board 2x3 --solution 2x3.solution --out runs/learning --report \\
        --plot docs/images/perfect-learning-2x3.png

Each run is one ``td2048 train --board B ... --exact SOLUTION`` (one thread, seed 1), its greedy policy valued
exactly every ``--every`` blocks; a run whose log is complete is not run again. The report prints a Markdown
table: per run, its exact gap to perfect play at the end, the smallest, the episodes and training minutes
(the block times: valuations not counted) to come within 1% and 0.01%; ``--plot`` draws every run's gap
against episodes on log axes fitted to the data.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

# board -> (label, options): the learners compared, and the distilled bound (--teacher: not a learner)
RUNS = {
    "2x3": [
        ("TD(0), whole board", ("--network", "1x6")),
        ("explore const:0.05", ("--network", "1x6", "--explore", "const:0.05")),
        ("OTD then TC", ("--network", "1x6", "--optimistic", "1000", "--tc-from", "50%")),
        ("state values, OTD", ("--network", "1x6", "--method", "state", "--optimistic", "1000")),
        ("expected, forward (recipe)", ("--network", "1x6", "--target", "expected", "--alpha", "1",
                                        "--optimistic", "1000", "--update", "forward")),
        ("expected, backward", ("--network", "1x6", "--target", "expected", "--alpha", "1", "--optimistic", "1000",
                                "--update", "backward")),
        ("distilled (bound)", ("--network", "1x6", "--alpha", "1", "--teacher", "SOLUTION")),
    ],
    "2x4": [
        ("TD(0), 2x6 (recipe)", ("--network", "2x6")),
        ("expected, 2x6", ("--network", "2x6", "--target", "expected", "--alpha", "0.1", "--update", "forward")),
        ("distilled 2x6 (bound)", ("--network", "2x6", "--teacher", "SOLUTION", "--teacher-moves", "0")),
        ("distilled 2x4 (bound)", ("--network", "2x4", "--teacher", "SOLUTION", "--teacher-moves", "0")),
    ],
    "3x3": [
        ("TD(0), 2x6 (recipe)", ("--network", "2x6")),
        ("expected, 2x6", ("--network", "2x6", "--target", "expected", "--alpha", "0.1", "--update", "forward")),
        ("distilled 2x6 (bound)", ("--network", "2x6", "--teacher", "SOLUTION", "--teacher-moves", "0")),
        ("distilled 3x3 (bound)", ("--network", "3x3", "--teacher", "SOLUTION", "--teacher-moves", "0")),
    ],
}
THRESHOLDS = (0.01, 0.0001)


def slug(label: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in label).strip("-").replace("--", "-")


def log_of(run: Path) -> list[dict]:
    path = run / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def train(args) -> None:
    for label, options in RUNS[args.board]:
        run = args.out / args.board / slug(label)
        if log_of(run) and log_of(run)[-1]["episodes"] >= args.episodes:
            continue
        options = [str(args.solution) if o == "SOLUTION" else o for o in options]
        command = [sys.executable, "-m", "td2048.cli", "train", "--board", args.board, *options,
                   "--episodes", str(args.episodes), "--block", str(args.block), "--seed", "1", "--quiet",
                   "--exact", str(args.solution), "--exact-every", str(args.every)]
        command += ["--resume", str(run)] if (run / "settings.json").exists() else ["--out", str(run)]
        print(label, flush=True)
        subprocess.run(command, check=True)


def reached(log: list[dict], share: float) -> str:
    seconds = 0.0
    for block in log:
        seconds += block["seconds"]
        if "exact" in block and block["exact"]["loss_share"] <= share:
            return f"{block['episodes']:,} ({seconds / 60:.1f})"
    return "not reached"


def report(args) -> None:
    print("| run | episodes (training minutes) | exact gap at the end | smallest gap | "
          + " | ".join(f"to {100 * t:g}%" for t in THRESHOLDS) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(THRESHOLDS))
    curves = {}
    for label, _ in RUNS[args.board]:
        log = log_of(args.out / args.board / slug(label))
        valued = [b for b in log if "exact" in b]
        if not valued:
            continue
        minutes = sum(b["seconds"] for b in log) / 60
        end = valued[-1]["exact"]["loss_share"]
        least = min(b["exact"]["loss_share"] for b in valued)
        print(f"| {label} | {log[-1]['episodes']:,} ({minutes:.1f}) | {100 * end:.3f}% | {100 * least:.3f}% | "
              + " | ".join(reached(log, t) for t in THRESHOLDS) + " |")
        curves[label] = [(b["episodes"], b["exact"]["loss_share"]) for b in valued]
    if args.plot:
        plot(curves, args.board, args.plot)


def plot(curves: dict, board: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(9, 4.5))
    low = high = None
    for label, points in curves.items():
        xs, ys = zip(*[(e, max(g, 1e-6)) for e, g in points], strict=True)
        ax.plot(xs, [100 * y for y in ys], marker="o", markersize=3, label=label)
        low = min(ys) if low is None else min(low, min(ys))
        high = max(ys) if high is None else max(high, max(ys))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(100 * low / 1.5, 100 * high * 1.5)  # the axis fits the data
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}%"))
    ax.set_xlabel("episodes")
    ax.set_ylabel("exact gap to perfect play (% of the optimum)")
    ax.set_title(f"Greedy players on {board}, valued exactly")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes: over no curve
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--board", choices=sorted(RUNS), required=True)
    p.add_argument("--solution", type=Path, required=True, help="the board's solution file (td2048 solve --out)")
    p.add_argument("--out", type=Path, default=Path("runs/learning"))
    p.add_argument("--episodes", type=int, default=1_000_000)
    p.add_argument("--block", type=int, default=50_000)
    p.add_argument("--every", type=int, default=1, help="blocks between exact valuations")
    p.add_argument("--report", action="store_true", help="print the table of the runs made (no training)")
    p.add_argument("--plot", type=Path, default=None, help="with --report: draw the curves into this file")
    args = p.parse_args()
    (report if args.report else train)(args)


if __name__ == "__main__":
    main()
