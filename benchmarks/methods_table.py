"""Side-by-side table and learning curves of td2048 runs and TDL2048+ logs, for docs/experiments.md.

    python benchmarks/methods_table.py --plot docs/experiments-otd-tc.png \\
        "TD(0)=runs/td0:/tmp/tdl/td0.log" "OTD=runs/otd:/tmp/tdl/otd.log" ...

Each argument is LABEL=TD2048_RUN_DIR:TDL2048_LOG (either side may be empty). For td2048 the
last block of log.jsonl; for TDL2048+ (trained with ``-t 99x1000 -t 1x1000 -%``, so that its last
summary covers the last 1,000 games) the last summary's table. Moves per second: the training
blocks after the first, which holds the kernels' compilation (td2048), all summaries' ops
(TDL2048+). Prints Markdown rows; --plot draws the average score of each block (1,000 episodes)
for every run.
"""

import argparse
import json
import re
from pathlib import Path

TILES = (2048, 4096, 8192, 16384, 32768)


def td2048_run(run: Path) -> dict:
    blocks = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    last = blocks[-1]

    def reach(tile):
        if str(tile) in last["reach"]:
            return last["reach"][str(tile)]
        smallest = min(int(t) for t in last["reach"])
        return 1.0 if tile < smallest else 0.0

    return {"avg": last["avg"], "games": last["games"], "reach": {t: reach(t) for t in TILES},
            "moves_per_s": sum(b["moves"] for b in blocks[1:]) / sum(b["seconds"] for b in blocks[1:]),
            "curve": [(b["episodes"], b["avg"]) for b in blocks]}


def tdl_log(path: Path) -> dict:
    text = path.read_text()
    moves = seconds = 0.0
    for ms, ops in re.findall(r"^summary (\d+)ms ([\d.]+)ops", text, re.M):
        moves += float(ops) * int(ms) / 1000
        seconds += int(ms) / 1000
    last = text[text.rindex("\nsummary "):]
    avg = float(re.search(r"total:\s+avg=(\d+)", last).group(1))
    rows = {int(t): float(win) / 100 for t, win in re.findall(r"^(\d+)\s+\d+\s+\d+\s+\d+\s+[\d.]+%\s+([\d.]+)%",
                                                                 last, re.M)}
    smallest = min(rows)
    reach = {t: rows.get(t, 1.0 if t < smallest else 0.0) for t in TILES}
    # per block: "local:  avg=..." lines of the training blocks (the last 1,000 games included)
    averages = [float(a) for a in re.findall(r"^local:\s+avg=(\d+)", text, re.M)]
    return {"avg": avg, "reach": reach, "moves_per_s": moves / seconds if seconds else 0.0,
            "curve": [(1000 * (i + 1), a) for i, a in enumerate(averages)]}


def cells(result: dict | None) -> str:
    if result is None:
        return "| | | | | |"
    reach = " | ".join(f"{100 * result['reach'][t]:.1f}%" for t in TILES[:4])
    return f"| {result['avg']:,.0f} | {reach} | {result['moves_per_s'] / 1e6:.2f}M"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="LABEL=RUN:LOG")
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args()
    results = []
    for spec in args.runs:
        label, _, sides = spec.partition("=")
        ours, _, theirs = sides.partition(":")
        results.append((label, td2048_run(Path(ours)) if ours else None, tdl_log(Path(theirs)) if theirs else None))
    print("| method | program | avg (last 1,000) | 2048 | 4096 | 8192 | 16384 | training moves/s |")
    print("|---|---|---|---|---|---|---|---|")
    for label, ours, theirs in results:
        for name, result in (("td2048", ours), ("TDL2048+", theirs)):
            if result is not None:
                print(f"| {label} | {name} {cells(result)} |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(9, 5))
        for i, (label, ours, theirs) in enumerate(results):
            color = f"C{i}"
            for result, style, name in ((ours, "-", "td2048"), (theirs, ":", "TDL2048+")):
                if result is not None:
                    x, y = zip(*result["curve"])
                    ax.plot(x, y, style, color=color, label=f"{label} ({name})", linewidth=1)
        ax.set_xlabel("episodes")
        ax.set_ylabel("average score per block of 1,000")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
