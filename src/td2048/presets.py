"""Named networks: the presets of every board (``--network 4x6``; on 3x3 ``2x6``), cells in hex, default isomorphisms.

Plain Python: :func:`td2048.spec.parse_network` reads a preset's name (or hex tuples) into a
:class:`td2048.spec.NetworkSpec`; why each board has the networks it has is on the Boards page
(``docs/concepts/boards.md``).
"""

from __future__ import annotations

from td2048.games.shape import FULL, BoardShape

# Named networks: cells in hex, default isomorphisms.
PRESETS: dict[str, tuple[tuple[str, ...], int]] = {
    # the four rows and four columns, one table each: the course's simplest network
    "8x4": (("0123", "4567", "89ab", "cdef", "048c", "159d", "26ae", "37bf"), 1),
    "2x4": (("0123", "4567"), 8),
    "4x5": (("01234", "45678", "01245", "45689"), 8),
    # the classic network of the course demo and most reports
    "4x6": (("012345", "456789", "012456", "45689a"), 8),
    "5x6": (("012345", "456789", "89abcd", "012456", "45689a"), 8),
    "6x6": (("012456", "456789", "012345", "234569", "01259a", "345678"), 8),
    "7x6": (("012456", "456789", "012345", "234569", "01259a", "345678", "134567"), 8),
    "8x6": (("012456", "456789", "012345", "234569", "01259a", "345678", "134567", "01489a"), 8),
}

# Named networks of the other boards (cells numbered on the board itself, row by row), and why each:
# see docs/concepts/boards.md. A 3x4 board numbers its cells as the 4x4 board's first three rows, so
# 4x4's tuples fit it as they are; a 4x3 board takes the transposed tuples. No preset of 3x4 or 4x3 holds a
# tuple that repeats another on a symmetric board (NetworkSpec.repeated_tuples); the small boards' rows do.
BOARD_PRESETS: dict[str, dict[str, tuple[tuple[str, ...], int]]] = {
    # the whole board in one table (16**4 weights): a value for every position, nothing shared
    "2x2": {"1x4": (("0123",), 8), "2x2": (("01", "23"), 8)},
    # the whole board (16**6 weights, 64 MiB); or its two rows (lines of 3)
    "2x3": {"1x6": (("012345",), 4), "2x3": (("012", "345"), 4)},
    # the two rows; or two 6-cell snakes (a row and a half): the shape a 2048 strategy keeps its tiles in
    "2x4": {"2x4": (("0123", "4567"), 4), "2x6": (("012345", "123456"), 4)},
    # two rows (and, by the symmetries, every pair of adjacent rows and columns), and a corner staircase
    "3x3": {"2x6": (("012345", "012346"), 8), "3x3": (("012", "345", "678"), 8)},
    # 4x4's networks on their first three rows, with the rectangle's symmetries: 4x4's 4x6 but for its last tuple
    # (45689a, which on three rows is 012456 turned over), replaced by the corner's two columns; and the 2x4
    "3x4": {"4x6": (("012345", "456789", "012456", "048159"), 4), "2x4": (("0123", "4567"), 4)},
}


def transposed_tuples(tuples: tuple[str, ...], rows: int, cols: int) -> tuple[str, ...]:
    """Hex tuples of a rows x cols board, moved to the transposed (cols x rows) board: the cell in row r and
    column c goes to row c and column r (``transposed_tuples(("036914",), 4, 3) == ("012345",)``)."""
    return tuple("".join(f"{(i % cols) * rows + i // cols:x}" for i in (int(ch, 16) for ch in t)) for t in tuples)


BOARD_PRESETS["4x3"] = {"4x6": (transposed_tuples(BOARD_PRESETS["3x4"]["4x6"][0], 3, 4), 4),
                        "2x4": (transposed_tuples(("0123", "4567"), 3, 4), 4)}
BOARD_PRESETS["3x2"] = {"1x6": (("012345",), 4), "2x3": (transposed_tuples(("012", "345"), 2, 3), 4)}
BOARD_PRESETS["4x2"] = {"2x4": (transposed_tuples(("0123", "4567"), 2, 4), 4),
                        "2x6": (transposed_tuples(("012345", "123456"), 2, 4), 4)}


def default_network(board: BoardShape = FULL) -> str:
    """The network a board trains when none is named: 4x6 on 4x4, else the board's first preset."""
    from td2048.config import DEFAULT_NETWORK

    return DEFAULT_NETWORK if board.full else next(iter(BOARD_PRESETS[board.name]))


def preset_names() -> set[str]:
    """Every preset's name, on any board."""
    return set(PRESETS).union(*BOARD_PRESETS.values())


def presets_of(board: BoardShape = FULL) -> dict[str, tuple[tuple[str, ...], int]]:
    """The named networks of a board shape: cells in hex on the board's own numbering, default isomorphisms."""
    return PRESETS if board.full else BOARD_PRESETS.get(board.name, {})
