"""A Markdown table of training runs, from their run directories (settings.json and log.jsonl).

    python benchmarks/runs_table.py --tiles 2584,4181,6765 --last 5 [--at-minutes 30] runs/a runs/b ...

One row per run: its name, the options that differ between the runs, the episodes trained, the training
time (the sum of the blocks' seconds) and moves per second, then over the last ``--last`` blocks the average
score and the share of games that reached each tile of ``--tiles``. With ``--at-minutes T`` each run is read as it
stood after T minutes of training (its log cut at the first block that ends past T): runs side by side at equal
training time.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from td2048.stats import reach_rate

IGNORED = {"network_spec", "out", "seed", "quiet", "snapshot_every", "memory_limit", "resume", "episodes"}


def load(run: Path) -> tuple[dict, list[dict]]:
    settings = json.loads((run / "settings.json").read_text())
    blocks = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines() if line.strip()]
    return settings, blocks


def cut(blocks: list[dict], seconds: float) -> list[dict]:
    """The blocks up to the first one whose training ends at or past ``seconds``."""
    total = 0.0
    for i, block in enumerate(blocks):
        total += block["seconds"]
        if total >= seconds:
            return blocks[:i + 1]
    return blocks


def differing(all_settings: list[dict]) -> list[str]:
    keys = sorted({k for s in all_settings for k in s} - IGNORED)
    return [k for k in keys if len({json.dumps(s.get(k), sort_keys=True) for s in all_settings}) > 1]


def row(run: Path, settings: dict, blocks: list[dict], keys: list[str], tiles: list[int], last: int) -> str:
    tail = [b for b in blocks if b["games"]][-last:]
    games = sum(b["games"] for b in tail)
    avg = sum(b["avg"] * b["games"] for b in tail) / games
    rates = [sum(reach_rate(b["reach"], t) * b["games"] for b in tail) / games for t in tiles]
    seconds = sum(b["seconds"] for b in blocks)
    moves = sum(b["moves"] for b in blocks)
    options = ", ".join(f"{k} {settings.get(k)}" for k in keys) or "-"
    cells = " | ".join(f"{100 * r:.1f}%" for r in rates)
    return (f"| {run.name} | {options} | {blocks[-1]['episodes']:,} | {seconds / 60:.0f} min | "
            f"{moves / seconds / 1e6:.2f}M | {avg:,.0f} | {cells} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--tiles", default="2048,4096,8192,16384", help="tiles whose reach rates to show")
    parser.add_argument("--last", type=int, default=5, help="blocks at the end to average over")
    parser.add_argument("--at-minutes", type=float, default=None, help="read each run as after this much training")
    args = parser.parse_args()
    tiles = [int(t) for t in args.tiles.split(",")]
    loaded = [load(run) for run in args.runs]
    if args.at_minutes is not None:
        loaded = [(settings, cut(blocks, args.at_minutes * 60)) for settings, blocks in loaded]
    keys = differing([s for s, _ in loaded])
    head = " | ".join(str(t) for t in tiles)
    print(f"| run | options | episodes | training time | moves/s | avg (last {args.last} blocks) | {head} |")
    print("|---|---|---|---|---|---|" + "---|" * len(tiles))
    for run, (settings, blocks) in zip(args.runs, loaded):
        print(row(run, settings, blocks, keys, tiles, args.last))


if __name__ == "__main__":
    main()
