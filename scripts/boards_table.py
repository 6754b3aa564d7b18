"""One Markdown table of td2048 on boards of every size: speed, and what a short training run learns.

    nice -n 5 .venv/bin/python scripts/boards_table.py

For each board (2x2, 2x3, 2x4, 3x3, 3x4, 4x4; 2048, the board's default network) it runs

    td2048 bench --board B --seconds 3 --json                        train and test moves/s, one thread
    td2048 train --board B --episodes N --block N/5 --seed 1 --quiet --out TMP
    td2048 eval TMP/model.td2048 --games 2000 --seed 1 --json         average score, tiles reached, moves

N is chosen so that each run takes well under a minute on a 2-core machine. 4x4 has two rows: its default
network (4x6, 256 MiB) is only benchmarked, and the short run trains the faster 2x4 network
(``--network 2x4``), benchmarked too. The table's "minutes" are the wall-clock time of the whole ``td2048 train``
command (start, kernels from Numba's cache, training, saving); the average game length is the evaluation's
moves per game. Then one line: the machine (lscpu's model name, nproc), the date and the commit. Progress
goes to stderr; the whole run takes about five minutes.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = 2000
BENCH_SECONDS = 3

# (board, network or None for the board's default, episodes of the short run or None for a benchmark only); the
# small boards' first presets named (3x4's too), so that their short runs are plain TD(0), not the boards' recipes
ROWS = [
    ("2x2", "1x4", 1_000_000),
    ("2x3", "1x6", 1_000_000),
    ("2x4", "2x4", 1_000_000),
    ("3x3", "2x6", 150_000),
    ("3x4", "4x6", 75_000),
    ("4x4", None, None),
    ("4x4", "2x4", 75_000),
]


def td2048_command() -> list[str]:
    """The td2048 of this Python's environment (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "td2048"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("td2048")
    if found:
        return [found]
    return [sys.executable, "-m", "td2048.cli"]


def run(args: list[str], cwd: Path) -> str:
    print("$ td2048 " + " ".join(args), file=sys.stderr, flush=True)
    result = subprocess.run([*td2048_command(), *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"td2048 {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result.stdout


def last_json(text: str) -> dict:
    """The last line of the output that is a JSON object."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON in {text!r}")


def size_text(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def percent(rate: float) -> str:
    if rate >= 0.999995 or rate == 0:
        return f"{100 * rate:.0f}%"
    if rate >= 0.1:
        return f"{100 * rate:.1f}%"
    return f"{100 * rate:.2g}%"


def machine_line() -> str:
    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    return f"Machine: {model}, {os.cpu_count()} CPUs (nproc); {today}; td2048 at commit {commit}."


def measure(board: str, network: str | None, episodes: int | None, tmp: Path) -> str:
    net = ["--network", network] if network else []
    bench = last_json(run(["bench", "--board", board, *net, "--seconds", str(BENCH_SECONDS), "--json"], tmp))
    cells = [board, bench["network"], size_text(bench["weights_bytes"]),
             f"{bench['train_moves_per_s'] / 1e6:.2f}M", f"{bench['test_moves_per_s'] / 1e6:.2f}M"]
    if episodes is None:
        return "| " + " | ".join(cells + ["-"] * 6) + " |"
    out = tmp / f"{board}-{bench['network']}"
    start = time.perf_counter()
    run(["train", "--board", board, *net, "--episodes", str(episodes), "--block", str(episodes // 5),
         "--seed", "1", "--quiet", "--out", str(out)], tmp)
    minutes = (time.perf_counter() - start) / 60
    ev = last_json(run(["eval", str(out / "model.td2048"), "--games", str(GAMES), "--seed", "1", "--json"], tmp))
    reached = sorted((int(tile), rate) for tile, rate in ev["reach"].items() if rate > 0)
    top = [f"{tile}: {percent(rate)}" for tile, rate in reversed(reached[-2:])]
    cells += [f"{episodes:,}", f"{minutes:.2f}", f"{ev['avg']:,.0f}", f"{reached[-1][0]:,}", ", ".join(top),
              f"{ev['moves'] / ev['games']:,.0f}"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    lines = ["| board | network | weights | train moves/s | test moves/s | episodes | minutes | avg score | "
             "largest tile | two largest tiles reached | moves per game |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="td2048-boards-") as tmp:
        for board, network, episodes in ROWS:
            lines.append(measure(board, network, episodes, Path(tmp)))
            print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))
    print()
    print(machine_line())
    print(f"Each row: td2048 bench --board B --seconds {BENCH_SECONDS} --json; td2048 train --board B --episodes N "
          f"--block N/5 --seed 1 --quiet; td2048 eval MODEL --games {GAMES} --seed 1 --json.")


if __name__ == "__main__":
    main()
