"""The tile colours of every picture td2048 draws (terminal, environment frames, replay page): the
original 2048's, by level, so that the win tile is gold in both games."""

from __future__ import annotations

from td2048.games.tiles import WIN_TILE, tile_code

# background by level: 0 empty, 1 the smallest tile ... 11 the win tile, then darker beyond
LEVELS = ["#cdc1b4", "#eee4da", "#ede0c8", "#f2b179", "#f59563", "#f67c5f", "#f65e3b", "#edcf72", "#edcc61",
          "#edc850", "#edc53f", "#edc22e", "#3c3a32", "#302d27", "#25231f"]
BOARD = "#bbada0"  # the grid between the tiles
DARK_INK, LIGHT_INK = "#776e65", "#f9f6f2"  # text on the two lightest tiles, and on the others


def level(code: int, game: str = "2048") -> int:
    """The palette level of a cell code: the win tile's code (11 in 2048, 17 in 2584) at level 11."""
    if code <= 0:
        return 0
    win = tile_code(game, WIN_TILE[game])
    if code <= win:
        return 1 + int((code - 1) * 10 / (win - 1) + 0.5)  # half up, as the eye expects
    return min(11 + code - win, len(LEVELS) - 1)


def tile_colours(code: int, game: str = "2048") -> tuple[str, str]:
    """(background, text) colours of a cell's code."""
    lv = level(code, game)
    return LEVELS[lv], DARK_INK if lv <= 2 else LIGHT_INK
