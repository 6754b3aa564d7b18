"""``td2048 plot``: average score, reach-rate and exact expected score curves of one or more runs, as a PNG."""

from __future__ import annotations

import argparse
from pathlib import Path

from td2048.plot import plot_runs

HELP = "plot runs' average score, 2048/4096/8192/16384 rates and exact expected score (--exact runs)"
DESCRIPTION = """\
Draw, from the runs' log.jsonl, the average score per block and the share of games that
reached 2048, 4096, 8192 and 16384 against episodes; several runs are overlaid with a legend.
Runs trained with --exact SOLUTION get one more panel: the exact expected score of the network's
greedy policy against episodes, with the optimum (perfect play's expected score) as a labelled line.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="training run directories")
    p.add_argument("-o", "--output", type=Path, default=Path("progress.png"), help="PNG file (default progress.png)")


def run(args: argparse.Namespace) -> int:
    out = plot_runs(args.runs, args.output)
    print(f"wrote {out}")
    return 0
