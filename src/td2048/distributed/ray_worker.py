"""A worker of a training run on Ray (``td2048 train --ray``): the body of one worker actor.

:class:`TrainWorker` is what each worker actor of :class:`td2048.distributed.ray_train.RayLearner` holds: a copy
of the network, the base of the last sync (the weights every worker held then), and a
:class:`td2048.learn.Learner` on threads of its own. It learns the pieces of blocks that the driver hands
out (:meth:`TrainWorker.learn`) and takes its part in each sync's three steps (see
:mod:`td2048.distributed.ray_train`): it lists the weights it changed, one segment per index range
(:meth:`TrainWorker.changes`); it merges one range of every worker's lists against the base
(:meth:`TrainWorker.merge`, by :func:`merge_parts`); and it writes every merged range into its weights and its
base, keeping what it learned since it listed its changes (:meth:`TrainWorker.apply`).

Ray is imported by the methods that reach the object store, not by this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td2048.kernels.exchange import apply_merged, changed_indices, flagged_indices, gather_changes, merge_changes
from td2048.kernels.merge import CHUNK_SHIFT
from td2048.learn import Learner
from td2048.learning_options import LearningOptions
from td2048.network import Network, aligned_zeros, fresh_accumulators
from td2048.spec import NetworkSpec
from td2048.threads import run_threads

NO_ACCUMULATORS = np.zeros(0, np.float32)
NOTHING_LISTED = (np.zeros(0, np.uint32), np.zeros(0, np.float32), np.zeros((0, 2), np.float32))


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs besides the weights to build its network and learner (small: sent once).

    Parameters
    ----------
    spec : NetworkSpec
        The network's tuples and layout.
    game : str
        ``"2048"`` or ``"2584"``.
    cell_bits : int
        4 or 5.
    method : str
        ``"afterstate"`` or ``"state"``.
    threads : int
        The worker's threads.
    merge_seconds : float or None
        TD on threads: seconds between merges of the threads' copies; None: one table, no copies.
    memory_limit : int
        The most bytes of weights.
    tc_start_rate : float
        Each weight's first TC rate (see :func:`td2048.network.fresh_accumulators`): every worker's
        accumulators, and the base their changes are taken against, start the same.
    """

    spec: NetworkSpec
    game: str
    cell_bits: int
    method: str
    threads: int
    merge_seconds: float | None
    memory_limit: int
    tc_start_rate: float = 1.0


def _own_copy(array: np.ndarray | None) -> np.ndarray | None:
    """A writable copy on cache lines of an array the object store handed out (read-only)."""
    if array is None:
        return None
    copy = aligned_zeros(array.size)
    copy[:] = array
    return copy


def merge_parts(parts: list[tuple], base: np.ndarray, accumulator_base: np.ndarray, threads: int = 1) -> tuple:
    """Merge the workers' changes of one index range, each thread a share of it.

    Parameters
    ----------
    parts : list of tuple
        Per worker ``(indices ascending, values, accumulators or [0, 2])``, as
        :func:`td2048.kernels.exchange.gather_changes` makes them.
    base : numpy.ndarray
        The weights of the last sync.
    accumulator_base : numpy.ndarray
        TC's accumulators of the last sync, or an empty array.
    threads : int
        Threads that merge at once.

    Returns
    -------
    tuple of numpy.ndarray
        ``(indices ascending, merged weights, merged accumulators or [0, 2])``, one entry per distinct index.
    """
    tc = any(len(p[2]) for p in parts)
    lo = min((int(p[0][0]) for p in parts if len(p[0])), default=0)
    hi = max((int(p[0][-1]) + 1 for p in parts if len(p[0])), default=0)
    cuts = np.linspace(lo, hi, threads + 1).astype(np.int64)  # every part is sorted: cut by index
    merged = [None] * threads

    def merge_share(t):
        pieces = []
        for indices, values, acc in parts:
            a, b = np.searchsorted(indices, cuts[t:t + 2])
            pieces.append((indices[a:b], values[a:b], acc[a:b] if tc else np.zeros((0, 2), np.float32)))
        merged[t] = merge_changes(*(np.concatenate([piece[i] for piece in pieces]) for i in range(3)), base,
                                  accumulator_base)

    run_threads(threads, merge_share)
    return tuple(np.concatenate([m[i] for m in merged]) for i in range(3))


class TrainWorker:
    """The body of a worker actor: a network, the base of the last sync, and a learner.

    Parameters
    ----------
    spec : WorkerSpec
        The network and the learner's settings.
    weights : numpy.ndarray
        The weights to start from (the object store's array).
    accumulators : numpy.ndarray or None
        TC's accumulators to start from, if the run has them.
    rng_states : numpy.ndarray
        ``uint64[threads, 4]``: the random states of the worker's threads.
    """

    def __init__(self, spec: WorkerSpec, weights: np.ndarray, accumulators: np.ndarray | None,
                 rng_states: np.ndarray):
        self.network = Network(spec.spec, _own_copy(weights), memory_limit=max(spec.memory_limit, spec.spec.nbytes),
                               game=spec.game, cell_bits=spec.cell_bits, method=spec.method,
                               accumulators=_own_copy(accumulators))
        self.base = _own_copy(weights)
        self.accumulator_base = _own_copy(accumulators)
        self.tc_start_rate = spec.tc_start_rate
        self.learner = Learner(self.network, threads=spec.threads, rng_states=rng_states,
                               merge_seconds=spec.merge_seconds)
        self.learner.track_changes()  # TC blocks flag the chunks they change: a sync lists only those
        self._listed = None  # (indices, values, accumulators) this worker listed for the sync under way

    def ready(self) -> tuple[int, str]:
        """Once built: (the worker's process id, its node id)."""
        import os

        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def learn(self, episodes: int, alpha: float, options: LearningOptions, first_episode: int, tc: bool) -> tuple:
        """Learn from ``episodes`` episodes, as :meth:`td2048.learn.Learner.run` takes them.

        Returns (scores, largest tile codes, moves, restarted, seconds) per episode."""
        block = self.learner.run(episodes, alpha, options, first_episode, tc)
        return block.scores, block.max_codes, block.moves, block.restarted, block.seconds

    def _accumulators(self) -> tuple[np.ndarray, np.ndarray]:
        acc = self.network.accumulators
        if acc is None:
            return NO_ACCUMULATORS, NO_ACCUMULATORS
        if self.accumulator_base is None:  # the TC phase began on this worker since the last sync
            # where every worker's accumulators start
            self.accumulator_base = fresh_accumulators(self.base.size, self.tc_start_rate)
        return acc, self.accumulator_base

    def _changed_indices(self, acc: np.ndarray, acc_base: np.ndarray) -> np.ndarray:
        """The weights changed since the last sync, each of the worker's threads over a range of them.

        Where every change since the last sync was made by tracked TC kernels, only the chunks they
        flagged are read (:func:`flagged_indices`); else all weights (:func:`changed_indices`)."""
        flags = self.learner.change_flags
        whole = self.learner.unflagged
        threads = self.learner.threads
        chunks = np.linspace(0, flags.size, threads + 1).astype(np.int64)
        cuts = np.minimum(chunks << CHUNK_SHIFT, self.base.size)  # thread t: weights cuts[t]..cuts[t + 1]
        found = [None] * threads
        tc = len(acc) > 0

        def scan(t):
            lo, hi = cuts[t], cuts[t + 1]
            arrays = (self.network.weights[lo:hi], self.base[lo:hi], acc[2 * lo:2 * hi] if tc else acc,
                      acc_base[2 * lo:2 * hi] if tc else acc)
            if whole:
                found[t] = lo + changed_indices(*arrays)
            else:
                found[t] = lo + flagged_indices(*arrays, flags[chunks[t]:chunks[t + 1]], CHUNK_SHIFT)

        if whole:  # cleared first: a change made while the scan runs (beside the learning) is flagged again
            flags[:] = 0
            self.learner.unflagged = False
        run_threads(threads, scan)
        return np.concatenate(found).astype(np.uint32)

    def changes(self, bounds: np.ndarray) -> list:
        """Step 1 of a sync: the changes since the last sync, one object per index range of ``bounds``.

        Returns the objects' references (owned by this worker), and the number of weights changed."""
        import ray

        segments = self.list_changes(bounds)
        return [[ray.put(segment) for segment in segments], len(self._listed[0])]

    def list_changes(self, bounds: np.ndarray) -> list[tuple]:
        """The changes since the last sync, ``(indices, values, accumulators or [0, 2])``, one segment per
        index range of ``bounds`` (kept: :meth:`write` takes the merged values against them)."""
        self.learner.merge()  # the threads' copies, into the network's weights
        acc, acc_base = self._accumulators()
        indices = self._changed_indices(acc, acc_base)
        values, acc_values = gather_changes(indices, self.network.weights, acc)
        self._listed = (indices, values, acc_values)
        cuts = np.searchsorted(indices, bounds)
        return [(indices[a:b], values[a:b], acc_values[a:b] if len(acc_values) else acc_values)
                for a, b in zip(cuts[:-1], cuts[1:])]

    def merge(self, refs: list) -> tuple:
        """Step 2 of a sync: merge every worker's changes of one index range (``refs``: their objects)."""
        import ray

        parts = ray.get(refs)
        base_acc = NO_ACCUMULATORS
        tc = any(len(p[2]) for p in parts)
        if tc:  # a worker that has not learned by TC yet sent no accumulators: its are those of the base
            if self.accumulator_base is None:
                self.accumulator_base = fresh_accumulators(self.base.size, self.tc_start_rate)
            base_acc = self.accumulator_base
            parts = [p if len(p[2]) == len(p[0]) else (p[0], p[1], base_acc.reshape(-1, 2)[p[0]]) for p in parts]
        return merge_parts(parts, self.base, base_acc, self.learner.threads)

    def apply(self, refs: list) -> None:
        """Step 3 of a sync: write the merged ranges (``refs``: their objects) into the weights and the base,
        keeping what the worker learned since it listed its changes (it plays on during a sync)."""
        import ray

        self.write(ray.get(refs))

    def write(self, parts: list[tuple]) -> None:
        """Write merged ``(indices, values, accumulators)`` parts, keeping what was learned since the listing."""
        self.learner.merge()  # the threads' copies, into the network's weights
        listed = self._listed if self._listed is not None else NOTHING_LISTED
        for indices, values, acc in parts:
            if len(acc) and self.network.accumulators is None:
                self.network.start_accumulators(self.tc_start_rate)
            acc_now, acc_base = self._accumulators()
            apply_merged(indices, values, acc, self.network.weights, self.base, acc_now, acc_base, *listed)
        self._listed = None
        self.learner.sync()

    def relist(self) -> None:
        """A sync that did not end (a worker was lost): list every changed weight at the next one."""
        self._listed = None
        self.learner.unflagged = True

    def rng_states(self) -> np.ndarray:
        """The random states of the worker's threads (for a snapshot)."""
        return np.array(self.learner.rng_states)

    def restart_pools(self) -> list[dict]:
        """The boards kept for restarts, per thread (for a snapshot)."""
        return self.learner.restart_pools()

    def set_restart_pools(self, pools: list[dict]) -> None:
        """Take back kept boards (a resumed run)."""
        self.learner.set_restart_pools(pools)


__all__ = ["NO_ACCUMULATORS", "TrainWorker", "WorkerSpec", "merge_parts"]
