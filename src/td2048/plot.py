"""Curves of training runs from their logs: average score and tile reach rates against episodes.

The figures of the course reports: one panel of the block average score, one of the share of
games reaching 2048, 4096, 8192 and 16384 (2584, 4181, 6765 and 10946 for runs of 2584; one
line style per tile), several runs overlaid
in distinct colours with a legend. Runs valued exactly while they trained (``td2048 train --exact``:
log lines with an ``"exact"`` object) get a panel between them: the exact expected score of the
network's greedy policy against episodes, with the optimum (perfect play's expected score) as a
labelled horizontal line. Uses matplotlib's object API (no pyplot state), so it is
safe to call from a background thread.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.io.rundir import LOG, SETTINGS, read_log
from td2048.stats import reach_rate

TILES = {"2048": (2048, 4096, 8192, 16384), "2584": (2584, 4181, 6765, 10946)}  # the rates drawn, by game
_STYLES = ("-", "--", "-.", ":")


def _load(run: Path) -> list[dict]:
    log = run / LOG if run.is_dir() else run
    if not log.exists():
        raise TD2048Error(f"{run}: no {LOG} (not a training run directory)")
    blocks = read_log(log)
    if not blocks:
        raise TD2048Error(f"{run}: the log has no blocks yet")
    return blocks


def _game(run: Path) -> str:
    """The run's game, from its settings.json beside the log (2048 when there is none)."""
    settings = (run if run.is_dir() else run.parent) / SETTINGS
    try:
        return str(json.loads(settings.read_text()).get("game", "2048"))
    except (OSError, ValueError):
        return "2048"


EXACT_TITLE = "Exact expected score (greedy)"  # the title of the panel of the exact valuations


def plot_runs(runs: list[str | os.PathLike], out: str | os.PathLike, labels: list[str] | None = None) -> Path:
    """Draw the runs' curves into a PNG file (written atomically).

    Parameters
    ----------
    runs : list of str or os.PathLike
        Run directories (or their ``log.jsonl`` files).
    out : str or os.PathLike
        The PNG file to write.
    labels : list of str or None
        The legend's name of each run; default: each directory's name.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    TD2048Error
        A run with no log, or a log with no block yet.
    """
    fig = runs_figure(runs, labels)
    out = Path(out)
    with atomic_open(out, "wb") as f:
        fig.savefig(f, format="png")
    return out


def runs_figure(runs: list[str | os.PathLike], labels: list[str] | None = None):
    """The runs' curves as a matplotlib figure (what :func:`plot_runs` draws).

    Parameters
    ----------
    runs : list of str or os.PathLike
        Run directories (or their ``log.jsonl`` files).
    labels : list of str or None
        The legend's name of each run; default: each directory's name.

    Returns
    -------
    matplotlib.figure.Figure
        The average score and the tiles' reach rates against episodes; when a log holds ``"exact"`` objects,
        a panel titled :data:`EXACT_TITLE` between them: each such run's exact expected score, and each
        optimum (``optimal_expected_score``) as a dashed horizontal line labelled ``optimum X``.

    Raises
    ------
    TD2048Error
        A run with no log, or a log with no block yet.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    runs = [Path(r) for r in runs]
    logs = [_load(r) for r in runs]
    games = [_game(r) for r in runs]
    labels = labels or [r.resolve().name for r in runs]
    exact = [[b for b in blocks if isinstance(b.get("exact"), dict)] for blocks in logs]
    if any(exact):
        fig = Figure(figsize=(17, 4.5), dpi=100, layout="constrained")
        score_ax, exact_ax, rate_ax = fig.subplots(1, 3)
    else:
        fig = Figure(figsize=(12, 4.5), dpi=100, layout="constrained")
        (score_ax, rate_ax), exact_ax = fig.subplots(1, 2), None
    colors = [f"C{i % 10}" for i in range(len(runs))]
    optima: list[float] = []  # perfect play's expected scores (one a board and game), in the order met
    for blocks, valued, game, label, color in zip(logs, exact, games, labels, colors, strict=True):
        episodes = [b["episodes"] for b in blocks]
        score_ax.plot(episodes, [b["avg"] for b in blocks], color=color, label=label)
        for tile, style in zip(TILES.get(game, TILES["2048"]), _STYLES, strict=True):
            rates = [100 * reach_rate(b.get("reach", {}), tile) for b in blocks]
            if any(rates):
                rate_ax.plot(episodes, rates, color=color, linestyle=style,
                             label=f"{label}: {tile}" if len(runs) > 1 else f"{tile}")
        if valued:
            exact_ax.plot([b["episodes"] for b in valued], [b["exact"]["expected_score"] for b in valued],
                          color=color, marker="o", markersize=3, label=label)
            optimum = float(valued[-1]["exact"]["optimal_expected_score"])
            if optimum not in optima:
                optima.append(optimum)
    score_ax.set(title="Average score per block", xlabel="episodes", ylabel="score")
    rate_ax.set(title="Games reaching a tile", xlabel="episodes", ylabel="% of the block's games", ylim=(0, 101))
    axes = [score_ax, rate_ax]
    if exact_ax is not None:
        for optimum, style in zip(optima, itertools.cycle(("--", ":", "-.")), strict=False):
            exact_ax.axhline(optimum, color="black", linestyle=style, linewidth=1, label=f"optimum {optimum:,.2f}")
        exact_ax.set(title=EXACT_TITLE, xlabel="episodes", ylabel="expected score")
        exact_ax.set_ylim(bottom=0)
        exact_ax.legend(loc="lower right", fontsize="small")
        axes.append(exact_ax)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_formatter(FuncFormatter(_episodes_label))
    score_ax.legend(loc="best", fontsize="small")
    if rate_ax.lines:
        rate_ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")  # beside the curves
    return fig


def _episodes_label(x, _pos) -> str:
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(x) >= size:
            return f"{x / size:g}{suffix}"
    return f"{x:g}"
