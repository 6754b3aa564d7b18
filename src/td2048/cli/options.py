"""Option types shared by the commands: each turns bad text into a one-line usage error."""

from __future__ import annotations

import argparse

from td2048.config import DEFAULT_NETWORK
from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape
from td2048.presets import PRESETS, preset_names
from td2048.search_settings import DEFAULT_TT_SIZE, MAX_DEPTH
from td2048.settings import MERGE_OFF, merge_off
from td2048.spec import parse_network, parse_size

NETWORK_HELP = (f"preset ({', '.join(PRESETS)} on 4x4; other boards have their own: see the Boards page) or hex "
                "tuples separated by commas, e.g. 012345,456789 (the board's cells, row-major, 0 top-left)")
BOARD_HELP = "the board: R rows by C columns, from 2x2 up to 4x4 (2x3, 3x3, 2x4, 3x4, ...) (default 4x4)"


def _typed(convert, what):
    def parse(text):
        try:
            return convert(text)
        except (TD2048Error, ValueError) as e:
            message = str(e) if isinstance(e, TD2048Error) else f"bad {what} {text!r}"
            raise argparse.ArgumentTypeError(message) from None
    parse.__name__ = what
    return parse


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise TD2048Error(f"must be at least 1, not {value}")
    return value


def nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise TD2048Error(f"must be >= 0, not {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise TD2048Error(f"must be a positive number, not {text}")
    return value


def nonnegative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise TD2048Error(f"must be a number >= 0, not {text}")
    return value


def value_at(convert):
    """``VALUE[@EPISODE]`` (a start check's bar and, if given, its own episode): (VALUE by ``convert``,
    EPISODE or None)."""
    def parse(text: str):
        value, at, episode = text.partition("@")
        return convert(value.strip()), (positive_int(episode.strip()) if at else None)
    return parse


def scores(text: str) -> list[int]:
    """--score-at-least: scores separated by commas (``1000,3000``), each a whole number >= 0."""
    out = []
    for part in text.split(","):
        value = int(part.strip())
        if value < 0:
            raise TD2048Error(f"a score is at least 0, not {value}")
        out.append(value)
    return out


def merge_seconds(text: str) -> float | str:
    """--merge-every: a positive number of seconds, or ``off`` (one shared table, no copies)."""
    return MERGE_OFF if merge_off(text) else positive_float(text)


def network_text(text: str) -> str:
    if text.strip() not in preset_names():  # a board's preset is checked with the board
        parse_network(text)  # validate early, with the preset's default isomorphisms
    return text


def board_text(text: str) -> str:
    """--board: ``RxC`` (``3x3``), checked, as its canonical name."""
    return BoardShape.parse(text).name


network_arg = _typed(network_text, "network")
board_arg = _typed(board_text, "board")
size_arg = _typed(parse_size, "size")
positive_int_arg = _typed(positive_int, "count")
nonnegative_int_arg = _typed(nonnegative_int, "integer")
positive_float_arg = _typed(positive_float, "number")
nonnegative_float_arg = _typed(nonnegative_float, "number")
merge_seconds_arg = _typed(merge_seconds, "number")
scores_arg = _typed(scores, "scores")
score_at_arg = _typed(value_at(positive_float), "SCORE[@EPISODE]")
tile_at_arg = _typed(value_at(positive_int), "TILE[@EPISODE]")
share_at_arg = _typed(value_at(positive_float), "SHARE[@EPISODE]")
SCORES_HELP = ("the exact distribution of the final score: print the probability of each score X or more (X[,X...], "
               "e.g. 1000,3000), its median and most likely score; --json adds score_median, score_mode and "
               "p_score_at_least")


def add_network_arguments(parser: argparse.ArgumentParser, default: str | None = DEFAULT_NETWORK,
                          memory_default: str | None = "2GiB") -> None:
    """--network, --isomorphisms, --memory-limit; ``default=None`` leaves --network unset unless given, and
    ``memory_default=None`` --memory-limit (a small board's recipe sets its own)."""
    parser.add_argument("--network", type=network_arg, default=default,
                        help=f"{NETWORK_HELP} (default {default or DEFAULT_NETWORK} on 4x4, the board's first preset "
                             "on other boards)")
    parser.add_argument("--isomorphisms", type=int, choices=(1, 4, 8), default=None,
                        help="boards sharing each table: 8 = rotations and reflections, 4 = rotations, 1 = none "
                             "(default: the preset's; 8 for custom tuples)")
    parser.add_argument("--clamp", type=int, default=None, metavar="K",
                        help="feature codes min(code, K), tables of (K+1)**n entries (default: 16**n tables "
                             "for 2048, K = 21 for 2584)")
    parser.add_argument("--memory-limit", type=size_arg, default=memory_default,
                        help="largest weight size allowed, e.g. 512MB or 4GiB (default 2GiB, the course's limit"
                             + ("" if memory_default else "; 4GiB for 3x3's recipe") + ")")


def require_4x4(network, what: str) -> None:
    """Refuse, in one line, a model of another board for what only 4x4 has (the course's files, ...)."""
    if not network.board.full:
        raise TD2048Error(f"{what} only on the 4x4 board: this model plays the {network.board} board")


def add_board_argument(parser: argparse.ArgumentParser, default: str | None = "4x4") -> None:
    """--board RxC: the board a new network plays on."""
    parser.add_argument("--board", type=board_arg, default=default, metavar="RxC", help=BOARD_HELP)


def add_game_argument(parser: argparse.ArgumentParser, default: str | None = "2048") -> None:
    parser.add_argument("--game", choices=("2048", "2584"), default=default,
                        help="2048, or 2584 (Fibonacci: neighbouring Fibonacci tiles merge) (default 2048)")
    parser.add_argument("--cells", type=int, choices=(4, 5), default=None,
                        help="bits per cell: 2048 plays on 4 (the default and fastest; two 32768 tiles do not "
                             "merge) or 5 (tiles up to 2**31, about 2x slower); 2584 always on 5")


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """--depth, --tt-size, --limit, --downgrade: how moves are chosen (see td2048.play)."""
    parser.add_argument("--depth", type=positive_int_arg, default=1, metavar="N",
                        help="expectimax depth in moves, TDL2048+'s plies: 1 = greedy r + V(afterstate); N > 1 "
                             "takes, for each move, r + the expectation over every new tile of the best value at "
                             f"depth N - 1 (default 1, at most {MAX_DEPTH})")
    parser.add_argument("--tt-size", default=None, metavar="SIZE",
                        help=f"transposition table per thread, at depth > 1 (default {DEFAULT_TT_SIZE}; 0: none); "
                             "counted in --memory-limit")
    parser.add_argument("--limit", default=None, metavar="D0,D1,...",
                        help="depth limits by empty cells (TDL2048+'s limit=): the deepest search of an afterstate "
                             "with 0, 1, 2, ... empty cells; the last number holds for the rest (default: none)")
    parser.add_argument("--downgrade", type=positive_int_arg, default=None, metavar="TILE",
                        help="2048: search boards holding a tile >= TILE with their highest gaps closed, so that "
                             "a network that never saw such tiles plays on (e.g. 32768; default: off)")
    parser.add_argument("--memory-limit", type=size_arg, default=None,
                        help="weights and transposition tables together at most this (default 2GiB, or the "
                             "model's weights and the tables where they need more)")
