"""Pictures of a board for the environments' render modes: text (``ansi``) and an RGB image."""

from __future__ import annotations

import numpy as np

from td2048.games.tiles import tile_value
from td2048.palette import BOARD, tile_colours


def board_text(tiles: np.ndarray, score: int | None = None) -> str:
    """A 4x4 array of tile values as rows of right-aligned numbers ('.' for empty), score below."""
    lines = [" ".join(f"{int(v) if v else '.':>6}" for v in row) for row in np.asarray(tiles).reshape(4, 4)]
    if score is not None:
        lines.append(f"score {score}")
    return "\n".join(lines) + "\n"


def board_rgb(codes: np.ndarray, game: str = "2048", size: int = 400) -> np.ndarray:
    """The board drawn by matplotlib's Agg canvas (no window): ``uint8[size, size, 3]``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(size / 100, size / 100), dpi=100, facecolor=BOARD)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 4)
    ax.set_ylim(4, 0)
    ax.axis("off")
    for i, code in enumerate(np.asarray(codes).reshape(16).tolist()):
        r, c = divmod(i, 4)
        background, ink = tile_colours(code, game)
        ax.add_patch(_rounded(c + 0.06, r + 0.06, 0.88, background))
        if code:
            text = str(tile_value(game, code))
            ax.text(c + 0.5, r + 0.5, text, ha="center", va="center", color=ink, weight="bold",
                    fontsize=size / 12 / max(2, len(text)) * 2.2)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()


def _rounded(x, y, side, colour):
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch((x, y), side, side, boxstyle="round,pad=0,rounding_size=0.06", linewidth=0,
                          facecolor=colour)
