"""Playing: choosing moves, greedily or by expectimax search, and playing games without learning.

Everything that plays a model's games goes through :class:`Agent`: ``td2048 eval``, the
records, ``td2048 analyze`` and ``td2048 bench``'s test phase. Learning lives in
:mod:`td2048.learn` and never calls this module; this module never changes a weight.

Depth 1 is the greedy choice (the largest r + V(afterstate)); depth d > 1 is expectimax over
the new tiles, d moves deep (see :mod:`td2048.kernels.search` for the recursion). The search
runs in compiled code from the root to the leaves; Python calls it once per block of games
(or once per decision, when decisions are timed for records).

Every game has a random state of its own, from the agent's seed and the game's index alone
(:func:`td2048.rng.game_rng_states`), and starts with an empty transposition table (see
:mod:`td2048.kernels.search`). So game i of a seed is the same game whichever thread, shard or
node plays it and whatever was played before it: one thread, N threads, shards and Ray give
the same games, statistics and records.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from td2048.config import DEFAULT_MEMORY_LIMIT
from td2048.errors import TD2048Error
from td2048.games.board import Board
from td2048.games.game2048 import MOVE_NAMES
from td2048.games.shape import as_shape
from td2048.network import Network, aligned_zeros
from td2048.rng import game_rng_states, seed_words, thread_rng_rows
from td2048.search_settings import (
    MAX_DEPTH,
    TT_ENTRY_BYTES,
    Search,
    parse_limits,
    parse_search,
    search_settings_json,
)
from td2048.spec import format_bytes
from td2048.stats import BlockStats
from td2048.threads import run_threads


class Agent:
    """Plays a network's games without learning, choosing each move by ``search``.

    Game i (counted from 0) is played from a random state of its own, made from ``seed`` and i alone,
    and with an empty transposition table: the same game on any thread, in any order. With ``threads``
    > 1, games are shared among threads that play at once (each with its own transposition table);
    the games, their statistics and the search counters are those of one thread. At depth 1 the
    search plays exactly the games of the greedy kernel.

    Parameters
    ----------
    network : Network
        The model (its weights are only read).
    search : Search or None
        How moves are chosen; None: greedy (depth 1), unless ``depth`` is given.
    seed : int, numpy.random.SeedSequence or None
        Seed of the games' random states; None: fresh entropy (kept in :attr:`seed`).
    threads : int
        Games played at once.
    memory_limit : int or None
        The most bytes of weights and transposition tables; None: 2 GiB (``DEFAULT_MEMORY_LIMIT``), or the
        weights and the tables where they need more (a model's weights, loaded, are never refused by default).
    depth : int or None
        The short form of ``search``: ``td2048 eval --depth``'s search at this depth.
    endgame : Solution or None
        An endgame's table (``td2048 solve --fixed ... --goal ...``, read with ``load_solution(path,
        endgame=True)``): in the games this agent plays (:meth:`play`, :meth:`play_into`, :meth:`play_from`), the
        table chooses the moves wherever the game keeps its fixed tiles and the goal can still be built
        (:mod:`td2048.kernels.endgame`); :meth:`endgame_counts` says how often. Its memory counts against
        ``memory_limit``. :meth:`step`, :meth:`choose` and :meth:`analyze` stay the network's.
    endgame_worth : float
        With ``endgame``: the points that building the endgame's goal adds to a game. Above 0, the network's
        search (at depth 1 too) values each afterstate where the table would take over as the network's value
        plus ``endgame_worth`` times the table's chance of building the goal from it, and searches no deeper
        there (:mod:`td2048.kernels.search`); 0: the network's values alone.

    Raises
    ------
    TD2048Error
        Threads below 1, both a search and a depth, a search that does not fit the game, tables
        over the memory limit, an endgame's table of another board or game, or a worth below 0 or
        without a table.
    """

    def __init__(self, network: Network, search: Search | None = None, seed: int | None = None,
                 threads: int = 1, memory_limit: int | None = None, *, depth: int | None = None,
                 endgame=None, endgame_worth: float = 0.0):
        if threads < 1:
            raise TD2048Error(f"threads must be at least 1, not {threads}")
        if depth is not None:  # the API's short form: the search of ``td2048 eval --depth``
            if search is not None:
                raise TD2048Error("give a search or a depth, not both")
            search = parse_search(depth, game=network.game)
        self.network = network
        self.search = search or Search()
        self.search.validate(network.game)
        self.threads = threads
        entries = self.search.tt_entries()
        if not endgame_worth >= 0:
            raise TD2048Error(f"an endgame's worth is a number of points, 0 or more, not {endgame_worth}")
        if endgame_worth and endgame is None:
            raise TD2048Error("an endgame's worth needs its table: give endgame too")
        self.endgame = endgame
        self.endgame_worth = float(endgame_worth)
        self._endgame = None
        self._boundary = None  # the table at the search's boundary (td2048.kernels.search), with a worth
        table_bytes = 0
        if endgame is not None:
            from td2048.teacher import endgame_arrays, table_nbytes

            self._endgame = endgame_arrays(endgame, network.board, network.game, network.wide)
            table_bytes = table_nbytes(self._endgame[0])
            if self.endgame_worth:
                self._boundary = (self._endgame, self.endgame_worth)
        needed = network.spec.nbytes + threads * entries * TT_ENTRY_BYTES + table_bytes
        if memory_limit is None:
            memory_limit = max(DEFAULT_MEMORY_LIMIT, needed)
        if needed > memory_limit:
            table = f", the endgame's table ({format_bytes(table_bytes)})" if table_bytes else ""
            raise TD2048Error(f"the weights ({format_bytes(network.spec.nbytes)}){table} and {threads} transposition "
                              f"table(s) of {format_bytes(entries * TT_ENTRY_BYTES)} exceed the memory limit "
                              f"({format_bytes(memory_limit)}): give a smaller --tt-size")
        # 4 words an entry, as 8 float32 of aligned (huge-page) memory
        self._tt = aligned_zeros(threads, 8 * entries).view(np.uint64).reshape(threads, entries, 4)
        self._ttv = self._tt.view(np.float64)
        self._limits = parse_limits(self.search.limits)
        if self._limits is None:
            self._limits = np.full(17, 1 << 30, np.int64)
        self._downgrade_code = int(np.log2(self.search.downgrade)) if self.search.downgrade else 0
        # depth 1 without a downgrade: the greedy kernels, the same games, compiled in half the time
        self._greedy = self.search.depth <= 1 and self._downgrade_code == 0
        # nodes, leaves, TT probes, TT hits, and the game the table holds (TT_GAME): each thread's on two
        # cache lines of its own (no false sharing)
        self.counters = np.zeros((threads, 16), np.int64)
        self.seed = int(np.random.SeedSequence().entropy) if seed is None else seed
        self._seed_words = seed_words(self.seed)
        self._rng_rows = thread_rng_rows(np.zeros((threads, 4), np.uint64))  # each thread's game being played
        self._table = network.row_table()
        self._rng_rows[0, :4] = game_rng_states(self._seed_words, 0, 1)[0]  # game 0 started (its table is empty)

    @property
    def rng_state(self) -> np.ndarray:
        """The random state of the game played a move at a time (:meth:`start_game`, :meth:`spawn`,
        :meth:`step`), ``uint64[4]`` (a view: it advances as the game is played)."""
        return self._rng_rows[0, :4]

    def start_game(self, index: int) -> None:
        """Start game ``index`` of the seed, for play a move at a time: :attr:`rng_state` becomes that game's
        first state, and the transposition table is empty for it.

        A new agent has started game 0, so ``spawn``, ``step`` and :meth:`play_from` play on with game 0's
        random state (``td2048 watch --seed S`` is game 0 of ``td2048 eval --seed S``).

        Parameters
        ----------
        index : int
            The game's index (>= 0): its random state depends on the seed and this alone.
        """
        self._rng_rows[0, :4] = game_rng_states(self._seed_words, index, 1)[0]
        self._new_table(0)

    def _new_table(self, thread: int) -> None:
        """Empty a thread's transposition table: its entries now belong to a game that is over (see
        :mod:`td2048.kernels.search`), nothing is written."""
        self.counters[thread, self.network.kernels.TT_GAME] += 1

    def _board(self, board):
        if isinstance(board, Board):
            if board.shape != self.network.board:
                raise TD2048Error(f"a {board.shape} board, but the network plays the {self.network.board} board")
            board = board.packed(self.network.wide)
        return self.network._board(board)

    def analyze(self, board) -> dict[str, float | None]:
        """The value of every move of a position at the search depth.

        Parameters
        ----------
        board : Board, int or tuple of (int, int)
            The position: a :class:`Board`, or packed (an int on 4-bit cells, (lo, hi) on 5-bit cells).

        Returns
        -------
        dict of str to float or None
            Per move, in the order up, right, down, left: r + its afterstate's value at the search depth;
            None for an illegal move.
        """
        values = np.zeros(4)
        kernels = self.network.kernels
        kernels.search_values(self._table, self.network.weights, self._board(board), self.search.depth,
                              self._downgrade_code, kernels.scratch_arrays(), self._tt[0], self._ttv[0],
                              self._limits, self.counters[0], values, None)  # no table at the boundary
        return {name: (None if np.isnan(v) else float(v)) for name, v in zip(MOVE_NAMES, values, strict=True)}

    def best_move(self, board) -> str | None:
        """The move the agent plays on a position.

        Parameters
        ----------
        board : Board, int or tuple of (int, int)
            The position: a :class:`Board`, or packed (an int on 4-bit cells, (lo, hi) on 5-bit cells).

        Returns
        -------
        str or None
            ``"up"``, ``"right"``, ``"down"`` or ``"left"``; None when no move is legal.
        """
        values = self.analyze(board)
        legal = {move: v for move, v in values.items() if v is not None}
        return max(legal, key=legal.get) if legal else None

    def choose(self, boards) -> np.ndarray:
        """The agent's move on each board of a batch, at its search depth, on its threads.

        Each board is searched with an empty transposition table, so a board's move does not depend on the
        boards searched before it, nor on the thread count.

        Parameters
        ----------
        boards : numpy.ndarray
            Packed boards: ``uint64[m]`` on 4-bit cells, ``uint64[m, 2]`` of (lo, hi) on 5-bit cells (a
            ``uint64[m]`` batch is taken as the lo words when the network plays on 5-bit cells).

        Returns
        -------
        numpy.ndarray
            ``int64[m]``: 0 up, 1 right, 2 down, 3 left; -1 for a board without a legal move.
        """
        packed = np.asarray(boards, np.uint64)
        wide = self.network.wide
        if packed.ndim == 1:
            rows = np.zeros((len(packed), 2), np.uint64) if wide else packed.reshape(-1, 1).copy()
            if wide:
                rows[:, 0] = packed
        elif packed.ndim == 2 and packed.shape[1] == (2 if wide else 1):
            rows = np.ascontiguousarray(packed)
        else:
            raise TD2048Error(f"boards of shape {packed.shape}: expected (m,) or (m, {2 if wide else 1})")
        moves = np.empty(len(rows), np.int64)
        kernels = self.network.kernels
        share = -(-len(rows) // self.threads)

        def worker(thread):
            lo, hi = thread * share, min(len(rows), (thread + 1) * share)
            if lo < hi:
                kernels.choose_moves(self._table, self.network.weights, rows[lo:hi], self.search.depth,
                                     self._downgrade_code, self._tt[thread], self._ttv[thread], self._limits,
                                     self.counters[thread], moves[lo:hi])

        run_threads(self.threads, worker)
        return moves

    def play(self, games: int, on_progress: Callable[[int], None] | None = None, episodes: int | None = None,
             first: int = 0) -> BlockStats:
        """Play games ``first .. first + games - 1`` of the seed from new boards, on the agent's threads.

        Parameters
        ----------
        games : int
            Games to play.
        on_progress : callable or None
            Called now and then with the games done.
        episodes : int or None
            The block's episode count in the statistics; None: ``games``.
        first : int
            The index of the first game.

        Returns
        -------
        BlockStats
            The games' statistics as one block.
        """
        scores, max_codes, moves = (np.zeros(games, np.int64) for _ in range(3))
        lock = threading.Lock()
        state = {"next": 0, "done": 0}
        batch_cap = 1 if self.search.depth > 2 else 10 if self.search.depth == 2 else 1000

        def worker(thread):
            while True:
                with lock:
                    lo = state["next"]
                    hi = min(games, lo + max(1, min(batch_cap, (games - lo) // (2 * self.threads))))
                    state["next"] = hi
                if lo >= games:
                    return
                self._play_games(thread, first + lo, scores[lo:hi], max_codes[lo:hi], moves[lo:hi])
                with lock:
                    state["done"] += hi - lo
                    done = state["done"]
                if on_progress is not None and thread == 0:
                    on_progress(done)

        self._play_games(0, first, scores[:0], max_codes[:0], moves[:0])  # compiles, or loads, the kernels: not timed
        start = time.perf_counter()
        run_threads(self.threads, worker)
        seconds = time.perf_counter() - start
        if on_progress is not None:
            on_progress(games)
        return BlockStats.from_block(games if episodes is None else episodes, scores, max_codes, moves, seconds,
                                     game=self.network.game)

    def play_into(self, scores: np.ndarray, max_codes: np.ndarray, moves: np.ndarray, first: int = 0) -> None:
        """Play games ``first, first + 1, ...`` of the seed on this thread into arrays, without statistics (for
        callers that gather games from several places, such as shards).

        Parameters
        ----------
        scores : numpy.ndarray
            ``int64[games]``: gets each game's score; its length is the number of games.
        max_codes : numpy.ndarray
            ``int64[games]``: gets each game's largest tile code.
        moves : numpy.ndarray
            ``int64[games]``: gets each game's moves.
        first : int
            The index of the first game.
        """
        self._play_games(0, first, scores, max_codes, moves)

    def _play_games(self, thread, first, scores, max_codes, moves) -> None:
        """Games first, first + 1, ... into the arrays, on a thread's random state and table."""
        kernels = self.network.kernels
        words = 2 if self.network.wide else 1
        handoff = np.zeros((2, words), np.uint64)
        counts = np.zeros(2, np.int64)
        starts = game_rng_states(self._seed_words, first, len(scores))
        lo = 0
        while True:  # at least one call: with no games, it compiles (or loads) the kernel
            out = (scores[lo:], max_codes[lo:], moves[lo:])
            if self._endgame is not None:
                played, handed = kernels.endgame_block(self._table, self.network.weights, self._rng_rows[thread, :4],
                                                       starts[lo:], self.search.depth, self._downgrade_code,
                                                       self._tt[thread], self._ttv[thread], self._limits,
                                                       self.counters[thread], out, (handoff, counts), self._endgame,
                                                       self._boundary)
            elif self._greedy:
                played, handed = kernels.greedy_block(self._table, self.network.weights, self._rng_rows[thread, :4],
                                                      starts[lo:], self.counters[thread], out, (handoff, counts))
            else:
                played, handed = kernels.search_block(self._table, self.network.weights, self._rng_rows[thread, :4],
                                                      starts[lo:], self.search.depth, self._downgrade_code,
                                                      self._tt[thread], self._ttv[thread], self._limits,
                                                      self.counters[thread], out, (handoff, counts))
            lo += played
            if handed:
                scores[lo], moves[lo], max_codes[lo] = self._finish_wide(thread, handoff[0], counts)
                lo += 1
            if lo >= len(scores):
                return

    def _finish_wide(self, thread, board, counts) -> tuple[int, int, int]:
        """Finish on 5-bit cells a game that reached two 32768 tiles on 4-bit cells: (score, moves, code).

        The table is emptied first, and after: the same words mean another board there (32768s merge)."""
        wide = self.network.wide_kernels()
        self._new_table(thread)
        start = np.zeros((2, 2), np.uint64)
        start[0, 0] = board[0]
        largest, _ = self._finish(wide, self.network.row_table(wide=True), thread, start, counts)
        self._new_table(thread)
        return int(counts[0]), int(counts[1]), int(largest)

    def play_from(self, board) -> tuple[int, int, int]:
        """Play one game on from a position, with the random state of the game started last (:meth:`start_game`).

        Parameters
        ----------
        board : int or tuple of (int, int)
            The position, packed: an int on 4-bit cells, (lo, hi) on 5-bit cells.

        Returns
        -------
        tuple of (int, int, int)
            The game's score, moves and largest tile code (counted from the position).
        """
        kernels = self.network.kernels
        start = np.zeros((2, 2 if self.network.wide else 1), np.uint64)
        start[0] = board if self.network.wide else [board]
        counts = np.zeros(2, np.int64)
        largest, handed = self._finish(kernels, self._table, 0, start, counts)
        if handed:
            return self._finish_wide(0, start[0], counts)
        return int(counts[0]), int(counts[1]), int(largest)

    def _finish(self, kernels, table, thread, start, counts):
        """Play on from ``start[0]`` (score and moves so far in ``counts``): (largest code, handed off)."""
        if self._endgame is not None and kernels is self.network.kernels:  # 5-bit cells: no endgame there
            return kernels.endgame_finish(table, self.network.weights, self._rng_rows[thread, :4], self.search.depth,
                                          self._downgrade_code, self._tt[thread], self._ttv[thread], self._limits,
                                          self.counters[thread], (start, counts), self._endgame, self._boundary)
        if self._greedy:
            return kernels.greedy_finish(table, self.network.weights, self._rng_rows[thread, :4], (start, counts))
        return kernels.search_finish(table, self.network.weights, self._rng_rows[thread, :4], self.search.depth,
                                     self._downgrade_code, self._tt[thread], self._ttv[thread], self._limits,
                                     self.counters[thread], (start, counts))

    def _kernels_for_board(self, board):
        """(kernels, row table, board as those kernels take it): a 4-bit board goes on on 5-bit cells once
        it holds two 32768 tiles (the transposition table is emptied then: the same words mean another
        board there)."""
        net = self.network
        if isinstance(board, tuple):
            return net.wide_kernels(), net.row_table(wide=True), (np.uint64(board[0]), np.uint64(board[1]))
        narrow = np.uint64(board)
        if not net.wide and net.kernels.board_needs_wide(narrow):
            self._new_table(0)
            return net.wide_kernels(), net.row_table(wide=True), (narrow, np.uint64(0))
        return net.kernels, self._table, narrow

    @property
    def empty_board(self):
        """The board every game starts from before its two tiles: 0, or (0, 0) on 5-bit cells."""
        return (0, 0) if self.network.wide else 0

    def spawn(self, board):
        """A board with one new tile, drawn from :attr:`rng_state`.

        Parameters
        ----------
        board : int or tuple of (int, int)
            Packed: an int, or (lo, hi) on 5-bit cells.

        Returns
        -------
        int or tuple of (int, int)
            The board with the tile, packed the same way (on 5-bit cells once it holds two 32768 tiles).
        """
        kernels, _, typed = self._kernels_for_board(board)
        placed = kernels.spawn_on(typed, self.rng_state)
        return (int(placed[0]), int(placed[1])) if isinstance(placed, tuple) else int(placed)

    def step(self, board, values: np.ndarray) -> tuple[int, int, object, object]:
        """One decision on a board and the new tile after it (for callers that time each decision).

        Parameters
        ----------
        board : int or tuple of (int, int)
            Packed: an int, or (lo, hi) on 5-bit cells.
        values : numpy.ndarray
            ``float64[4]``: gets each move's value (NaN where illegal).

        Returns
        -------
        tuple of (int, int, object, object)
            (direction or -1, reward, afterstate, next board), boards as ints or, once on 5-bit cells,
            (lo, hi).
        """
        kernels, table, typed = self._kernels_for_board(board)
        d, reward, after, following = kernels.search_step(table, self.network.weights, self.rng_state, typed,
                                                          self.search.depth, self._downgrade_code, self._tt[0],
                                                          self._ttv[0], self._limits, self.counters[0], values)
        if isinstance(typed, tuple):
            return int(d), int(reward), (int(after[0]), int(after[1])), (int(following[0]), int(following[1]))
        return int(d), int(reward), int(after), int(following)

    def endgame_counts(self) -> dict[str, int]:
        """What the endgame's table did so far, over all threads (all 0 without one).

        Returns
        -------
        dict of str to int
            ``games`` (games it played in), ``entries`` (times it took over: a game can leave its endgame and
            come back), ``goals`` (goals it built) and ``moves`` (moves it chose).
        """
        total = self.counters.sum(axis=0)
        kernels = self.network.kernels
        return {"games": int(total[kernels.EG_GAMES]), "entries": int(total[kernels.EG_ENTRIES]),
                "goals": int(total[kernels.EG_WINS]), "moves": int(total[kernels.EG_MOVES])}

    def search_counts(self) -> dict[str, int]:
        """What the searches did so far, over all threads.

        Returns
        -------
        dict of str to int
            ``nodes``, ``leaves``, ``tt_probes`` and ``tt_hits``.
        """
        total = self.counters.sum(axis=0)
        return {"nodes": int(total[0]), "leaves": int(total[1]), "tt_probes": int(total[2]), "tt_hits": int(total[3])}


def evaluate(network: Network, games: int, seed: int | None = None, threads: int = 1,
             on_progress: Callable[[int], None] | None = None, search: Search | None = None) -> BlockStats:
    """Play games without learning.

    Parameters
    ----------
    network : Network
        The model.
    games : int
        Games to play.
    seed : int or None
        Seed of the games (game i's random state comes from it and i alone); None: fresh entropy.
    threads : int
        Games played at once (the same games, whatever the number).
    on_progress : callable or None
        Called now and then with the games done.
    search : Search or None
        How moves are chosen; None: greedy.

    Returns
    -------
    BlockStats
        The games' statistics as one block.
    """
    return Agent(network, search, seed, threads).play(games, on_progress)


def parse_board(text: str, game: str = "2048", wide: bool = False, shape=None):
    """A position as people write it, packed for the kernels.

    Parameters
    ----------
    text : str
        The board's tile values, row-major, comma- or space-separated, 0 for empty:
        ``"0,2,4,8,0,..."`` (16 on 4x4, 9 on 3x3, ...).
    game : {"2048", "2584"}, optional
        The game the values are tiles of.
    wide : bool, optional
        Pack on 5-bit cells.
    shape : BoardShape, str or None, optional
        The board's shape (a network's ``network.board``); None: 4x4.

    Returns
    -------
    int or tuple of (int, int)
        An int on 4-bit cells, (lo, hi) on 5-bit ones (:class:`Board`'s checks).

    Raises
    ------
    TD2048Error
        In one line, for a value that is not a tile of the game or a count that is not the shape's cells.
    """
    values = []
    for part in text.replace(",", " ").split():
        try:
            values.append(int(part))
        except ValueError:
            raise TD2048Error(f"{part!r} is not a tile value of {game}") from None
    return Board.from_tiles(values, game, as_shape(shape)).packed(wide)


__all__ = ["Agent", "Search", "evaluate", "parse_board", "parse_search", "parse_limits", "search_settings_json",
           "MAX_DEPTH"]
