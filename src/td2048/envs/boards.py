"""Boards stepped together by the compiled kernels of :mod:`td2048.kernels.env`: the one core
under both Gymnasium environments (the single one is this with one board), so that they play
the same games from the same seeds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.game2048 import row_table
from td2048.games.tiles import tile_value
from td2048.games.wide import wide_row_table
from td2048.kernels import env as kernels
from td2048.rng import make_rng_state

GAMES = ("2048", "2584")


def check_game(game: str, cells: int | None) -> int:
    """The bits per cell of a game: 2048 on 4 (tiles to 32768, the fastest) or 5; 2584 always on 5."""
    if game not in GAMES:
        raise TD2048Error(f"game must be 2048 or 2584, not {game!r}")
    cells = cells or (4 if game == "2048" else 5)
    if cells not in (4, 5) or (game == "2584" and cells != 5):
        raise TD2048Error(f"cells must be 4 or 5 for 2048 and 5 for 2584, not {cells!r}")
    return cells


class Boards:
    """``n`` games, each with its own random state; ``step(actions)`` moves every one of them."""

    def __init__(self, n: int, game: str = "2048", cells: int | None = None, threads: int = 1):
        if not isinstance(n, int) or n < 1:
            raise TD2048Error(f"the number of boards must be a positive integer, not {n!r}")
        if not isinstance(threads, int) or threads < 1:
            raise TD2048Error(f"threads must be a positive integer, not {threads!r}")
        self.n, self.game, self.threads = n, game, min(threads, n)
        self.cells = check_game(game, cells)
        self.wide = self.cells == 5
        self.max_code = 31 if self.wide else 15
        self.values = np.array([tile_value(game, c) for c in range(self.max_code + 1)], np.int64)
        self.table = wide_row_table(game) if self.wide else row_table()
        words = (n, 2) if self.wide else (n,)
        self.boards = np.zeros(words, np.uint64)
        self.afters = np.zeros((n, 4, 2) if self.wide else (n, 4), np.uint64)
        self.gains = np.zeros((n, 4), np.int64)
        self.rngs = np.zeros((n, 4), np.uint64)
        self.pending = np.ones(n, np.bool_)  # every board starts a new game at its first step
        self.codes = np.zeros((n, 16), np.int8)  # the observation: 16 cell codes a board, row-major
        self.rewards = np.zeros(n, np.float64)  # as Gymnasium hands them out: no conversion a step
        self.terminated = np.zeros(n, np.bool_)
        self.illegal = np.zeros(n, np.bool_)
        self.masks = np.zeros((n, 4), np.int8)
        self.no_actions = np.zeros(n, np.int64)
        bounds = np.linspace(0, n, self.threads + 1).astype(np.int64)
        self.ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        self._pool = ThreadPoolExecutor(self.threads - 1) if self.threads > 1 else None

    def seed(self, seeds: list[int | None]) -> None:
        """A random state per board from its seed (None: fresh entropy)."""
        for i, s in enumerate(seeds):
            self.rngs[i] = make_rng_state(s)

    def reset(self, which: np.ndarray | None = None) -> None:
        """Start new games on the boards ``which`` (a bool mask; all when None)."""
        if which is None:
            self.pending[:] = True
        else:
            self.pending |= which
        self.step(self.no_actions, starts_only=True)

    def step(self, actions: np.ndarray, starts_only: bool = False) -> None:
        """Move every board by its action (a board whose game ended at the last step starts a new one
        instead); ``starts_only``: only such boards move."""
        if self.wide:
            fn, args = kernels.step_wide, (self.table, self.boards, self.afters, self.gains, self.rngs, self.pending,
                                           actions, self.codes, self.rewards, self.terminated, self.illegal,
                                           self.masks, starts_only)
        else:
            fn, args = kernels.step_narrow, (self.table, self.boards, self.afters, self.gains, self.rngs,
                                             self.pending, actions, self.codes.view(np.uint64), self.rewards,
                                             self.terminated, self.illegal, self.masks, starts_only)
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

    def tiles(self, i: int) -> np.ndarray:
        """Board ``i`` as a 4x4 array of tile values."""
        return self.values[self.codes[i]].reshape(4, 4)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
