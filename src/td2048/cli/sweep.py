"""``td2048 sweep``: a grid or random search over training settings, as Ray Tune trials."""

from __future__ import annotations

import argparse
import math
import shlex
from pathlib import Path

from td2048.errors import TD2048Error
from td2048.io.rundir import has_blocks

HELP = "search training settings: a grid and/or random sweep of td2048 train runs on Ray Tune"
DESCRIPTION = """\
Train one run per trial of a sweep file (TOML) and print the trials, best first. Sections:

  [train]   fixed options of td2048 train (network = "4x6", episodes = 100000, ...)
  [grid]    lists, every combination tried:            alpha = [0.1, 0.05]
  [random]  distributions, drawn for each trial:       lambda = {uniform = [0.0, 0.5]}
            (uniform, loguniform, randint = [lo, hi]; choice = [a, b, ...])
  [sweep]   samples = 1 (each grid point this many times), metric = "avg" or "reach:2048"
            (of the last block), scheduler = "fifo" or "asha" (stop weak trials early, after
            grace = 2 blocks), cpus = 1 (per trial: its --threads), seed (of the random draws)

Option names are td2048 train's (lambda, merge-every, tc = true, no-promotion = true). Each
trial is a normal run directory, OUT/runs/NAME (settings.json, log.jsonl, snapshots, model);
Tune reports every block's average and reach rates. Stopped in any way, the same command
continues the sweep: unfinished trials resume from their snapshots. At the end: the table of
trials (status: done, stopped early by the scheduler, unfinished, or error) and OUT/sweep.png,
their curves overlaid. Once every trial has ended, the same command prints the table again at
once, from OUT/sweep.json, without starting Ray (a changed sweep file goes back to Tune).
Needs pip install 'td2048[ray]'.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sweep", type=Path, help="the sweep file (TOML)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run the trials on the Ray cluster at ADDRESS ('auto', host:6379; default: a new local "
                        "instance)")
    p.add_argument("--out", type=Path, default=None,
                   help="the sweep's folder (default sweeps/NAME, NAME the sweep file's); on a cluster, a filesystem "
                        "that every node shares")


def run(args: argparse.Namespace) -> int:
    from td2048.distributed.sweep import load_sweep, run_sweep

    plan = load_sweep(args.sweep)
    out = args.out or Path("sweeps") / args.sweep.stem
    trials = run_sweep(plan, out, args.ray)
    if not trials:
        raise TD2048Error("the sweep ran no trial")
    names = sorted({k for t in trials for k in t.chosen})
    header = ["rank", plan.metric, "avg", "episodes", "status", *names, "run"]
    rows = [[str(i), f"{t.metric:.6g}" if math.isfinite(t.metric) else "-", f"{t.avg:.6g}", str(t.episodes), t.status,
             *(_text(t.chosen.get(k)) for k in names), t.directory] for i, t in enumerate(trials, 1)]
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    runs = [t for t in trials if has_blocks(t.directory)]
    if runs:
        from td2048.plot import plot_runs

        picture = plot_runs([t.directory for t in runs], Path(out) / "sweep.png",
                            labels=[", ".join(f"{k}={_text(v)}" for k, v in sorted(t.chosen.items())) or t.name
                                    for t in runs])
        print(f"# curves in {picture}")
    if any(t.status == "unfinished" for t in trials):
        again = ["td2048", "sweep", args.sweep, "--out", out, *(["--ray", args.ray] if args.ray else [])]
        command = " ".join(shlex.quote(str(a)) for a in again)
        print(f"# stopped before the end; continue with: {command}")
    return 0


def _text(value) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)
