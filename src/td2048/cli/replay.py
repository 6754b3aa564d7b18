"""``td2048 replay``: recorded games as one self-contained HTML page."""

from __future__ import annotations

import argparse

from td2048.cli.options import positive_int_arg
from td2048.config import REPLAY_MAX_GAMES as MAX_GAMES

HELP = "replay recorded games as an HTML page"
DESCRIPTION = f"""\
Check a file of episode records (td2048 eval --record) with the judge's rules, replay it, and
write one self-contained HTML page (no network, no other files): the board with the score, the
move number, the largest tile and the last move; play / pause, step, a slider over the moves,
the speed; a picker of the games; keys: space, left / right, Home / End, up / down for speed.

--game is the game's rules, as in td2048 judge; left out, it is detected from the record (the
game whose rules every line follows; 2048 when both do). --show K picks the game shown first
(1-based; --game already names the game type in every command). The page holds the boards of
the first --max-games games (default {MAX_GAMES}; about 25 bytes per move). Exit 2 if the file
cannot be read or breaks the rules.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("records", help="record file, one episode per line")
    p.add_argument("--html", required=True, metavar="OUT.html", help="the page to write")
    p.add_argument("--game", choices=("2048", "2584"), default=None,
                   help="the rules to replay with (default: detect them from the record)")
    p.add_argument("--show", type=positive_int_arg, default=1, metavar="K", help="the game shown first (default 1)")
    p.add_argument("--max-games", type=positive_int_arg, default=MAX_GAMES, metavar="N",
                   help=f"games on the page, the first N of the file (default {MAX_GAMES})")


def run(args: argparse.Namespace) -> int:
    from td2048.io.replay_html import write_replay_html

    s = write_replay_html(args.records, args.html, args.game, args.show, args.max_games)
    print(f"{args.html}: {s.embedded} of {s.games} games of {s.game}{' (detected)' if s.detected else ''}, "
          f"{s.moves:,} moves, {s.size / 1024:,.0f} KiB")
    return 0
