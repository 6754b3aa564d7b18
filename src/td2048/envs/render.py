"""Pictures of a board for the environments' render modes: text (``ansi``) and an RGB image."""

from __future__ import annotations

import numpy as np

from td2048.games.tiles import tile_value
from td2048.palette import BOARD, tile_colours


def board_text(tiles: np.ndarray, score: int | None = None) -> str:
    """A rows x cols array of tile values as rows of right-aligned numbers ('.' for empty), score below."""
    lines = [" ".join(f"{int(v) if v else '.':>6}" for v in row) for row in np.asarray(tiles)]
    if score is not None:
        lines.append(f"score {score}")
    return "\n".join(lines) + "\n"


def board_rgb(codes: np.ndarray, game: str = "2048", cell: int = 100) -> np.ndarray:
    """A rows x cols array of cell codes drawn by matplotlib's Agg canvas (no window), ``cell`` pixels a
    cell: ``uint8[rows * cell, cols * cell, 3]``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    codes = np.asarray(codes)
    rows, cols = codes.shape
    fig = Figure(figsize=(cols * cell / 100, rows * cell / 100), dpi=100, facecolor=BOARD)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.axis("off")
    for i, code in enumerate(codes.reshape(-1).tolist()):
        r, c = divmod(i, cols)
        background, ink = tile_colours(code, game)
        ax.add_patch(_rounded(c + 0.06, r + 0.06, 0.88, background))
        if code:
            text = str(tile_value(game, code))
            ax.text(c + 0.5, r + 0.5, text, ha="center", va="center", color=ink, weight="bold",
                    fontsize=cell / 3 / max(2, len(text)) * 2.2)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()


def _rounded(x, y, side, colour):
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch((x, y), side, side, boxstyle="round,pad=0,rounding_size=0.06", linewidth=0,
                          facecolor=colour)
