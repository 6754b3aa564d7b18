"""Each small board's recipe: the training that comes closest to perfect play from play alone.

``td2048 train --board B`` with no network named trains B's recipe (its network, method and length); an
option given on the command line overrides that part of it. A recipe reads no solution file, no teacher
and no starting model: what it learns, it learns by playing. How close each gets, and in what time, is on
the research page (``docs/research/perfect-play.md``, "Recipes").

Why these: a whole-board network (a weight for every position) learns exact values, and expected targets
(``--target expected``) at alpha 1 from optimistic values are real-time dynamic programming, which converges to
perfect play on the positions perfect play meets; the optimistic value is about twice the optimal expected
score, above every position's value. On 2x4 the whole board fits clamped at 1024 (the largest tile perfect play
reaches), and backing up every move of each position played (``expected-all``) spreads what is learned fast
enough. On 3x3 the whole board fits clamped at 512 (a 1024, met in 1% of perfect play's games, reads as 512), but
one optimistic value for 48 million positions takes too long to come down: a ``2x6`` network is first trained by
TD(0) for a few minutes (``--pretrain``), and every position starts at its value instead.
"""

from __future__ import annotations

_EXACT = {"target": "expected", "alpha": 1.0, "update": "forward"}

RECIPES: dict[tuple[str, str], dict] = {
    ("2048", "2x2"): {"network": "1x4", **_EXACT, "optimistic": 200.0, "episodes": 20_000, "block": 2_000},
    ("2048", "2x3"): {"network": "1x6", **_EXACT, "optimistic": 1000.0, "episodes": 4_000_000, "block": 200_000},
    # the whole board clamped at 1024 (11**8 weights, 857 MB), every move of a position backed up, on two threads
    ("2048", "2x4"): {"network": "01234567", "clamp": 10, "target": "expected-all", "alpha": 1.0, "update": "forward",
                      "optimistic": 4000.0, "threads": 2, "episodes": 3_000_000, "block": 250_000},
    # the whole board clamped at 512 (10**9 weights, 3.73 GiB), started from a 2x6 network's values learned first
    ("2048", "3x3"): {"network": "012345678", "clamp": 9, "memory_limit": 4 << 30, "pretrain": "2x6:3000000",
                      "target": "expected-all", "alpha": 1.0, "update": "forward", "threads": 2,
                      "episodes": 1_000_000, "block": 250_000},
    ("2584", "2x3"): {"network": "1x6", "clamp": 12, **_EXACT, "optimistic": 3000.0, "episodes": 2_000_000,
                      "block": 200_000},
}
"""(game, board) -> the settings of its recipe (:class:`td2048.settings.TrainSettings` fields)."""

_TRANSPOSED = {"3x2": "2x3", "4x2": "2x4"}  # a board's transpose trains the same network, transposed


def recipe(board: str, game: str = "2048") -> dict:
    """The recipe of a board and game: the settings its ``td2048 train`` defaults to.

    Parameters
    ----------
    board : str
        The board's name (``"2x3"``); a transposed board (``"3x2"``) takes its transpose's recipe, whose
        presets it has under the same names.
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    dict
        :class:`~td2048.settings.TrainSettings` fields and values; empty where the board has no recipe (4x4,
        whose defaults are the course's, and the boards too large to solve).
    """
    return dict(RECIPES.get((game, _TRANSPOSED.get(board, board)), {}))


def recipe_command(board: str, game: str = "2048") -> str:
    """The recipe as the command line that trains it (every setting spelled out).

    Parameters
    ----------
    board : str
        The board's name.
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    str
        ``td2048 train --board B ...``.
    """
    words = ["td2048", "train", "--board", board] + (["--game", game] if game != "2048" else [])
    for key, value in recipe(board, game).items():
        text = f"{value:g}" if isinstance(value, float) else str(value)
        if key == "memory_limit":
            text = f"{value >> 30}GiB" if value % (1 << 30) == 0 else f"{value >> 20}MiB"
        words += [f"--{key.replace('_', '-')}", text]
    return " ".join(words)
