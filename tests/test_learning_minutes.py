"""benchmarks/learning_minutes.py: a run's block averages against its training minutes, as a table and a figure."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "learning_minutes.py"


def test_the_table_and_the_figure_of_a_run(model_2x3, tmp_path):
    run = model_2x3 / "run"
    blocks = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    blocks = [b for b in blocks if "avg" in b]
    png = tmp_path / "curves.png"
    result = subprocess.run([sys.executable, str(SCRIPT), f"{run}=small", str(run), "--optimum", "400",
                             "--shares", "0.5", "--plot", str(png)], capture_output=True, text=True, check=True)
    rows = result.stdout.splitlines()
    assert rows[0].startswith("| run | episodes | minutes |") and len(rows) == 4
    last = blocks[-1]["avg"]
    minutes = sum(b["seconds"] for b in blocks) / 60
    assert rows[2].startswith(f"| small | {blocks[-1]['episodes']:,} | {minutes:.1f} | {last:,.0f} ({last / 400:.1%})")
    assert rows[3].startswith("| run |")  # the directory's name is the label by default
    assert png.stat().st_size > 10_000


def test_a_directory_without_blocks_is_refused(tmp_path):
    (tmp_path / "log.jsonl").write_text("")
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 1 and "no training block" in result.stderr
