"""``td2048 watch``: a model plays one game live in the terminal, with the value of every move from the board
on screen."""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from typing import TYPE_CHECKING

import numpy as np

from td2048.cli.options import add_search_arguments, nonnegative_float_arg, nonnegative_int_arg
from td2048.games.tiles import tile_value
from td2048.io.model import load_model
from td2048.models import model_or_shipped
from td2048.search_settings import parse_search

if TYPE_CHECKING:
    from td2048.cli.terminal import Keys
    from td2048.play import Agent

HELP = "watch a model play one game in the terminal, with the value of every move from the board shown"
DESCRIPTION = """\
Play one game with a model and show it move by move on the model's board (4x4, 3x3, 2x4, ...):
the board in colour, the score, the move number, the last move (the one that made the board)
and the values of the four moves from the board on screen (r + the afterstate's value at the
search depth, what td2048 analyze prints for that board; illegal moves marked), the one the
model plays next marked with >. Keys: space pauses and resumes, n or the right arrow plays one
move while paused, q quits with the game's summary.

When stdout is not a terminal: one line per move (number, move, reward, score, and the four
values the move was chosen by: those of the board before it), then the final board and the
summary, with no delay. The same --seed plays the same game: the first game of td2048 eval
--seed S with the same search options (at any depth).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", default=None,
                   help="a .td2048 model file (a run's model.td2048 or snapshot.td2048; default: the model that "
                        "ships with td2048, a 4x5 network for 2048)")
    p.add_argument("--delay", type=nonnegative_float_arg, default=0.15, metavar="S",
                   help="seconds between moves on a terminal (default 0.15)")
    p.add_argument("--seed", type=nonnegative_int_arg, default=None,
                   help="random seed (default: drawn, and printed in the summary to watch the game again)")
    add_search_arguments(p)


class Game:
    """Game ``index`` of ``agent``'s seed, a move at a time, from two new tiles on an empty board (as every game
    starts): the game ``td2048 eval`` plays as that game.

    Each board is searched as soon as it is reached, before it is shown: :attr:`values` are those of the moves
    from :attr:`board` and :attr:`choice` the move played from it next, while :attr:`direction` and
    :attr:`reward` are those of the move that made it. (The game is the same: each search is only done one
    screen earlier.)

    Parameters
    ----------
    agent : Agent
        Plays the game (its first thread's random state and transposition table).
    index : int
        The game's index of the seed.
    """

    def __init__(self, agent: Agent, index: int = 0):
        self.agent, self.game, self.shape = agent, agent.network.game, agent.network.board
        agent.start_game(index)
        self.board = agent.spawn(agent.spawn(agent.empty_board))
        self.score = self.moves = self.reward = 0
        self.direction = -1  # of the move that made the board (-1: none yet)
        self._search()

    def _search(self) -> None:
        """The values of the board's moves, the move chosen, and the board after it and its new tile."""
        self.values = np.empty(4)  # a new array: one handed out before keeps the values of its board
        self.choice, self._reward, _, self._next = self.agent.step(self.board, self.values)
        self.over = self.choice < 0

    def step(self) -> None:
        """Play the move chosen from the board (nothing once the game is over), then search the new board."""
        if self.over:
            return
        self.direction, self.reward, self.board = self.choice, self._reward, self._next
        self.score += self.reward
        self.moves += 1
        self._search()

    def screen(self, title: str, state: str):
        """The live screen of the game now (see :func:`td2048.cli.terminal.view`)."""
        from td2048.cli.terminal import view

        return view(title, self.board, self.game, self.score, self.moves, self.direction, self.reward, self.values,
                    state, self.choice, self.shape)


def run(args: argparse.Namespace) -> int:
    args.model = model_or_shipped(args.model)
    network, _ = load_model(args.model)
    search = parse_search(args.depth, args.tt_size, args.limit, args.downgrade, network.game)
    from td2048.cli.terminal import Keys, board_codes, board_text  # the options are good: now the compiled code
    from td2048.play import Agent

    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    game = Game(Agent(network, search, seed, memory_limit=args.memory_limit))
    board = "" if network.board.full else f" on the {network.board} board"
    title = f"{args.model}: {network.spec.label}, {network.game}{board}, {search.describe()}, seed {seed}"
    started = time.monotonic()
    with Keys() as keys:
        try:
            ending = _live(game, keys, title, args.delay) if sys.stdout.isatty() else _plain(game, keys, title)
        except KeyboardInterrupt:
            ending = "interrupted"
    if not sys.stdout.isatty():
        print(board_text(game.board, game.game, game.shape))
    largest = tile_value(game.game, max(board_codes(game.board, game.shape)))
    print(f"# {ending}: score {game.score}, {game.moves} moves, largest tile {largest}, "
          f"{time.monotonic() - started:.1f} s (seed {seed})")
    return 130 if ending == "interrupted" else 0


def _plain(game: Game, keys: Keys, title: str) -> str:
    from td2048.cli.terminal import move_header, move_line

    print(f"# {title}")
    print(move_header())
    while not game.over:
        if keys.read(0) == "q":
            return "stopped"
        values = game.values  # of the board the move is played from: the values it was chosen by
        game.step()
        print(move_line(game.moves, game.direction, game.reward, game.score, values))
    return "game over"


def _live(game: Game, keys: Keys, title: str, delay: float) -> str:
    from rich.live import Live  # imported when drawn: every td2048 command imports this module

    paused, ending = False, None
    with Live(game.screen(title, "playing"), auto_refresh=False) as live:
        due = time.monotonic() + delay
        while ending is None:
            key = keys.read(None if paused else due - time.monotonic())
            if key == "q":
                ending = "stopped"
            elif key == " ":
                paused = not paused
            elif key is None or (paused and key in ("n", "right")):
                game.step()
                due = time.monotonic() + delay
                ending = "game over" if game.over else None
            else:
                continue
            live.update(game.screen(title, ending or ("paused" if paused else "playing")), refresh=True)
    return ending
