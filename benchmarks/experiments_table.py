"""Markdown table rows for docs/experiments.md from training run directories.

    python benchmarks/experiments_table.py runs/exp/td0 runs/exp/lambda0.5 ...

For each run: the options that differ, the last block's 2048 rate and average score, the
training moves per second and the training time (sum of the blocks' seconds, from log.jsonl).
"""

import json
import sys
from pathlib import Path


def row(run: Path) -> str:
    settings = json.loads((run / "settings.json").read_text())
    blocks = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    last = blocks[-1]
    seconds = sum(b["seconds"] for b in blocks)
    moves = sum(b["moves"] for b in blocks)
    options = f"{settings.get('method', 'afterstate')}, lambda {settings.get('lam', 0)}, " \
              f"explore {settings.get('explore', 'none')}"
    return (f"| {run.name} | {options} | {last['episodes']:,} | {100 * last['reach'].get('2048', 0):.1f}% "
            f"| {last['avg']:,.0f} | {moves / seconds / 1e6:.2f}M | {seconds:.0f} s |")


if __name__ == "__main__":
    print("| run | options | episodes | 2048 rate (last block) | avg (last block) | training moves/s | training time |")
    print("|---|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        print(row(Path(arg)))
