"""How many positions a solve holds, and how much memory it takes, before it starts."""

from __future__ import annotations

from td2048.games.shape import as_shape

# Positions up to symmetry, as counted by td2048 solve (small boards), or published (4x3: Kaneko and
# Yamashita, 2025, over 1.15e12 states). 4x4 is far past any of them: a rough lower bound.
_POSITIONS = {
    ("2048", "2x2"): 110, ("2048", "2x3"): 21_752, ("2048", "3x2"): 21_752, ("2048", "2x4"): 4_980_767,
    ("2048", "4x2"): 4_980_767, ("2048", "3x3"): 48_713_519, ("2048", "3x4"): 1.15e12, ("2048", "4x3"): 1.15e12,
    ("2048", "4x4"): 1e18, ("2584", "2x2"): 333, ("2584", "2x3"): 205_011, ("2584", "3x2"): 205_011,
    ("2584", "2x4"): 143_446_244, ("2584", "4x2"): 143_446_244, ("2584", "3x3"): 2_565_243_397,
}
# the layers in flight grow with the board: about one byte a position at the peak (3x3: 203 MiB, 2584 on 2x4:
# 318 MiB), the rest of the positions on disk
BYTES_PER_POSITION = 1
BASE_BYTES = 300 * 2**20  # Python, NumPy, Numba and the row tables


def estimate_positions(board, game: str = "2048") -> float:
    """The number of positions a solve of a board holds (up to symmetry), known or estimated.

    Parameters
    ----------
    board : BoardShape or str
        The board.
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    float
        The count (an estimate where no solve has counted it: 2584 from 2048's count on the same board).
    """
    shape = as_shape(board)
    known = _POSITIONS.get((game, shape.name))
    if known is not None:
        return float(known)
    # 2584 merges more pairs than 2048 and reaches more positions: on 2x3 about 9.4 times 2048's count; the
    # ratio grows with the board, here as 9.4 ** (cells / 6) (an estimate, not a count)
    ratio = _POSITIONS[("2584", "2x3")] / _POSITIONS[("2048", "2x3")]
    return float(_POSITIONS.get(("2048", shape.name), 1e18)) * ratio ** (shape.n_cells / 6)


def estimate_bytes(board, game: str = "2048") -> int:
    """The peak memory of a solve of a board, estimated.

    Parameters
    ----------
    board : BoardShape or str
        The board.
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    int
        Bytes.
    """
    return int(BASE_BYTES + BYTES_PER_POSITION * estimate_positions(board, game))
