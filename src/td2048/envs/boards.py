"""Boards stepped together by the compiled kernels of :mod:`td2048.kernels.env`: the one core
under every environment (the single one is this with one board; the Stable-Baselines3 one
restarts ended games in the same step), so that they all play the same games from the same
seeds. The environments' options are checked here, once for all of them.

A board of any shape (:mod:`td2048.games.shape`) sits in the top-left corner of the 4x4 frame, so
the kernels step every shape; they take the shape's new-tile cells, the place of its columns'
table and its rows and columns as arguments (the 4x4 board's own kernels hold them as constants),
and write the codes of its own cells only."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.game2048 import row_table, vertical_offset
from td2048.games.shape import BoardShape, as_shape
from td2048.games.tiles import tile_value
from td2048.games.wide import wide_row_table, wide_vertical_offset
from td2048.kernels import env as kernels
from td2048.rng import make_rng_state

GAMES = ("2048", "2584")
ON_ILLEGAL = ("ignore", "penalty", "end")
OBSERVATIONS = ("codes", "onehot", "onehot_flat")
RENDER_MODES = ["ansi", "rgb_array"]
DEFAULT_MAX_ILLEGAL = 32  # illegal moves in a row that cut a game: a policy that repeats one never loops forever


def check_game(game: str, cells: int | None) -> int:
    """The bits per cell of a game: 2048 on 4 (tiles to 32768, the fastest) or 5; 2584 always on 5."""
    if game not in GAMES:
        raise TD2048Error(f"game must be 2048 or 2584, not {game!r}")
    cells = cells or (4 if game == "2048" else 5)
    if cells not in (4, 5) or (game == "2584" and cells != 5):
        raise TD2048Error(f"cells must be 4 or 5 for 2048 and 5 for 2584, not {cells!r}")
    return cells


def check_size(size) -> BoardShape:
    """The board of the environments' ``size``: an int (a square), ``(rows, cols)``, ``"RxC"`` or a
    :class:`~td2048.games.shape.BoardShape`; None is 4x4."""
    def whole(n) -> bool:
        return isinstance(n, int | np.integer) and not isinstance(n, bool)

    pair = isinstance(size, tuple | list) and len(size) == 2 and all(whole(n) for n in size)
    if not (whole(size) or pair or isinstance(size, str | BoardShape | None)):
        raise TD2048Error(f"size must be an int, (rows, cols), 'RxC' or a BoardShape, not {size!r}")
    try:
        return as_shape(int(size) if isinstance(size, np.integer) else size)
    except TD2048Error as e:
        raise TD2048Error(f"size={size!r}: {e}") from None


def check_choice(name: str, value, choices) -> None:
    if value not in choices:
        raise TD2048Error(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}")


def _positive_int(name: str, value, none_ok: bool = False) -> None:
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise TD2048Error(f"{name} must be a positive integer{' or None' if none_ok else ''}, not {value!r}")


def make_rules(on_illegal: str = "ignore", illegal_penalty: float = 1.0, max_illegal: int = DEFAULT_MAX_ILLEGAL,
               max_episode_steps: int | None = None) -> np.ndarray:
    """The kernels' ``rules`` (what an illegal move does, when a game is cut) from the environments' options.

    Parameters
    ----------
    on_illegal : {"ignore", "penalty", "end"}
        What an illegal move does besides leaving the board as it is.
    illegal_penalty : float
        What an illegal move costs with ``on_illegal="penalty"`` (its reward is minus this).
    max_illegal : int
        Illegal moves in a row that truncate the game.
    max_episode_steps : int or None
        Steps (legal or illegal) that truncate a game; None: no limit.

    Returns
    -------
    numpy.ndarray
        float64[N_RULES], indexed by the positions that :mod:`td2048.kernels.env` names.

    Raises
    ------
    TD2048Error
        On an option out of its range.
    """
    check_choice("on_illegal", on_illegal, ON_ILLEGAL)
    if isinstance(illegal_penalty, bool) or not isinstance(illegal_penalty, int | float | np.number) \
            or not math.isfinite(illegal_penalty):
        raise TD2048Error(f"illegal_penalty must be a finite number, not {illegal_penalty!r}")
    _positive_int("max_illegal", max_illegal)
    _positive_int("max_episode_steps", max_episode_steps, none_ok=True)
    rules = np.zeros(kernels.N_RULES, np.float64)
    rules[kernels.ON_ILLEGAL] = ON_ILLEGAL.index(on_illegal)
    rules[kernels.PENALTY_VALUE] = illegal_penalty
    rules[kernels.MAX_ILLEGAL] = max_illegal
    rules[kernels.MAX_STEPS] = max_episode_steps or 0
    return rules


class Boards:
    """``n`` games, each with its own random state; ``step(actions)`` moves every one of them.

    Parameters
    ----------
    n : int
        The number of boards.
    game : {"2048", "2584"}
        The game they play.
    cells : int or None
        Bits per cell (4 or 5 for 2048, 5 for 2584; None: the game's default).
    threads : int
        Threads that step disjoint ranges of the boards.
    rules : numpy.ndarray or None
        From :func:`make_rules` (None: its defaults).
    size : int or tuple or str or BoardShape or None
        The board (see :func:`check_size`; None: 4x4).
    """

    def __init__(self, n: int, game: str = "2048", cells: int | None = None, threads: int = 1,
                 rules: np.ndarray | None = None, size=None):
        _positive_int("the number of boards", n)
        _positive_int("threads", threads)
        self.n, self.game, self.threads = int(n), game, min(threads, n)
        self.cells = check_game(game, cells)
        self.shape = shape = check_size(size)
        self.n_cells = shape.n_cells
        self.wide = self.cells == 5
        self.max_code = 31 if self.wide else 15
        self.planes = self.max_code + 1
        self.values = np.array([tile_value(game, c) for c in range(self.max_code + 1)], np.int64)
        self.table = wide_row_table(game, shape) if self.wide else row_table(shape)
        vertical = wide_vertical_offset(shape) if self.wide else vertical_offset(shape)
        # the shape as the kernels take it: new-tile cells, the columns' table, rows and columns (the 4x4
        # board's kernels hold its values as constants)
        self.shape_args = () if shape.full else (np.uint64(shape.cells_mask), np.int64(vertical),
                                                 np.int64(shape.rows), np.int64(shape.cols))
        if shape.full:
            self._kernel = kernels.step_wide_4x4 if self.wide else kernels.step_narrow_4x4
        else:
            self._kernel = kernels.step_wide if self.wide else kernels.step_narrow
        self.rules = make_rules() if rules is None else rules
        words = (n, 2) if self.wide else (n,)
        self.boards = np.zeros(words, np.uint64)
        self.afters = np.zeros((n, 4, 2) if self.wide else (n, 4), np.uint64)
        self.gains = np.zeros((n, 4), np.int64)
        self.rngs = np.zeros((n, 4), np.uint64)
        self.pending = np.ones(n, np.bool_)  # every board starts a new game at its first step
        # the observation: the board's cell codes, row-major, in the first n_cells of 16 bytes a board
        self.codes = np.zeros((n, 16), np.int8)
        self.rewards = np.zeros(n, np.float64)  # as Gymnasium hands them out: no conversion a step
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)
        self.illegal = np.zeros(n, np.bool_)
        self.masks = np.zeros((n, 4), np.int8)
        self.counts = np.zeros((kernels.N_COUNTS, n), np.int64)  # score, moves, steps, illegal run, max tile
        self.row_top = kernels.row_top_codes()
        self.no_actions = np.zeros(n, np.int64)
        bounds = np.linspace(0, n, self.threads + 1).astype(np.int64)
        self.ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        self._pool = ThreadPoolExecutor(self.threads - 1) if self.threads > 1 else None

    @property
    def scores(self) -> np.ndarray:
        """The games' scores (a view: the next step changes it)."""
        return self.counts[kernels.SCORE]

    @property
    def moves(self) -> np.ndarray:
        """The games' legal moves so far (a view)."""
        return self.counts[kernels.MOVES]

    @property
    def max_tiles(self) -> np.ndarray:
        """The games' largest tiles (a view)."""
        return self.counts[kernels.MAX_TILE]

    def seed(self, seeds, which: np.ndarray | None = None) -> None:
        """A random state per board from its seed (None: fresh entropy); ``which``: the boards the seeds are for
        (indices; all when None)."""
        for i, s in zip(range(self.n) if which is None else which, seeds):
            self.rngs[i] = make_rng_state(s)

    def reset(self, which: np.ndarray | None = None) -> None:
        """Start new games on the boards ``which`` (a bool mask; all when None); the others stay as they are."""
        if which is None:
            self.pending[:] = True
            self.start_pending()
            return
        waiting = self.pending & ~which  # ended games that are not reset now start at their next step
        self.pending[:] = which
        self.start_pending()
        self.pending |= waiting

    def start_pending(self) -> None:
        """Start new games on the boards whose games ended or were cut (a reset in the same step)."""
        self.step(self.no_actions, starts_only=True)

    def step(self, actions: np.ndarray, starts_only: bool = False) -> None:
        """Move every board by its action (a board whose game ended at the last step starts a new one
        instead); ``starts_only``: only such boards move."""
        out = self.codes if self.wide else self.codes.view(np.uint64)
        fn = self._kernel
        args = (self.table, self.values, self.row_top, self.boards, self.afters, self.gains, self.rngs, self.pending,
                actions, self.rules, out, self.rewards, self.terminated, self.truncated, self.illegal, self.masks,
                self.counts, starts_only, *self.shape_args)
        if self._pool is None:
            fn(*args, 0, self.n)
            return
        futures = [self._pool.submit(fn, *args, lo, hi) for lo, hi in self.ranges[1:]]
        fn(*args, *self.ranges[0])  # the calling thread takes the first range
        for f in futures:
            f.result()

    def check_actions(self, actions) -> np.ndarray:
        """Actions as int64[n] in 0..3; anything else is a one-line error."""
        a = np.asarray(actions)
        if a.shape != (self.n,) or not np.issubdtype(a.dtype, np.integer) and a.dtype != np.bool_:
            raise TD2048Error(f"actions must be {self.n} integers in 0..3 (up, right, down, left), "
                              f"not an array of shape {a.shape} and type {a.dtype}")
        if a.size and (a.min() < 0 or a.max() > 3):
            raise TD2048Error("actions must be 0..3 (up, right, down, left)")
        return a.astype(np.int64, copy=False)

    def observations(self, kind: str, rows: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """The observations of every board (or of ``rows``) as ``kind`` (one of :data:`OBSERVATIONS`): a new array,
        or ``out`` filled."""
        codes = self.codes if rows is None else self.codes[rows]
        if kind == "codes":
            shaped = self.grids(codes)
            if out is None:
                return shaped.copy()
            out[...] = shaped
            return out
        if out is None:
            shape, dtype = self.observation_shape(kind)
            out = np.empty((len(codes), *shape), dtype)
        flat = out.reshape(len(codes), self.planes * self.n_cells)
        kernels.onehot(codes, self.n_cells, flat)
        return out

    def grids(self, codes: np.ndarray | None = None) -> np.ndarray:
        """The boards' codes as ``int8[n, rows, cols]``: a view of ``codes`` (the boards' own by default)."""
        codes = self.codes if codes is None else codes
        return codes[:, :self.n_cells].reshape(-1, self.shape.rows, self.shape.cols)

    def observation_shape(self, kind: str) -> tuple[tuple[int, ...], type]:
        """(shape, dtype) of one board's observation as ``kind``."""
        check_choice("observation", kind, OBSERVATIONS)
        rows, cols = self.shape.rows, self.shape.cols
        if kind == "codes":
            return (rows, cols), np.int8
        if kind == "onehot":
            return (self.planes, rows, cols), np.uint8
        return (self.planes * self.n_cells,), np.float32

    def tiles(self, i: int) -> np.ndarray:
        """Board ``i`` as a rows x cols array of tile values."""
        return self.values[self.grids()[i]]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
