"""The boards kept for restarts: each thread's ring, as the kernels fill it, saved and read back, and read for corners.

With ``--restarts`` a game that starts from the beginning keeps its first board that holds the restart tile
(:mod:`td2048.kernels.episode`), and a share of the later episodes start from a board drawn from the ring. Each
learning thread has a ring of its own (:class:`RestartPools`), which a snapshot saves and a resumed run reads
back, and which tells how often the games build their restart tile in a corner (the 4x3 recipe's start check).
"""

from __future__ import annotations

import numpy as np

from td2048.games.bitboard import largest_cells

RESTART_POOL = 4096  # boards kept per thread for restarts (a ring: the newest replace the oldest)


class RestartPools:
    """Each thread's ring of boards kept for restarts.

    Parameters
    ----------
    threads : int
        Learning threads, a ring each.
    words : int
        Words a board: 1 on 4-bit cells, 2 on 5-bit cells.
    """

    def __init__(self, threads: int, words: int):
        self.boards = np.zeros((threads, RESTART_POOL, words), np.uint64)
        self.states = np.zeros((threads, 8), np.int64)  # [:, :2] boards held, boards kept in all

    def of(self, thread: int) -> tuple[np.ndarray, np.ndarray]:
        """A thread's ring as the kernels take it: (its boards, (boards held, boards kept in all)).

        Parameters
        ----------
        thread : int
            The thread.

        Returns
        -------
        tuple of numpy.ndarray
            Views of the thread's boards and counts, which the kernels fill.
        """
        return self.boards[thread], self.states[thread, :2]

    def kept(self) -> np.ndarray:
        """Per thread, the boards it has kept in all, now (``int64[threads]``, a copy: for :meth:`corner_share`).

        Returns
        -------
        numpy.ndarray
            The counts.
        """
        return self.states[:, 1].copy()

    def clear(self) -> None:
        """Forget every board kept (a run that starts over)."""
        self.boards[:] = 0
        self.states[:] = 0

    def to_json(self) -> list[dict]:
        """The rings, for a snapshot.

        Returns
        -------
        list of dict
            Per thread: ``kept``, the boards kept in all, and ``boards``, those held (each a list of hex words).
        """
        pools = []
        for thread in range(self.boards.shape[0]):
            held, kept = (int(v) for v in self.states[thread, :2])
            pools.append({"kept": kept, "boards": [[f"{int(v):x}" for v in row] for row in self.boards[thread, :held]]})
        return pools

    def load_json(self, pools: list[dict]) -> None:
        """Take back the rings of :meth:`to_json` (a resumed run).

        Saved by as many threads: each thread its own ring again. Saved by another number of threads: the boards
        of all the rings, dealt out to these threads in turn (each keeps its newest :data:`RESTART_POOL`).

        Parameters
        ----------
        pools : list of dict
            Per thread, as :meth:`to_json` gives them.
        """
        threads = self.boards.shape[0]
        if len(pools) != threads and pools:
            boards = [row for pool in pools for row in pool["boards"]]
            pools = [{"kept": len(boards[t::threads]), "boards": boards[t::threads][-RESTART_POOL:]}
                     for t in range(threads)]
        for thread, pool in enumerate(pools):
            boards = pool["boards"][:RESTART_POOL]
            for i, row in enumerate(boards):
                self.boards[thread, i] = [int(v, 16) for v in row]
            self.states[thread, :2] = len(boards), int(pool["kept"])

    def corner_share(self, kept_before: np.ndarray, corner_cells) -> float | None:
        """Of the boards kept since ``kept_before``, the share whose largest tile is in a corner.

        A game keeps its first board that holds the restart tile: this share is how often the games build that
        tile in a corner of the board (on 4x3, the starts that build their 2048s off the corners build no
        4096).

        Parameters
        ----------
        kept_before : numpy.ndarray
            Per thread, the boards it had kept in all (:meth:`kept`), from an earlier moment.
        corner_cells : sequence of int
            The board's corner cells (:attr:`td2048.games.shape.BoardShape.corner_cells`).

        Returns
        -------
        float or None
            The share, of the boards kept since (each thread's newest :data:`RESTART_POOL` at most); None when
            none was kept.
        """
        kept = []
        for thread in range(self.boards.shape[0]):
            total = int(self.states[thread, 1])
            new = min(total - int(kept_before[thread]), RESTART_POOL)
            if new > 0:
                kept.append(self.boards[thread, np.arange(total - new, total) % RESTART_POOL])
        if not kept:
            return None
        boards = np.concatenate(kept)
        cells = largest_cells(boards[:, 0] if boards.shape[1] == 1 else boards)
        return float(np.isin(cells, corner_cells).mean())
