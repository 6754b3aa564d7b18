"""Learning curves against training minutes: each run's block averages, with shares of a known optimum as lines.

    python benchmarks/learning_minutes.py runs/recipe43=recipe runs/lambda43="lambda 0.75" \\
        --optimum 50724.26 --shares 0.45,0.6 --plot docs/images/learning-4x3.png

Each RUN_DIR is a ``td2048 train`` run directory (its ``log.jsonl``), labelled after ``=`` (default: the
directory's name). A run's minutes are the sum of its blocks' training seconds, so a resumed run continues
where it stopped and the time spent between blocks (snapshots, evaluations) is not counted. A block's average
is the training games' own (exploration and restarts as the run played them; see ``td2048 train --help``).

Prints a Markdown table: per run, its episodes, training minutes, the last block's average and its best
block's, each also as a share of ``--optimum`` when given; ``--plot`` draws every run's block averages against
minutes, with a dashed line at each of ``--shares`` of the optimum.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def read_curve(run: Path) -> list[tuple[float, int, float]]:
    """(minutes of training so far, episodes, block average) after each block of a run's log."""
    minutes, curve = 0.0, []
    for line in (run / "log.jsonl").read_text().splitlines():
        block = json.loads(line)
        if "avg" not in block:  # a line of another kind (an exact valuation)
            continue
        minutes += block["seconds"] / 60
        curve.append((minutes, block["episodes"], block["avg"]))
    if not curve:
        raise SystemExit(f"{run}: no training block in its log.jsonl")
    return curve


def share(value: float, optimum: float | None) -> str:
    return f" ({value / optimum:.1%})" if optimum else ""


def table(curves: dict[str, list], optimum: float | None) -> str:
    lines = ["| run | episodes | minutes | last block | best block |", "|---|---:|---:|---:|---:|"]
    for label, curve in curves.items():
        minutes, episodes, last = curve[-1]
        best = max(avg for _, _, avg in curve)
        lines.append(f"| {label} | {episodes:,} | {minutes:.1f} | {last:,.0f}{share(last, optimum)} | "
                     f"{best:,.0f}{share(best, optimum)} |")
    return "\n".join(lines)


def plot(curves: dict[str, list], optimum: float | None, shares: list[float], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.transforms

    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, curve in curves.items():
        ax.plot([m for m, _, _ in curve], [avg for _, _, avg in curve], marker="o", markersize=2, label=label)
    if optimum:
        at_right = matplotlib.transforms.blended_transform_factory(ax.transAxes, ax.transData)
        for fraction in shares:
            ax.axhline(fraction * optimum, color="grey", linestyle="--", linewidth=0.8)
            ax.text(0.99, fraction * optimum, f"{fraction:.0%} of perfect play ", transform=at_right, ha="right",
                    va="bottom", fontsize=8, color="grey")
    ax.set_xlim(left=0)
    ax.set_xlabel("minutes of training")
    ax.set_ylabel("average score of the block's games")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes: over no curve
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN_DIR[=LABEL]", help="run directories, each with a label after =")
    p.add_argument("--optimum", type=float, default=None, help="perfect play's expected score on the runs' board")
    p.add_argument("--shares", default="", help="shares of the optimum drawn as lines (0.6,0.8)")
    p.add_argument("--title", default="Block averages against training minutes")
    p.add_argument("--plot", type=Path, default=None, metavar="PNG", help="draw the curves into this file")
    args = p.parse_args()
    curves = {}
    for given in args.runs:
        where, _, label = given.partition("=")
        curves[label or Path(where).name] = read_curve(Path(where))
    print(table(curves, args.optimum))
    if args.plot:
        shares = [float(s) for s in args.shares.split(",") if s.strip()]
        plot(curves, args.optimum, shares, args.title, args.plot)


if __name__ == "__main__":
    main()
