"""TD(0) learning of afterstate values: the Python loop that runs it block by block.

The compiled side (greedy play, the TD update, whole blocks of episodes) is in
:mod:`td2048.kernels.episode`; this module allocates and calls one kernel per block of
episodes, as :class:`~td2048.learning_options.LearningOptions` say. A run's blocks one after another (the schedule of
alpha, the TC phase, a teacher) are :mod:`td2048.training`'s.

``backward`` updating (the default, as in the course demo) plays the whole episode first and
then updates from the last afterstate to the first, so each target already holds the updated
value of its successor; ``forward`` updates each afterstate online as soon as the next move
is chosen. Either way every feature weight moves by alpha / (tuples x isomorphisms) of the
TD error.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from td2048.config import DEFAULT_MEMORY_LIMIT, MAX_EPISODE_MOVES, WIDE_MAX_EPISODE_MOVES
from td2048.errors import TD2048Error
from td2048.kernels.merge import CHUNK_SHIFT, NO_TRACKING, dirty_size, merge_regions
from td2048.kernels.params import FIRST_EPISODE, learning_params
from td2048.kernels.records import RECORD, pack_records, unpack_records
from td2048.learning_options import LearningOptions
from td2048.network import Network, aligned_zeros
from td2048.restart_pools import RestartPools
from td2048.rng import rounding_states, thread_rng_rows, thread_rng_states
from td2048.schedules import exploration
from td2048.spec import format_bytes
from td2048.teacher import endgame_arrays, table_nbytes
from td2048.threads import run_threads

DEFAULT_OPTIONS = LearningOptions()  # TD(0), backward updates, no exploration


@dataclass
class EpisodeBlock:
    """Per-episode results of one block."""

    scores: np.ndarray
    max_codes: np.ndarray
    moves: np.ndarray
    seconds: float
    restarted: np.ndarray | None = None  # 1 for episodes started from a kept board (--restarts)
    info: dict | None = None  # more fields for the block's log line (Ray workers' syncs)


class Learner:
    """Learns from blocks of episodes of a network, with explicit random state.

    (Playing without learning, greedily or by search, is :class:`td2048.play.Agent`'s.) With ``threads`` > 1 the
    episodes of a block are shared among threads that play at once (the kernels release the GIL). Every thread
    updates the network's own weights (and TC's accumulators), without locks, as TDL2048+ does: an update that two
    threads make to one weight at the same instant may lose one of them; no copies, no merges. With
    ``merge_seconds`` set, TD instead trains a copy of the weights per thread, merged into the network every
    ``merge_seconds`` of training (see :mod:`td2048.kernels.merge` for how) and whenever :meth:`merge` is called (0:
    after every share of episodes a thread finishes, whatever the clock says); TC always shares the table. Why one
    table by default: merged copies learn less per episode (the Methods page, "Threads").
    Multi-thread runs are fast but not reproducible; one thread is reproducible bit for bit.

    With ``tc_records``, TC on this machine's threads learns on records, each weight beside its
    two accumulators (:mod:`td2048.kernels.records`: an update writes one cache line, not two,
    which threads that share the table pass between cores less often), when weights,
    accumulators and records fit in ``memory_limit`` together; else, and by default, on the
    network's own arrays. The learning is the same either way.

    The learner owns the network's weights while it learns: read them (and TC's accumulators)
    after :meth:`merge`, and change them between blocks only through :meth:`sync` (or a new
    learner).

    Parameters
    ----------
    network : Network
        The network to train (its weights change in place).
    seed : int or None
        Seed of the threads' random states; None: fresh entropy.
    threads : int
        Threads that learn at once.
    rng_states : numpy.ndarray or None
        ``uint64[threads, 4]``: the threads' random states to go on from (a resumed run), instead of ``seed``.
    merge_seconds : float or None
        TD on threads: seconds of training between merges of the threads' copies; None (the
        default): no copies, the threads write the network's weights.
    memory_limit : int
        The most bytes of weights and what grows with them (TC's accumulators and records).
    tc_records : bool
        TC learns on records (see above).

    Raises
    ------
    TD2048Error
        When threads is below 1.
    """

    def __init__(self, network: Network, seed: int | None = None, threads: int = 1,
                 rng_states: np.ndarray | None = None, merge_seconds: float | None = None,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT, tc_records: bool = False):
        if threads < 1:
            raise TD2048Error(f"threads must be at least 1, not {threads}")
        self.network = network
        self.threads = threads
        if rng_states is None:
            rng_states = thread_rng_states(seed, threads)
        self._rng_rows = thread_rng_rows(np.asarray(rng_states, dtype=np.uint64).reshape(threads, 4))
        self._table = network.row_table()
        longest = WIDE_MAX_EPISODE_MOVES if network.wide else MAX_EPISODE_MOVES
        words = 2 if network.wide else 1  # a board is one uint64, or two on 5-bit cells
        self._paths_after = np.zeros((threads, longest, words), np.uint64)
        self._paths_steps = np.zeros((threads, longest, 2), np.float64)  # reward and updated V per move
        self._handoff = np.zeros((threads, 2, words), np.uint64)  # an episode going on on 5-bit cells
        self._handoff_counts = np.zeros((threads, 2), np.int64)
        self.pools = RestartPools(threads, words)  # each thread's boards kept for restarts
        self._copies = None  # per-thread weight copies, made on the first learning block
        self._dirty = None  # per thread: the regions of its copy it changed since the last merge
        self._regions = None  # TD on one tracked table: per thread, the regions it changed (see track_changes)
        self.merge_seconds = merge_seconds  # TD on copies: training time between their merges; None: one table
        self._unmerged_seconds = 0.0
        self._stop = np.zeros(1, np.uint8)  # set to 1: the kernels return before their next episode
        self._endgame_counts = np.zeros((threads, 8), np.int64)  # [:, :3] an endgame's moves, episodes, starts
        self.change_flags = None  # a byte per chunk of CHUNK weights that changed (see track_changes)
        # TC: each weight beside its accumulators (td2048.kernels.records), while TC learns on them; what the
        # network's arrays hold is then written by merge() (records_merged: they hold it already)
        self._records = None
        self._records_merged = True
        self.memory_limit = memory_limit
        self.tc_records = tc_records
        self.unflagged = False  # weights changed since the flags were cleared that the flags do not show

    @property
    def rng_states(self) -> np.ndarray:
        """The threads' random states, ``uint64[threads, 4]`` (a view: it advances as episodes are played)."""
        return self._rng_rows[:, :4]

    @property
    def rng_state(self) -> np.ndarray:
        """The random state of the first (with one thread: the only) thread."""
        return self._rng_rows[0, :4]

    def restart_pools(self) -> list[dict]:
        """The boards kept for restarts, per thread, for a snapshot (:meth:`RestartPools.to_json`).

        Returns
        -------
        list of dict
            Per thread: the boards kept in all, and those held.
        """
        return self.pools.to_json()

    def set_restart_pools(self, pools: list[dict]) -> None:
        """Take back the boards of :meth:`restart_pools` (a resumed run; :meth:`RestartPools.load_json`).

        Parameters
        ----------
        pools : list of dict
            Per thread, as :meth:`restart_pools` gives them (saved by any number of threads).
        """
        self.pools.load_json(pools)

    def start_over(self, optimistic: float = 0.0) -> None:
        """Forget what was learned: the network's weights as fresh (:meth:`td2048.network.Network.reset`), and
        the threads' copies, TC's records, the boards kept for restarts and the endgame's counts dropped; the
        random streams go on, so that the next start plays other games.

        Parameters
        ----------
        optimistic : float
            The fresh weights' value of every board (0: zeros).
        """
        self._copies = self._dirty = self._regions = None
        self._records, self._records_merged = None, True
        self._unmerged_seconds = 0.0
        self.pools.clear()
        self._handoff_counts[:] = 0
        self._endgame_counts[:] = 0
        self.network.reset(optimistic)
        if self.change_flags is not None:
            self.change_flags[:] = 1
        self.unflagged = True

    def promote_stages(self, rate: float = 1.0) -> None:
        """Each stage of the network after the first becomes a copy of the one before it, as it is now, its TC
        accumulators fresh at ``rate`` (:meth:`td2048.network.Network.promote_stages`); what the threads learned
        is merged first, and the threads' copies and flags take the new weights."""
        self._leave_records()
        self.merge()
        self.network.promote_stages(rate)
        self.sync()
        if self.change_flags is not None:
            self.change_flags[:] = 1
        self.unflagged = True

    def track_changes(self) -> np.ndarray:
        """Have the blocks flag the chunks of weights they change (for a sync that lists only those).

        Returns the flags, ``uint8[n / CHUNK + 1]``: a byte per chunk of
        :data:`~td2048.kernels.merge.CHUNK` weights. TC sets a chunk's byte to 1 at every update of
        the chunk (the threads share the bytes; a plain store, so none is lost). TD's threads each
        mark the regions they change in a byte array of their own (the kernels of TD's copies) and
        the block sets the flags of those chunks as it ends. Clear them (and :attr:`unflagged`,
        which is set when a block changes weights without flags: TD on copies, or one before this
        call) once the changes are taken.
        """
        if self.change_flags is None:
            self._leave_records()  # flagged TC learns on the network's own arrays
            self.change_flags = np.zeros((self.network.weights.size >> CHUNK_SHIFT) + 1, np.uint8)
            self.unflagged = True
        return self.change_flags

    def sync(self) -> None:
        """Take the network's weights again (after they were changed from outside)."""
        if self._records is not None:
            pack_records(self.network.weights, self.network.start_accumulators(), self._records)
            self._records_merged = True
        if self._copies is not None:
            self._copies[:] = self.network.weights
            self._dirty[:] = 0
            self._unmerged_seconds = 0.0

    def merge(self) -> None:
        """Bring what the threads learned into the network's weights (and TC's accumulators) now: before
        reading or saving them."""
        if self._copies is not None and self._unmerged_seconds > 0:
            self._merge()
            self._unmerged_seconds = 0.0
        if self._records is not None and not self._records_merged:
            unpack_records(self._records, self.network.weights, self.network.accumulators)
            self._records_merged = True

    def _leave_records(self) -> None:
        """Learn on the network's own arrays from now on: TC's records written into them, and dropped."""
        if self._records is not None:
            self.merge()
            self._records = None

    def _tc_records(self, accumulators: np.ndarray) -> np.ndarray | None:
        """TC's records, made from the network's weights and accumulators on the first TC block (None: they do
        not fit in the memory limit beside them, and TC learns on the network's own arrays)."""
        if self._records is None:
            if not self.tc_records or self.network.spec.tc_nbytes(records=True) > self.memory_limit:
                return None
            try:
                self._records = aligned_zeros(RECORD * self.network.weights.size)
            except MemoryError:
                return None
            pack_records(self.network.weights, accumulators, self._records)
        self._records_merged = False
        return self._records

    def endgame_of(self, solution) -> tuple:
        """The arrays through which :meth:`run` plays an endgame's table in its episodes.

        Parameters
        ----------
        solution : td2048.solve.Solution
            An endgame's table of the network's board (``td2048 solve --fixed ... --goal ...``, read with
            ``load_solution(path, endgame=True)``).

        Returns
        -------
        tuple
            :func:`td2048.teacher.endgame_arrays`'s, for :meth:`run`'s ``endgame``.

        Raises
        ------
        TD2048Error
            For a table that :func:`~td2048.teacher.endgame_arrays` refuses, or one that does not fit in the
            memory limit beside the weights.
        """
        arrays = endgame_arrays(solution, self.network.board, self.network.game, self.network.wide)
        table_bytes = table_nbytes(arrays[0])
        if self.network.spec.nbytes + table_bytes > self.memory_limit:
            raise TD2048Error(f"--endgame: the weights ({format_bytes(self.network.spec.nbytes)}) and the endgame's "
                              f"table ({format_bytes(table_bytes)}) exceed the memory limit "
                              f"({format_bytes(self.memory_limit)}): give a larger --memory-limit")
        return arrays

    def _params(self, alpha: float, options: LearningOptions, first: int = 0) -> np.ndarray:
        """The kernels' parameter vector (see :mod:`td2048.kernels.params`): alpha split over the features."""
        return learning_params(alpha / self.network.spec.n_features, options.lam, options.nstep,
                               exploration(options.explore), first, options.promote, options.restarts,
                               options.restart_code, options.teacher_moves, options.target == "expected-all",
                               options.teacher_loss, options.target == "ranked", options.endgame_starts,
                               options.restart_beside)

    def _path(self, thread: int) -> tuple[np.ndarray, np.ndarray]:
        """A thread's episode path for the kernels: (boards, (reward, updated V) per move)."""
        return self._paths_after[thread], self._paths_steps[thread]

    def _handoff_of(self, thread: int) -> tuple[np.ndarray, np.ndarray]:
        """A thread's hand-off for the kernels: (board and last afterstate, score and moves)."""
        return self._handoff[thread], self._handoff_counts[thread]

    def run(self, episodes: int, alpha: float, options: LearningOptions = DEFAULT_OPTIONS, first_episode: int = 0,
            tc: bool = False, teacher=None, endgame=None) -> EpisodeBlock:
        """Learn from ``episodes`` episodes, as ``options`` says (:class:`td2048.learning_options.LearningOptions`).

        Parameters
        ----------
        episodes : int
            Episodes to play and learn from.
        alpha : float
            The learning rate (split over the features); with ``tc``, TC's meta rate.
        options : LearningOptions
            The run's options: backward or forward updates, lambda- or n-step returns, the exploration schedule
            (its episodes counted from ``first_episode``), promotion of a multistage network's new stage,
            restarts, TC's first rate (the network's accumulators are made on the first TC block), the
            target (``"sample"``, ``"expected"`` or ``"expected-all"``) and the teacher's share of moves.
        first_episode : int
            The block's first episode, in the run's count.
        tc : bool
            Temporal coherence: each weight's rate from its accumulators.
        teacher : tuple or None
            Distillation (:func:`td2048.teacher.teacher_arrays`): each position played moves toward perfect play's
            exact value instead, and a share ``options.teacher_moves`` of the episodes follows perfect play.
        endgame : tuple or None
            An endgame's table (:meth:`endgame_of`): it chooses the moves of its endgame in these episodes, learned
            from as played (:func:`td2048.kernels.episode.play_from`); ``options.endgame_starts`` needs it.

        Returns
        -------
        EpisodeBlock
            Every episode's results, in order; with ``endgame``, its ``info`` holds ``endgame``: ``moves`` (the
            table chose), ``episodes`` (it played in) and ``starts`` (episodes started from the endgame's start,
            ``options.endgame_starts``; among the restarted ones).
        """
        expected = options.target != "sample"
        # TD on threads: on copies when merge_seconds is set, else (and always for TC) on the network's own weights
        copies = self.threads > 1 and not tc and self.merge_seconds is not None
        if self.network.weight_bits != 32 and (copies or self.change_flags is not None):
            raise TD2048Error("16-bit weights train on one table: not on copies per thread (--merge-every) "
                              "nor on Ray's workers")
        tracked_tc = tc and self.change_flags is not None
        tracked_td = not tc and not copies and self.change_flags is not None  # flags folded in as the block ends
        # made here, not by several threads
        accumulators = self.network.start_accumulators(options.tc_start_rate) if tc else None
        if tc and self._copies is not None:  # TD then TC (OTD then TC): what the copies learned goes in first
            self.merge()
            self._copies = None
        records = self._tc_records(accumulators) if tc and not tracked_tc else None
        if records is None:  # TD (or tracked TC) after TC: on the network's arrays again
            self._leave_records()
        if tc:
            kernels = self.network.kernels_for(tc=True, tracked=tracked_tc, records=records is not None,
                                               expected=expected)
        else:
            kernels = self.network.kernels_for(tracked=tracked_td, expected=expected, shared=self.threads > 1)
        tracked = copies or tracked_tc or tracked_td  # the kernels flag what they change
        if not (tracked_tc or tracked_td):
            self.unflagged = True
        if tracked_td and self._regions is None:
            self._regions = np.zeros((self.threads, dirty_size(self.network.weights.size)), np.uint8)
        mode_code = self._mode_code(options.update)
        params = self._params(alpha, options, first_episode)
        kept_before = self.pools.kept()  # for the block's corner share (with restarts)
        scores = np.zeros(episodes, np.int64)
        max_codes = np.zeros(episodes, np.int64)
        moves = np.zeros(episodes, np.int64)
        restarted = np.zeros(episodes, np.uint8)
        if copies and self._copies is None:
            self._copies = aligned_zeros(self.threads, self.network.weights.size)
            self._copies[:] = self.network.weights
            # only merges write the network's weights: fault their pages in now (a fresh network's
            # are not yet), not in the first merge, where every thread would wait on it
            self.network.weights[:] = self._copies[0]
            self._dirty = np.zeros((self.threads, dirty_size(self.network.weights.size)), np.uint8)
        if copies:
            kernels = self.network.kernels_for(tracked=True, expected=expected)

        self._endgame_counts[:] = 0
        # 16-bit weights: ``dirty`` is each thread's random word for rounding updates (td2048.kernels.features)
        rounding = rounding_states(self.rng_states, self.network.spec.spare_weights(self.threads)) \
            if self.network.weight_bits == 16 else None
        if endgame is None and options.endgame_starts:
            raise TD2048Error("endgame_starts starts episodes from an endgame's start: pass its table (endgame)")

        def learn_share(thread, lo, hi):
            """Learn from episodes lo..hi-1 on a thread; returns where it got to (before hi: a merge was asked for)."""
            weights = self._copies[thread] if copies else self.network.weights if records is None else records
            if copies or tracked_td:  # the regions this thread changed: in its copy, or in the one table
                dirty = self._dirty[thread] if copies else self._regions[thread]
            elif tc:
                dirty = (accumulators, self.change_flags) if tracked_tc else accumulators if records is None \
                    else NO_TRACKING
            else:
                dirty = NO_TRACKING if rounding is None else rounding[thread]
            pool = self.pools.of(thread)
            while lo < hi:
                batch = params.copy()
                batch[FIRST_EPISODE] += lo  # the exploration schedule counts episodes
                out = (scores[lo:hi], max_codes[lo:hi], moves[lo:hi], restarted[lo:hi])
                if teacher is not None:  # distillation: small boards, no hand-off to 5-bit cells
                    lo += kernels.distill_block(self._table, weights, dirty, self.rng_states[thread], batch, teacher,
                                                self._stop, out)[0]
                    return lo
                played_by_table = None if endgame is None else (endgame, self._endgame_counts[thread, :3])
                played, handed = kernels.run_block(self._table, weights, dirty, self.rng_states[thread], mode_code,
                                                   batch, self._path(thread), self._handoff_of(thread), pool,
                                                   self._stop, out, played_by_table)
                lo += played
                if not handed:
                    return lo
                batch[FIRST_EPISODE] = params[FIRST_EPISODE] + lo
                scores[lo], moves[lo], max_codes[lo] = self._finish_wide(thread, weights, dirty, tracked,
                                                                         mode_code, batch, tc, records is not None,
                                                                         expected)
                lo += 1
            return lo

        start = time.perf_counter()
        try:
            if copies:  # the threads stop together to merge their copies every so often
                self._learn_threads(episodes, learn_share)
            elif self.threads > 1:  # the threads write one table
                self._learn_shared(episodes, learn_share)
            else:
                learn_share(0, 0, episodes)
        finally:
            if tracked_td:
                self._flag_regions()
        seconds = time.perf_counter() - start
        info = {}
        if endgame is not None:
            counts = self._endgame_counts[:, :3].sum(axis=0)
            info["endgame"] = {"moves": int(counts[0]), "episodes": int(counts[1]), "starts": int(counts[2])}
        corners = self.network.board.corner_cells
        if options.restarts > 0 and (corner := self.pools.corner_share(kept_before, corners)) is not None:
            info["corner"] = corner
        return EpisodeBlock(scores, max_codes, moves, seconds, restarted, info or None)

    def _flag_regions(self) -> None:
        """Set the change flags of the chunks that TD's threads marked in their regions, and clear the marks.

        A region's byte has a bit per chunk (see :mod:`td2048.kernels.merge`): bit b of region r is chunk
        8 r + b, one byte of :attr:`change_flags`."""
        marked = np.bitwise_or.reduce(self._regions, axis=0)
        chunks = np.unpackbits(marked, bitorder="little")[:self.change_flags.size]
        np.bitwise_or(self.change_flags, chunks, out=self.change_flags)
        self._regions[:] = 0

    def _finish_wide(self, thread, weights, dirty, tracked, mode_code, params, tc=False, records=False,
                     expected=False):
        """Finish, on 5-bit cells, an episode that reached two 32768 tiles on 4-bit cells: (score, moves, code).

        The wide kernels index the same weights (codes up to 15 read the same entries), so the
        episode, its path and its updates go on where the 4-bit kernels left them."""
        wide = self.network.wide_kernels(tracked, tc, records, expected)
        steps = int(self._handoff_counts[thread, 1])
        path = np.zeros((WIDE_MAX_EPISODE_MOVES, 2), np.uint64)
        path[:steps, 0] = self._paths_after[thread, :steps, 0]
        path_steps = np.zeros((WIDE_MAX_EPISODE_MOVES, 2), np.float64)
        path_steps[:steps + 1] = self._paths_steps[thread, :steps + 1]  # + the reward into a state (state values)
        start = np.zeros((2, 2), np.uint64)
        start[:, 0] = self._handoff[thread, :, 0]
        counts = self._handoff_counts[thread].copy()
        largest, _ = wide.finish_from(self.network.row_table(wide=True), weights, dirty, self.rng_states[thread],
                                      mode_code, params, (path, path_steps), (start, counts), None)
        return int(counts[0]), int(counts[1]), int(largest)

    def _mode_code(self, update: str) -> int:
        kernels = self.network.kernels
        return kernels.BACKWARD if update == "backward" else kernels.FORWARD

    def learn_from(self, board, alpha: float = 0.1, options: LearningOptions = DEFAULT_OPTIONS) -> tuple[int, int, int]:
        """Learn from one episode played on from a position, with the first thread's random state.

        Parameters
        ----------
        board : int or tuple of (int, int)
            The position: an int on 4-bit cells, (lo, hi) on 5-bit cells.
        alpha : float
            The learning rate (split over the features).
        options : LearningOptions
            The update (backward or forward), the returns (lambda or n-step) and the episode's other options, as
            :meth:`run` takes them (a position played on is neither a restart nor a teacher's game).

        Returns
        -------
        tuple of (int, int, int)
            The episode's score, moves and largest tile code.
        """
        self._leave_records()
        kernels = self.network.kernels
        mode_code = self._mode_code(options.update)
        params = self._params(alpha, options)
        self.unflagged = True
        self._handoff[0] = 0
        self._handoff[0, 0] = board if self.network.wide else [board]
        self._handoff_counts[0] = 0
        dirty = NO_TRACKING if self.network.weight_bits == 32 else rounding_states(self.rng_states[:1])[0]
        largest, handed = kernels.finish_from(self._table, self.network.weights, dirty, self.rng_state,
                                              mode_code, params, self._path(0), self._handoff_of(0), None)
        if handed:
            return self._finish_wide(0, self.network.weights, dirty, False, mode_code, params)
        return int(self._handoff_counts[0, 0]), int(self._handoff_counts[0, 1]), int(largest)

    def _merge(self) -> None:
        """Merge the copies into the network's weights, each thread a share of the regions."""
        bounds = np.linspace(0, self._dirty.shape[1], self.threads + 1).astype(np.int64)
        run_threads(self.threads, lambda t: merge_regions(self.network.weights, self._copies, self._dirty,
                                                          bounds[t], bounds[t + 1]))

    def _learn_shared(self, episodes: int, learn_share) -> None:
        """Learn ``episodes`` episodes on the threads at once, all on the network's weights (no merges).

        The threads take shares of the episodes left, each smaller as the block nears its end."""
        lock = threading.Lock()
        state = {"next": 0}

        def worker(thread):
            while True:
                with lock:
                    lo = state["next"]
                    if lo >= episodes:
                        return
                    hi = min(episodes, lo + max(1, (episodes - lo) // (2 * self.threads)))
                    state["next"] = hi
                learn_share(thread, lo, hi)

        run_threads(self.threads, worker)

    def _learn_threads(self, episodes: int, learn_share) -> None:
        """Learn ``episodes`` episodes on the threads' copies, merging them every ``merge_seconds``.

        The threads take shares of the episodes left (a share shrinks as the block nears its end,
        so no thread waits long for another at the end). Every ``merge_seconds`` this thread
        raises the stop flag that the kernels read before each episode: each thread returns
        from its kernel, waits for the others, merges its share of the weight regions, and goes
        on with its episodes. A merge thus waits at most one episode for the slowest thread,
        and no thread is started or stopped for it.
        """
        lock = threading.Lock()
        barrier = threading.Barrier(self.threads)
        regions = np.linspace(0, self._dirty.shape[1], self.threads + 1).astype(np.int64)
        # pending: a merge was asked for; played: an episode was finished since the last merge
        # (a merge is asked for only then, so that the threads always get on)
        state = {"next": 0, "pending": False, "played": False,
                 "since": time.perf_counter() - self._unmerged_seconds}

        def merged() -> None:  # run by one thread once all have merged their share
            self._stop[0] = 0
            state["pending"] = False
            state["played"] = False
            state["since"] = time.perf_counter()

        def worker(thread):
            lo = hi = 0
            while True:
                with lock:
                    merging = state["pending"]
                    if not merging and lo >= hi:
                        lo = state["next"]
                        if lo >= episodes:  # no merge can come now: one is asked for only while episodes are left
                            return
                        hi = min(episodes, lo + max(1, (episodes - lo) // (2 * self.threads)))
                        state["next"] = hi
                if merging:  # every thread comes here before it plays on
                    barrier.wait()
                    merge_regions(self.network.weights, self._copies, self._dirty,
                                  regions[thread], regions[thread + 1])
                    barrier.wait()
                    if thread == 0:
                        merged()
                    barrier.wait()
                    continue
                start = lo
                lo = learn_share(thread, lo, hi)
                if lo > start:
                    with lock:
                        state["played"] = True
                        if self.merge_seconds <= 0 and state["next"] < episodes:
                            state["pending"] = True  # merges due all the time: one after every share
                            self._stop[0] = 1

        def ask_for_merge() -> float:
            """Raise the stop flag when a merge is due; the seconds until it should look again."""
            with lock:
                if state["pending"]:
                    return 0.001
                due = state["since"] + self.merge_seconds - time.perf_counter()
                if due > 0:
                    return due
                if state["played"] and state["next"] < episodes:
                    state["pending"] = True
                    self._stop[0] = 1
                return 0.001

        def stop_kernels() -> None:  # a thread failed: the others return from their kernels to find the broken barrier
            self._stop[0] = 1

        try:
            run_threads(self.threads, worker, barrier=barrier, on_error=stop_kernels, tick=ask_for_merge)
        finally:
            self._stop[0] = 0
        self._unmerged_seconds = time.perf_counter() - state["since"]

