"""Games the server runs: each one's boards, moves and new tiles, and the bound on how many it keeps.

A game starts as every game does, two new tiles on an empty board, and goes on a move at a time,
by the player or by the engine::

    s0 --(move, reward)--> afterstate --(new tile: cell, code)--> s1 --> ...

The slides are :meth:`td2048.Board.slide` (the one set of rules); the new tiles come from the game's
own random state (its seed), drawn by the same kernel as every td2048 game (:meth:`td2048.Agent.spawn`;
:class:`Dealer` on a server without a model, the same draws), so a game is the same again from its seed
and its moves. A game is played on the model's board (``network.board``: 4x4, 3x3, 2x4, ...), or on a
solution's without a model, its cells numbered row by row from the top-left corner. The
record of a 4x4 game is one line of the course's record grammar (:mod:`td2048.io.records`), which
``td2048 judge`` checks once the game is over; the course's records hold 4x4 games only.

:class:`GameStore` keeps at most ``max_games`` games, none idle for longer than ``max_age`` seconds:
the least recently used go first, and a game that was dropped answers :class:`Gone`, not
:class:`NotFound`. Each game holds at most 26 bytes per move (its boards, moves, new tiles and rewards),
8 more on a solved board (the expected score each move lost).
"""

from __future__ import annotations

import secrets
import time
from array import array
from collections import OrderedDict

from td2048 import Agent, Board, Network, TD2048Error
from td2048.games.game2048 import MOVE_NAMES, py_spawn_tile
from td2048.games.tiles import tile_value
from td2048.games.wide import py_wide_spawn
from td2048.rng import game_rng_states
from td2048.server import DEFAULT_MAX_AGE, DEFAULT_MAX_GAMES
from td2048.server.engine import Conflict, Gone, NotFound

MAX_SEED = 2**63 - 1
_LETTERS = "URDL"


class Dealer:
    """The new tiles of a game on a board without a model (a solution's): the draws of
    :meth:`td2048.Agent.spawn` of an agent of that seed, by the same kernels, so that a seed gives the same
    game with a model or without.

    Parameters
    ----------
    shape : BoardShape
        The board whose cells take the tiles.
    seed : int
        The game's seed (its game 0's random state, as :class:`td2048.Agent`'s).
    """

    def __init__(self, shape, seed: int):
        self.shape = shape
        self.rng_state = game_rng_states(seed, 0, 1)[0].copy()

    def spawn(self, board):
        """A board with one new tile, drawn from :attr:`rng_state`.

        Parameters
        ----------
        board : int or tuple of (int, int)
            Packed: an int, or (lo, hi) on 5-bit cells.

        Returns
        -------
        int or tuple of (int, int)
            The board with the tile, packed the same way.
        """
        if isinstance(board, tuple):
            return py_wide_spawn(board, self.rng_state, self.shape)
        return py_spawn_tile(board, self.rng_state, self.shape)


def _played_on(source) -> tuple[str, object, bool]:
    """(game, board, 5-bit cells) of a model's network, or of a solution (a server without a model)."""
    if isinstance(source, Network):
        return source.game, source.board, source.wide
    return source.game, source.board, source.rules.wide


class ServedGame:
    """One game: its boards after each new tile, the moves between them, the tiles placed.

    Parameters
    ----------
    source : td2048.Network or td2048.solve.Solution
        The model whose game (2048 or 2584), board and cells this game is played on; on a server without a
        model, the solution's.
    seed : int
        The game's random state's seed (its new tiles).
    game_id : str
        The game's id in the API.
    exact : bool
        Keep the expected score each move lost (a server with a solution): :meth:`summary`'s ``lost``.
    """

    def __init__(self, source, seed: int, game_id: str, exact: bool = False):
        self.id, self.seed = game_id, seed
        self.game, self.shape, self._wide = _played_on(source)
        self._cells = self.shape.n_cells
        # its random state draws this game's new tiles only
        self._dealer = Agent(source, seed=seed) if isinstance(source, Network) else Dealer(self.shape, seed)
        self.created = self.touched = self.acted = time.time()  # acted: its last move or undo
        self.boards = bytearray()  # a code per cell a board: after the two start tiles, then after each move's tile
        self.moves = bytearray()  # direction 0..3 of each move
        self.placed = bytearray()  # cell << 2 | code of each new tile: two at the start, then one per move
        self.rewards = array("Q")  # of each move
        self.exact = exact
        self.losses = array("d")  # the expected score each move lost (kept when exact)
        self.score = 0
        self.searching = False  # the engine's move is being searched (the server takes one move at a time)
        board = Board((0,) * self._cells, self.game, self.shape)
        for _ in range(2):
            board = self._place(board)
        self._push(board)
        self.legal = board.legal_moves()  # the moves that change the board now (none: the game is over)

    @property
    def over(self) -> bool:
        """Whether no move changes the board."""
        return not self.legal

    @property
    def board(self) -> Board:
        return Board(tuple(self.boards[-self._cells:]), self.game, self.shape)

    def _place(self, board: Board) -> Board:
        packed = board.packed(self._wide or max(board.codes) > 15)  # past 32768 on 4-bit cells: as 5-bit
        after = Board.from_packed(self._dealer.spawn(packed), self.game, self.shape)  # on the board's cells only
        cell = next(i for i in range(self._cells) if after.codes[i] != board.codes[i])
        self.placed.append(cell << 2 | after.codes[cell])
        return after

    def _push(self, board: Board) -> None:
        self.boards.extend(board.codes)

    def move(self, name: str, loss: float | None = None) -> dict:
        """Play a move (``"up"``, ``"right"``, ``"down"``, ``"left"``) and the new tile after it.

        Parameters
        ----------
        name : str
            The move.
        loss : float or None
            The expected score the move lost against perfect play (a game that keeps them: ``exact``).

        Returns
        -------
        dict
            ``move``, ``reward``, ``placed`` ({cell, tile}), and :meth:`summary`'s keys.

        Raises
        ------
        Conflict
            The game is over.
        TD2048Error
            A move that does not change the board.
        """
        if self.over:
            raise Conflict(f"game {self.id} is over: start a new one (or undo)")
        board = self.board
        after, reward = board.slide(name)
        if after == board:
            raise TD2048Error(f"{name} does not change the board: the legal moves are "
                              f"{', '.join(board.legal_moves())}")
        board = self._place(after)
        self._push(board)
        self.moves.append(MOVE_NAMES.index(name))
        self.rewards.append(reward)
        if self.exact:
            self.losses.append(loss if loss is not None else float("nan"))
        self.score += reward
        self.legal = board.legal_moves()
        self.acted = time.time()
        return {"move": name, "reward": reward, "placed": self._placement(-1), **self.summary()}

    def undo(self) -> dict:
        """Take back the last move and its new tile.

        Returns
        -------
        dict
            :meth:`summary`.

        Raises
        ------
        Conflict
            No move to take back.
        """
        if not self.moves:
            raise Conflict(f"game {self.id} has no move to undo")
        del self.boards[-self._cells:]
        self.moves.pop()
        self.placed.pop()
        self.score -= self.rewards.pop()
        if self.exact:
            self.losses.pop()
        self.legal = self.board.legal_moves()
        self.acted = time.time()
        return self.summary()

    def _placement(self, index: int) -> dict:
        cell, code = self.placed[index] >> 2, self.placed[index] & 3
        return {"cell": cell, "tile": tile_value(self.game, code)}

    def summary(self) -> dict:
        """The game now: id, board (its tile values, row-major: rows x cols), score, moves played, largest tile,
        the legal moves (in the order up, right, down, left; none once the game is over), whether it is over;
        with ``exact``, ``lost``: the expected score its moves lost against perfect play, in all."""
        board = self.board
        summary = {"id": self.id, "board": [v for row in board.tiles for v in row], "score": self.score,
                   "moves": len(self.moves), "max_tile": board.max_tile, "legal": self.legal, "over": self.over}
        if self.exact:
            summary["lost"] = float(sum(self.losses))
        return summary

    def state(self) -> dict:
        """The game so far: :meth:`summary`, the game, its seed, every move and every tile placed (two at the
        start, then one after each move), enough to replay it."""
        return {**self.summary(), "game": self.game, "seed": self.seed, "history": [MOVE_NAMES[d] for d in self.moves],
                "placed": [self._placement(i) for i in range(len(self.placed))]}

    def record(self, player: str = "td2048", env: str = "random") -> str:
        """The game as one line of the course's record grammar (``td2048 judge`` checks it once it is over).

        Raises
        ------
        Conflict
            A game on another board than 4x4: the course's records hold 4x4 games only.
        """
        if not self.shape.full:
            raise Conflict(f"game {self.id} is on the {self.shape} board: the course's records hold 4x4 games only")
        parts = []
        for i, packed in enumerate(self.placed):
            if i >= 2:
                d, reward = self.moves[i - 2], self.rewards[i - 2]
                parts.append(f"#{_LETTERS[d]}[{reward}]" if reward else f"#{_LETTERS[d]}")
            parts.append(f"{packed >> 2:X}{packed & 3}")
        return (f"{player}:{env}@{int(self.created * 1000)}|{''.join(parts)}|{env}@{int(self.acted * 1000)}")


class GameStore:
    """The games in memory: at most ``max_games``, none idle for longer than ``max_age`` seconds.

    Parameters
    ----------
    source : td2048.Network or td2048.solve.Solution
        The model the games are played with; on a server without a model, the solution whose board and game
        they are played on.
    max_games : int
        Games kept; starting one more drops the least recently used.
    max_age : float
        Seconds a game is kept after its last request.
    exact : bool
        The games keep the expected score each move lost (a server with a solution).

    Raises
    ------
    TD2048Error
        A bound below 1 (games) or not positive (age).
    """

    def __init__(self, source, max_games: int = DEFAULT_MAX_GAMES, max_age: float = DEFAULT_MAX_AGE,
                 exact: bool = False):
        if max_games < 1:
            raise TD2048Error(f"--max-games must be at least 1, not {max_games}")
        if not max_age > 0:
            raise TD2048Error(f"--max-age must be a positive number of seconds, not {max_age}")
        self.source, self.max_games, self.max_age, self.exact = source, max_games, max_age, exact
        self._games: OrderedDict[str, ServedGame] = OrderedDict()  # least recently used first
        self._dropped: OrderedDict[str, str] = OrderedDict()  # id -> why, the latest 16 x max_games ids
        self.started = self.dropped = 0

    def __len__(self) -> int:
        return len(self._games)

    def new(self, seed: int | None = None) -> ServedGame:
        """Start a game (``seed`` None: drawn), dropping the oldest if the store is full.

        Raises
        ------
        TD2048Error
            A seed out of 0 to 2**63 - 1.
        """
        if seed is None:
            seed = secrets.randbelow(MAX_SEED + 1)
        elif not 0 <= seed <= MAX_SEED:
            raise TD2048Error(f"seed must be from 0 to {MAX_SEED}, not {seed}")
        self._expire()
        while len(self._games) >= self.max_games:
            self._drop(next(iter(self._games)), f"the server keeps at most {self.max_games} games, the most "
                                                "recently used")
        game_id = secrets.token_hex(8)
        self._games[game_id] = game = ServedGame(self.source, seed, game_id, self.exact)
        self.started += 1
        return game

    def get(self, game_id: str) -> ServedGame:
        """The game of an id, now the most recently used.

        Raises
        ------
        Gone
            A game this store dropped (too many games, or idle too long).
        NotFound
            An id this store never gave (or dropped long ago).
        """
        self._expire()
        game = self._games.get(game_id)
        if game is None:
            why = self._dropped.get(game_id)
            if why is not None:
                raise Gone(f"game {game_id} was dropped: {why}")
            raise NotFound(f"no game {game_id[:40]!r} on this server")
        self._games.move_to_end(game_id)
        game.touched = time.time()
        return game

    def _expire(self) -> None:
        oldest = time.time() - self.max_age
        while self._games:
            game_id, game = next(iter(self._games.items()))
            if game.touched >= oldest:
                return
            self._drop(game_id, f"the server keeps a game {self.max_age:g} s after its last request")

    def _drop(self, game_id: str, why: str) -> None:
        del self._games[game_id]
        self._dropped[game_id] = why
        self.dropped += 1
        while len(self._dropped) > 16 * self.max_games:
            self._dropped.popitem(last=False)
