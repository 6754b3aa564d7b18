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
TD(0) for a few minutes (``--pretrain``), and every position starts at its value instead. For a machine without
the 7.6 GiB that run holds at its peak, 3x3 has a second recipe: one tuple of 8 of the 9 cells (each symmetric
image leaves out a corner, 382 MiB), started and learned the same way; ``td2048 train --board 3x3`` trains the
best recipe that fits the memory free (:func:`recipe`). 4x3 is too large to solve here, but its optimum is known
(Kaneko and Yamashita, 2025): its recipe is temporal coherence with lambda-returns on six 7-cell tuples in two
stages cut at the 2048, with restarts from the first 2048 board and a check of its start, the best of the methods
measured against that optimum; the board's ``4x6`` network and two 7-cell tuples learned the same way, and that
network in one stage by TC(0), are its recipes for less memory.
3x4 takes 4x3's recipes, their tuples turned onto its cells.
"""

from __future__ import annotations

_EXACT = {"target": "expected", "alpha": 1.0, "update": "forward"}

RECIPES: dict[tuple[str, str], tuple[dict, ...]] = {
    ("2048", "2x2"): ({"network": "1x4", **_EXACT, "optimistic": 200.0, "episodes": 20_000, "block": 2_000},),
    ("2048", "2x3"): ({"network": "1x6", **_EXACT, "optimistic": 1000.0, "episodes": 4_000_000, "block": 200_000},),
    # the whole board clamped at 1024 (11**8 weights, 857 MB), every move of a position backed up, on two threads
    ("2048", "2x4"): ({"network": "01234567", "clamp": 10, "target": "expected-all", "alpha": 1.0,
                       "update": "forward", "optimistic": 4000.0, "threads": 2, "episodes": 3_000_000,
                       "block": 250_000},),
    ("2048", "3x3"): (
        # the whole board clamped at 512 (10**9 weights, 3.73 GiB), started from a 2x6 network's values learned first
        {"network": "012345678", "clamp": 9, "memory_limit": 4 << 30, "pretrain": "2x6:3000000",
         "target": "expected-all", "alpha": 1.0, "update": "forward", "threads": 2, "episodes": 1_000_000,
         "block": 250_000},
        # for less memory: one tuple of 8 of the 9 cells (each symmetric image leaves out a corner), clamped at
        # 512 (10**8 weights, 382 MiB), started and learned the same way
        {"network": "01234567", "clamp": 9, "pretrain": "2x6:3000000", "target": "expected-all", "alpha": 1.0,
         "update": "forward", "threads": 2, "episodes": 1_000_000, "block": 250_000},
    ),
    ("2584", "2x3"): ({"network": "1x6", "clamp": 12, **_EXACT, "optimistic": 3000.0, "episodes": 2_000_000,
                       "block": 200_000},),
    ("2048", "4x3"): (
        # too large to solve here (its optimum is known): TC with lambda-returns on six 7-cell tuples (the next
        # recipe's, its four 6-cell tuples grown by a cell toward the first row or column), clamped at 4096, in two
        # stages cut at the 2048, the second promoted (a copy of the first when a game first builds one; 2.81 GiB,
        # 8.43 GiB with TC's accumulators), 30% of the games restarted from a game's first 2048 board; a start
        # thrown away unless by 50,000 episodes it builds its 2048s in a corner in 45% of its games (the starts that
        # build them off the corners build no 4096), and by 100,000 has built a 4096 and averages 16,900 from 50,000
        # on (at most 40 starts); half an hour of training on two threads (up to 5 million
        # episodes), a snapshot every 15 minutes (a 9 GB file each)
        {"network": "0369142,147a250,0361472,0123456,0369147,147a036", "clamp": 12, "memory_limit": 10 << 30,
         "stages": "2048", "restarts": 0.3, "tc_from": "0", "update": "backward", "lam": 0.5,
         "start_over_below": 16900.0, "start_over_without": 4096, "start_over_corner_below": 0.45,
         "start_over_corner_below_at": 50_000, "start_over_at": 100_000, "max_starts": 40,
         "threads": 2, "episodes": 5_000_000,
         "time_limit": "30m", "block": 100_000, "snapshot_every": "15m"},
        # for less memory: TC with lambda-returns on the board's 4x6 and two 7-cell tuples (a column and three
        # cells of the next), clamped at 4096, in two stages cut at the 2048 (1.1 GiB, 3.25 GiB with TC's
        # accumulators), 30% of the games restarted from a game's first 2048 board; about half an hour on two
        # threads
        {"network": "036914,147a25,036147,012345,0369147,147a036", "clamp": 12, "memory_limit": 4 << 30,
         "stages": "2048", "restarts": 0.3, "tc_from": "0", "update": "backward", "lam": 0.5, "threads": 2,
         "episodes": 4_800_000, "block": 100_000},
        # and for less still: that network in one stage (554 MiB), TC(0), no restarts
        {"network": "036914,147a25,036147,012345,0369147,147a036", "clamp": 12, "tc_from": "0",
         "update": "forward", "threads": 2, "episodes": 3_500_000, "block": 100_000},
    ),
}
"""(game, board) -> the settings of its recipes (:class:`td2048.settings.TrainSettings` fields), the best first;
a later one needs less memory."""

_TRANSPOSED = {"3x2": "2x3", "4x2": "2x4", "3x4": "4x3"}  # a board's transpose trains the same, transposed


def _transposed_network(network: str, source: str) -> str:
    """A recipe's network moved from its board to the transposed one: a preset keeps its name (the transposed
    board has it under the same name), hex tuples are moved cell by cell."""
    from td2048.games.shape import BoardShape
    from td2048.presets import presets_of, transposed_tuples

    shape = BoardShape.parse(source)
    if network in presets_of(shape):
        return network
    return ",".join(transposed_tuples(tuple(network.split(",")), shape.rows, shape.cols))


def recipes(board: str, game: str = "2048") -> list[dict]:
    """Every recipe of a board and game, the best first (each later one needs less memory).

    Parameters
    ----------
    board : str
        The board's name (``"2x3"``); a transposed board (``"3x2"``, ``"3x4"``) takes its transpose's recipes,
        their tuples moved to its cells (a preset keeps its name: the transposed board has it too).
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    list of dict
        :class:`~td2048.settings.TrainSettings` fields and values, one dict a recipe; empty where the board has
        no recipe (4x4, whose defaults are the course's).
    """
    source = _TRANSPOSED.get(board, board)
    plans = [dict(plan) for plan in RECIPES.get((game, source), ())]
    if source != board:
        for plan in plans:
            plan["network"] = _transposed_network(plan["network"], source)
    return plans


def peak_memory(plan: dict, board: str, game: str = "2048") -> int:
    """The most memory a recipe's run holds at once, in bytes: its weights (TC's accumulators too) twice, as
    while a snapshot is copied out, and the pretrained network's weights while it starts them.

    Parameters
    ----------
    plan : dict
        A recipe (:func:`recipes`).
    board, game : str
        The board and game it trains.

    Returns
    -------
    int
    """
    from td2048.settings import TrainSettings

    settings = TrainSettings(board=board, game=game, **plan)
    spec = settings.spec()
    weights = spec.tc_nbytes() if settings.tc_from is not None else spec.nbytes
    pretrained = settings.pretrain_settings().spec().nbytes if settings.pretrain else 0
    return 2 * weights + pretrained


def recipe(board: str, game: str = "2048", memory: int | None = None) -> dict:
    """The recipe of a board and game that ``td2048 train`` defaults to: the best one that fits the memory.

    Parameters
    ----------
    board : str
        The board's name (``"2x3"``); a transposed board takes its transpose's recipe.
    game : str
        ``"2048"`` or ``"2584"``.
    memory : int, optional
        Bytes the run may hold (:func:`peak_memory`); None: the best recipe, whatever it needs.

    Returns
    -------
    dict
        :class:`~td2048.settings.TrainSettings` fields and values; empty where the board has no recipe, or
        where none of its recipes fits ``memory``.
    """
    plans = recipes(board, game)
    if memory is None:
        return plans[0] if plans else {}
    return next((plan for plan in plans if peak_memory(plan, board, game) <= memory), {})


_RUN_KEYS = ("memory_limit", "threads", "episodes", "block", "snapshot_every")  # memory, threads, length: the last
_NETWORK_KEYS = ("network", "clamp", "isomorphisms")  # the first line's, after the board and game
# the run's start check and limit: a line before the last
_START_KEYS = ("start_over_below", "start_over_without", "start_over_corner_below", "start_over_at", "max_starts",
               "time_limit")
_CHECK_EPISODES = {"start_over_below": "start_over_below_at", "start_over_without": "start_over_without_at",
                   "start_over_corner_below": "start_over_corner_below_at"}
_OPTIONS = {"lam": "lambda"}  # settings whose option is not the field's name
_WIDTH = 96  # the longest line of a wrapped command, its backslash and its indent included


def recipe_command(board: str, game: str = "2048", which: int = 0, wrap: bool = False) -> str:
    """A recipe as the command line that trains it (every setting spelled out).

    Parameters
    ----------
    board : str
        The board's name.
    game : str
        ``"2048"`` or ``"2584"``.
    which : int
        Which of the board's recipes (:func:`recipes`): 0 the best.
    wrap : bool
        One group of options a line, continued with a backslash (:func:`plan_command`).

    Returns
    -------
    str
        ``td2048 train --board B ...``.
    """
    return plan_command(recipes(board, game)[which], board, game, wrap)


def plan_command(plan: dict, board: str, game: str = "2048", wrap: bool = False) -> str:
    """Settings as the ``td2048 train`` command line that trains them (every setting spelled out).

    Parameters
    ----------
    plan : dict
        :class:`~td2048.settings.TrainSettings` fields and values.
    board, game : str
        The board and game.
    wrap : bool
        Lines joined by backslashes: the board and network, then how it learns, then its start's check and its
        time limit if any, then the memory it may hold, its threads and its length (the research page's Recipes
        block); a group longer than a line of 96 characters goes on over the next.

    Returns
    -------
    str
        ``td2048 train --board B ...``.
    """
    groups: list[list[list[str]]] = [[["td2048", "train", "--board", board] + (["--game", game] if game != "2048"
                                                                                else [])], [], [], []]
    for key, value in plan.items():
        if key in _CHECK_EPISODES.values():  # written with its check: --start-over-below SCORE@EPISODE
            continue
        text = f"{value:g}" if isinstance(value, float) else str(value)
        if plan.get(_CHECK_EPISODES.get(key)) is not None:
            text += f"@{plan[_CHECK_EPISODES[key]]}"
        if key == "memory_limit":
            text = f"{value >> 30}GiB" if value % (1 << 30) == 0 else f"{value >> 20}MiB"
        group = 0 if key in _NETWORK_KEYS else 3 if key in _RUN_KEYS else 2 if key in _START_KEYS else 1
        flag = "--" + _OPTIONS.get(key, key.replace("_", "-"))
        option = [flag, text]
        if (key, value) == ("tc_from", "0"):
            option = ["--tc"]
        elif key == "promote":  # a multistage network's new stages promoted (the default) or started fresh
            option = [] if value else ["--no-promotion"]
        if option:
            groups[group].append(option)
    if not wrap:
        return " ".join(" ".join(option) for options in groups for option in options)
    lines: list[str] = []
    for k, options in enumerate(groups):  # a group too long for a line goes on over the next, whole options
        line = ""
        for option in options:
            text = " ".join(option)
            if line and (k == 0 or len(line) + len(text) + 7 <= _WIDTH):  # its indent, a space, " \\"
                line += " " + text
            else:
                lines += [line] if line else []
                line = text
        lines += [line] if line else []
    return " \\\n    ".join(lines)
