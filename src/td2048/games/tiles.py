"""What the codes in a cell stand for: the games, their tile values, the tile that wins.

A cell holds a code, never a tile value: in 2048 code c is the tile 2**c; in 2584 (Fibonacci)
code i is F(i+1) with F1 = F2 = 1 (1, 2, 3, 5, 8, ...; code 17 is 2584). Code 0 is an empty cell.
Plain Python and NumPy, no compiled code: option checks read these before any kernel is loaded.
The merge rules that act on the codes are in :mod:`td2048.games.rules`.
"""

import numpy as np

GAME_2048, GAME_2584 = 0, 1
GAMES = {"2048": GAME_2048, "2584": GAME_2584}
WIN_TILE = {"2048": 2048, "2584": 2584}


def fibonacci_values(n: int = 40) -> np.ndarray:
    """Tile value of each 2584 code: 0, 1, 2, 3, 5, 8, ... (code i: F(i+1))."""
    values = np.zeros(n, np.int64)
    a, b = 1, 2
    for i in range(1, n):
        values[i] = a
        a, b = b, a + b
    return values


FIBONACCI = fibonacci_values()


def tile_value(game: str, code: int) -> int:
    if code == 0:
        return 0
    return int(FIBONACCI[code]) if game == "2584" else 1 << int(code)


def tile_code(game: str, tile: int) -> int | None:
    """The code of a tile value in a game (``tile_code("2048", 16384) == 14``); None if it is no tile."""
    for code in range(1, 32):
        if tile_value(game, code) == tile:
            return code
    return None
