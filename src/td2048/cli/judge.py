"""``td2048 judge``: replay and check episode records as the course's judge does."""

from __future__ import annotations

import argparse
import sys

from td2048.config import JUDGE_SIGNIFICANCE as SIGNIFICANCE

HELP = "check a file of episode records (replay, rules, environment statistics)"
DESCRIPTION = f"""\
Replay every line of a record file from an empty board and check what the course's judge
checks: the order place, place, (slide, place)*; legal slides only; placements of code 1 or
2 on empty cells; the game really over at the end; and an environment consistent with 9:1
new tiles on uniformly random empty cells (tests at significance {SIGNIFICANCE}). Scores are
recomputed by the replay.

Exit 0 with the course's statistics block when the file passes; exit 1 with the first
violation (line, action, board) or the failed test otherwise; exit 2 if the file cannot be read.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="record file, one episode per line")
    p.add_argument("--game", choices=("2584", "2048"), default="2584",
                   help="the rules to replay with (default 2584, the course's game)")


def run(args: argparse.Namespace) -> int:
    from td2048.judge import judge_file

    verdict = judge_file(args.file, args.game)
    if verdict.ok:
        print(verdict.message, end="")
        return 0
    sys.stdout.write(verdict.message + "\n")
    return 1
