"""The engine behind the server: a model, its searches on worker threads, and the bound on waiting work.

Plain Python (no web framework): :mod:`td2048.server.app` turns its answers and its errors into HTTP.

Searches run on ``threads`` worker threads, off the event loop (the kernels release the GIL), each
thread with its own :class:`td2048.Agent` per depth. At most ``threads`` searches run at once and up to
``queue`` more wait; a request past that is refused at once (:class:`Busy`), never left to hang::

    request --> admitted? --no--> Busy (HTTP 503)
                   | yes
                   v
              [ queue: up to `queue` waiting ] --> [ `threads` workers: Agent.analyze ] --> answer

A move's value is r + the value of its afterstate at the search depth, exactly as ``td2048 analyze``
prints it (the same search: no transposition table, no depth limits, no downgrading).

On a solved board (``td2048 serve --solution FILE``) the engine also holds the solution
(:mod:`td2048.solve`): each move's exact value, Q*(s, a), the expected score under perfect play after it
(:meth:`td2048.solve.Solution.move_values`), beside the model's; without a model, the engine is perfect play
itself, and there is no search depth.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from td2048 import Agent, Board, TD2048Error
from td2048.games.game2048 import MOVE_NAMES
from td2048.games.tiles import tile_value
from td2048.search_settings import MAX_DEPTH, parse_search
from td2048.server import DEFAULT_QUEUE

T = TypeVar("T")


class Busy(TD2048Error):
    """Every search thread is busy and the queue is full (HTTP 503)."""


class NotFound(TD2048Error):
    """No such game (HTTP 404)."""


class Gone(TD2048Error):
    """A game the server dropped to stay within its bounds (HTTP 410)."""


class Conflict(TD2048Error):
    """A request that the game's state refuses: a move after the game is over, an undo of nothing (HTTP 409)."""


class NotHeld(TD2048Error):
    """A board that the solution holds no value of: the start never reaches it (HTTP 422 where a value is needed,
    the engine's move without a model; an analysis says that the board is not reachable)."""


NO_DEPTH = ("this server has no model: its engine plays perfectly from the solution, with no search depth "
            "(leave depth out)")


def default_threads() -> int:
    """Search threads when ``--threads`` is left out: the CPUs this process may use, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


class Engine:
    """A model's searches for a server: values of positions, on worker threads, bounded; and a solution's exact
    values of positions on a solved board.

    Parameters
    ----------
    network : td2048.Network or None
        The model's network (2048 or 2584, any cells, any board: its boards are ``network.board``); None: a
        server without a model, whose engine is the solution's perfect play.
    header : dict
        The model file's header (for :meth:`model_info`).
    name : str or None
        What the model is called in :meth:`model_info` (its file name, never a path); None without a model.
    depth : int
        The depth of a request that names none (not used without a model).
    max_depth : int
        The deepest search a request may ask for (not used without a model).
    threads : int
        Searches that run at once.
    queue : int
        Searches that may wait for a thread; more are refused with :class:`Busy`.
    solution : td2048.solve.Solution or None
        A solution of the model's board and game (every reachable position's exact value), or None.
    solution_name : str or None
        What the solution is called in :meth:`model_info` (its file name, never a path).

    Raises
    ------
    TD2048Error
        Depths out of range (1 to ``max_depth``, at most td2048's deepest search) or counts below 1 (0 for queue);
        neither a model nor a solution; a solution of another board or game than the model's.
    """

    def __init__(self, network, header: dict, name: str | None, depth: int = 2, max_depth: int = 4,
                 threads: int = 1, queue: int = DEFAULT_QUEUE, solution=None, solution_name: str | None = None):
        if network is None and solution is None:
            raise TD2048Error("a server needs a model or a solution")
        if network is not None:
            if not 1 <= max_depth <= MAX_DEPTH:
                raise TD2048Error(f"--max-depth must be from 1 to {MAX_DEPTH}, not {max_depth}")
            if not 1 <= depth <= max_depth:
                raise TD2048Error(f"--depth must be from 1 to --max-depth ({max_depth}), not {depth}")
        if threads < 1:
            raise TD2048Error(f"--threads must be at least 1, not {threads}")
        if queue < 0:
            raise TD2048Error(f"--queue must be >= 0, not {queue}")
        if network is not None and solution is not None and (solution.board != network.board
                                                             or solution.game != network.game):
            raise TD2048Error(f"{solution_name or 'the solution'} solves {solution.game} on {solution.board.name}, "
                              f"but the model plays {network.game} on {network.board.name}")
        self.network, self.header, self.name = network, header, None if name is None else Path(name).name
        self.solution, self.solution_name = solution, None if solution_name is None else Path(solution_name).name
        played = network if network is not None else solution
        self.game, self.shape = played.game, played.board
        if network is None:
            depth = max_depth = None
        self.depth, self.max_depth, self.threads, self.queue = depth, max_depth, threads, queue
        self._searches = {d: parse_search(d, 0, game=self.game) for d in range(1, (max_depth or 0) + 1)}
        self._local = threading.local()  # each worker thread's agents, by depth
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="td2048-search")
        self.in_flight = 0  # admitted and not finished: running plus waiting (read and written on the event loop)

    @property
    def tiles(self) -> list[int]:
        """Every tile value a board of this model may hold, 0 (empty) first: up to the largest its cells hold and
        a board of its shape can ever reach (1024 on 3x3); without a model, those of the solution's positions."""
        if self.network is None:
            return [tile_value(self.game, code) for code in range(self.solution.aims)]
        largest = min(31 if self.network.wide else 15, self.shape.largest_code(self.game))
        return [tile_value(self.game, code) for code in range(largest + 1)]

    def board(self, tiles: list[int]) -> Board:
        """A board of this model's game and shape from its tile values (row-major), checked: one per cell of the
        model's board (16 on 4x4, 9 on 3x3), tiles of the game, within the model's cells.

        Raises
        ------
        TD2048Error
            A list that is not one tile of the game per cell, or a tile past what the model's cells hold.
        """
        board = Board.from_tiles(tiles, self.game, self.shape)
        if self.network is not None:
            self.packed(board)
        return board

    def packed(self, board: Board):
        """The board as this model's kernels take it.

        Raises
        ------
        TD2048Error
            A tile past what the model's cells hold (65536 and up on 4-bit cells).
        """
        try:
            return board.packed(self.network.wide)
        except TD2048Error:
            raise TD2048Error(f"the board holds a tile past {tile_value(self.game, 15)}, more than this model's "
                              "4-bit cells hold") from None

    def check_depth(self, depth: int | None) -> int | None:
        """The depth of a request: ``depth``, or the server's when None (None without a model).

        Raises
        ------
        TD2048Error
            A depth out of 1 to ``max_depth``; any depth on a server without a model.
        """
        if self.network is None:
            if depth is not None:
                raise TD2048Error(NO_DEPTH)
            return None
        if depth is None:
            return self.depth
        if not 1 <= depth <= self.max_depth:
            raise TD2048Error(f"depth must be from 1 to {self.max_depth} on this server, not {depth}")
        return depth

    def _agent(self, depth: int) -> Agent:
        agents = getattr(self._local, "agents", None)
        if agents is None:
            agents = self._local.agents = {}
        if depth not in agents:
            agents[depth] = Agent(self.network, self._searches[depth])
        return agents[depth]

    def values(self, board: Board, depth: int | None) -> dict[str, float | None]:
        """Every move's value (None: illegal), in the order up, right, down, left; on the calling thread. The
        model's at the depth; without a model, the exact values (:meth:`exact`).

        Raises
        ------
        TD2048Error
            A board with no legal move, or a value that is not a finite number (a damaged model); without a
            model, a board the solution does not hold (:class:`NotHeld`).
        """
        if self.network is None:
            return self.exact(board)["moves"]
        values = self._agent(depth).analyze(self.packed(board))
        if all(v is None for v in values.values()):
            raise TD2048Error("the board has no legal move: the game is over")
        if any(v is not None and not math.isfinite(v) for v in values.values()):
            raise TD2048Error("the model gives a value that is not a finite number")
        return values

    def exact(self, board: Board) -> dict:
        """A position's exact values from the solution: ``moves`` (each move's Q*, the expected score under
        perfect play after it; None: illegal), ``best`` (the perfect move: the first of the largest Q* in the
        order up, right, down, left) and ``value`` (its Q*, the position's expected score under perfect play).

        Raises
        ------
        NotHeld
            A board the solution holds no value of (the start never reaches it).
        TD2048Error
            A board with no legal move; a server without a solution.
        """
        if self.solution is None:
            raise TD2048Error("this server has no solution: td2048 serve --solution FILE gives the exact values")
        try:
            q = self.solution.move_values(board)
        except TD2048Error:
            raise NotHeld(f"{self.solution_name or 'the solution'} holds no value of this board: the start of the "
                          "game never reaches it") from None
        moves = {name: (None if math.isnan(v) else float(v)) for name, v in zip(MOVE_NAMES, q, strict=True)}
        if all(v is None for v in moves.values()):
            raise TD2048Error("the board has no legal move: the game is over")
        best = best_move(moves)
        return {"moves": moves, "best": best, "value": moves[best]}

    def exact_or_none(self, board: Board) -> dict | None:
        """:meth:`exact`, or None for a board the solution does not hold or a server without a solution."""
        if self.solution is None:
            return None
        try:
            return self.exact(board)
        except NotHeld:
            return None

    def analysis(self, board: Board, depth: int | None) -> dict:
        """What ``td2048 analyze --json`` prints for the board and depth: board, depth, moves, best; with a
        solution, ``reachable`` (whether the solution holds the board: the start of the game reaches it) and
        ``exact`` (:meth:`exact`; None for a board that is not reachable). Without a model ``moves`` and ``best``
        are the exact ones (None for a board that is not reachable) and ``depth`` is None.

        Raises
        ------
        TD2048Error
            A board with no legal move, or a value that is not a finite number (a damaged model).
        """
        tiles = [v for row in board.tiles for v in row]
        if self.network is None:
            exact = self.exact_or_none(board)
            moves, best = (None, None) if exact is None else (exact["moves"], exact["best"])
            return {"board": tiles, "depth": None, "moves": moves, "best": best, "reachable": exact is not None,
                    "exact": exact}
        values = self.values(board, depth)
        answer = {"board": tiles, "depth": depth, "moves": values, "best": best_move(values)}
        if self.solution is not None:
            exact = self.exact_or_none(board)
            answer.update(reachable=exact is not None, exact=exact)
        return answer

    def before_move(self, board: Board, depth: int | None, engine: bool) -> tuple[dict | None, dict | None]:
        """What a game's move needs of its board: the engine's values (when the engine plays it) and the exact
        values (with a solution; None for a board it does not hold)."""
        if self.network is None:  # perfect play: the engine's values are the exact ones
            exact = self.exact(board)
            return (exact["moves"] if engine else None), exact
        return (self.values(board, depth) if engine else None), self.exact_or_none(board)

    async def run(self, work: Callable[..., T], *args) -> T:
        """``work(*args)`` on a search thread, once admitted; :class:`Busy` at once when the queue is full.

        Raises
        ------
        Busy
            ``threads`` searches are running and ``queue`` more waiting.
        """
        if self.in_flight >= self.threads + self.queue:
            raise Busy(f"busy: {self.threads} searches running and {self.queue} waiting; try again shortly")
        self.in_flight += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, work, *args)
        finally:
            self.in_flight -= 1

    def warm(self) -> None:
        """Load (or compile) the search kernels before the first request, on this thread and the workers'; with
        a solution, its look-ups' kernels."""
        if self.solution is not None:
            start = self.solution.rules.codes_of(self.solution.keys[0][:1])[0]
            self.solution.move_values([int(c) for c in start])
        if self.network is None:
            return
        board = Board.from_tiles([2, 2] + [0] * (self.shape.n_cells - 2), self.game, self.shape)
        self._agent(min(2, self.max_depth)).analyze(self.packed(board))
        list(self._executor.map(lambda _: self._agent(self.depth), range(self.threads)))

    def solution_info(self) -> dict | None:
        """The solution's file name, board, game, positions, and from the start its optimal expected score
        and each tile's reach; None without a solution."""
        if self.solution is None:
            return None
        solution = self.solution
        return {"file": self.solution_name, "game": solution.game, "board": solution.board.name,
                "positions": solution.positions, "expected_score": solution.expected_score,
                "reach": {str(t): p for t, p in solution.reach.items()}}

    def model_info(self) -> dict:
        """The game, the board (``"3x3"``, rows, cols), the network, the method, how it was trained, this
        server's depths and threads, and its solution (None when it has none). Without a model, ``file``,
        ``method``, ``network``, ``training`` and ``depth`` are None."""
        common = {"game": self.game, "board": self.shape.name, "rows": self.shape.rows, "cols": self.shape.cols}
        if self.network is None:
            return {"file": None, **common, "method": None, "network": None, "training": None, "tiles": self.tiles,
                    "depth": None, "threads": self.threads, "queue": self.queue, "solution": self.solution_info()}
        spec, training = self.network.spec, dict(self.header.get("training", {}))
        for key, value in training.items():
            if isinstance(value, str) and ("/" in value or "\\" in value):
                training[key] = Path(value).name  # file names only: no path of this machine
        return {"file": self.name, "game": self.game, "board": self.shape.name, "rows": self.shape.rows,
                "cols": self.shape.cols, "method": self.network.method,
                "network": {"name": spec.name, "label": spec.label,
                            "tuples": ["".join(f"{c:x}" for c in t) for t in spec.tuples],
                            "isomorphisms": spec.isomorphisms, "cell_bits": self.network.cell_bits,
                            "weights": int(self.network.weights.size)},
                "training": training, "tiles": self.tiles,
                "depth": {"default": self.depth, "max": self.max_depth}, "threads": self.threads,
                "queue": self.queue, "solution": self.solution_info()}

    def close(self) -> None:
        """Stop the search threads (after the searches running now)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def best_move(values: dict[str, float | None]) -> str:
    """The legal move of the largest value, the first in the order up, right, down, left on a tie (as
    ``td2048 analyze`` ranks them)."""
    legal = [name for name in MOVE_NAMES if values[name] is not None]
    return max(legal, key=lambda name: values[name])
