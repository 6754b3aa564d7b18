"""One training run across a Ray cluster (``td2048 train --ray [ADDRESS] --workers K``).

Each of K workers is a Ray actor (a process, on whichever node has its CPUs; its body is
:class:`td2048.distributed.ray_worker.TrainWorker`) with a copy of the network and a
:class:`td2048.learn.Learner` on ``--threads`` threads of its own, so that every
learning method runs on a worker exactly as it runs on one machine. The driver (the ``td2048
train`` process) hands out the episodes of each block in pieces to whichever worker is free (the
pieces shrink as the block nears its end, so no worker waits long for another), collects each
episode's statistics in block order, logs the block, and writes snapshots and the model as a
one-machine run does: :class:`RayLearner` stands where a :class:`~td2048.learn.Learner` stands in
:class:`td2048.run.TrainingRun`.

Every ``--sync-every`` seconds the workers exchange what they learned (:mod:`td2048.kernels.exchange`),
in three steps, none of which goes through one node; each step is a call that waits on the worker
behind the piece it is playing, and the workers play on between the steps:

1. each worker lists the weights it changed since the last sync (index and new value, TC's
   accumulators with them; TC kernels flag the chunks they change, so only those are read), cuts
   the list into K segments by index range and puts each into Ray's object store;
2. worker j gathers segment j of every worker and merges them against the base (the weights at
   the last sync), by the rule of :mod:`td2048.kernels.exchange`;
3. every worker, and the driver, gathers the K merged segments and writes them into its weights
   and its base; a worker adds what it learned since step 1 to the merged values.

Each worker thus sends and receives about two lists of its changes per sync, whatever K is (a
direct reduce-scatter, then an all-gather: what a ring does in 2(K - 1) steps, in two), and the
driver receives one merged list: it always holds the weights of the last sync, from which it
writes snapshots and starts a worker again.

A worker that dies (killed, out of memory, its node lost) costs its work since the last sync: the
driver starts another from the driver's weights, plays the piece it was playing again, and goes
on; a sync that a death interrupted is made again (the living workers still hold their changes).
Killing the driver kills its workers; ``--resume`` goes on from the last snapshot, as on one machine.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from td2048.config import DEFAULT_MEMORY_LIMIT, DEFAULT_SYNC_SECONDS
from td2048.distributed.cluster import forwarded_env, import_ray
from td2048.distributed.ray_worker import NO_ACCUMULATORS, TrainWorker, WorkerSpec
from td2048.errors import TD2048Error
from td2048.kernels.exchange import apply_changes
from td2048.learn import EpisodeBlock
from td2048.learning_options import LearningOptions
from td2048.network import Network
from td2048.rng import thread_rng_states

PIECE_SECONDS = 1.0  # a piece of a block is sized to take about this long (at most a quarter of --sync-every)
PIECES_AHEAD = 2  # pieces sent to a worker at once: it starts the next as it ends one, without waiting for the driver
START_SECONDS = 300  # a worker not started by then: the cluster has no room for it
SYNC_GROUP = "sync"  # the workers' concurrency group of the sync steps that run beside the learning
MAX_FAILURES = 5  # workers lost in a row (with no sync between) before the run gives up
DISK_FULL = ("a Ray node's object store is full and its disk too full to spill to (over Ray's "
             "RAY_local_fs_capacity_threshold, 95% by default): free disk space there, then --resume the run")


@dataclass
class _Sync:
    """A sync under way: the workers it began with, the calls of its current step, and what it gathered."""

    actors: list
    refs: list
    start: float
    step: int = 0  # 0: listing the changes, 1: merging them, 2: writing them in
    beside: bool = False  # its steps run on a thread of their own in each worker, beside the learning
    changed: list = None
    merged: list = None
    parts: list = None
    times: list = None


class RayLearner:
    """A :class:`~td2048.learn.Learner` whose episodes are played by ``workers`` Ray actors.

    The driver's network always holds the weights of the last sync. This process must be connected
    to Ray (:func:`td2048.distributed.cluster.connect_ray`).

    Parameters
    ----------
    network : Network
        The run's network; it receives every sync's merged weights.
    workers : int
        Worker actors, each a process with ``threads`` threads.
    threads : int
        Threads per worker.
    seed : int or None
        Seed of the workers' random states (worker k's threads take the states that threads
        k * threads ... of one process with workers x threads threads would).
    rng_states : numpy.ndarray or None
        ``uint64[workers * threads, 4]``: random states to go on from (a resumed run), instead of ``seed``.
    sync_seconds : float
        Seconds of learning between syncs.
    merge_seconds : float or None
        TD on a worker's threads: seconds between merges of their copies; None: one table, no copies.
    memory_limit : int
        The most bytes of weights per worker.
    resources : dict or None
        What each worker needs besides its CPUs (e.g. a custom resource that only some nodes have).
    tc_start_rate : float
        Each weight's first TC rate, the same on every worker and the driver (``--tc-start-rate``).

    Raises
    ------
    TD2048Error
        When workers or threads is below 1, or a worker cannot be started.
    """

    def __init__(self, network: Network, workers: int, threads: int = 1, seed: int | None = None,
                 rng_states: np.ndarray | None = None, sync_seconds: float = DEFAULT_SYNC_SECONDS,
                 merge_seconds: float | None = None, memory_limit: int = DEFAULT_MEMORY_LIMIT,
                 resources: dict | None = None, tc_start_rate: float = 1.0):
        if workers < 1 or threads < 1:
            raise TD2048Error(f"--workers and --threads must be at least 1, not {workers} and {threads}")
        self.ray = import_ray()
        self.network = network
        self.workers = workers
        self.threads = threads
        self.sync_seconds = sync_seconds
        self._spec = WorkerSpec(network.spec, network.game, network.cell_bits, network.method, threads,
                                merge_seconds, memory_limit, tc_start_rate)
        self._seed = seed
        if rng_states is None:
            rng_states = thread_rng_states(seed, workers * threads)
        self._start_states = np.asarray(rng_states, np.uint64).reshape(workers, threads, 4)
        self._bounds = np.linspace(0, network.weights.size, workers + 1).astype(np.int64)
        # a sync's steps may run on a thread of their own in each worker, beside its pieces (see _begin_sync)
        self._actor_class = self.ray.remote(concurrency_groups={SYNC_GROUP: 1})(TrainWorker).options(
            num_cpus=threads, max_restarts=0, scheduling_strategy="SPREAD",
            resources=resources or {}, runtime_env={"env_vars": forwarded_env()})
        self._weights_ref = None  # the driver's weights in the object store, put once per change
        self._replaced = 0  # workers started again (each with fresh random states)
        self._failures = 0  # workers lost since the last sync
        self._learned_since_sync = False
        self._last_sync = time.monotonic()
        # worker k's last piece learned on its one table (TC, or TD without copies), which flags its changes
        self._one_table = [False] * workers
        self.sync_log: list[dict] = []  # per sync: seconds, changed weights per worker, merged weights
        self.actors = [self._start(k, self._start_states[k]) for k in range(workers)]
        self.pids: list[int] = [0] * workers
        self.nodes: list[str] = [""] * workers
        for k, (pid, node) in enumerate(self._started([actor.ready.remote() for actor in self.actors])):
            self.pids[k], self.nodes[k] = pid, node

    # ------------------------------------------------------------ workers

    def _started(self, refs: list) -> list:
        """Wait for newly started workers; a cluster without room for them is an error, not a wait forever."""
        try:
            return self.ray.get(refs, timeout=START_SECONDS)
        except self.ray.exceptions.GetTimeoutError:
            free = self.ray.available_resources().get("CPU", 0)
            raise TD2048Error(f"{len(refs)} Ray worker(s) of {self.threads} CPU(s) each did not start in "
                              f"{START_SECONDS} s (the cluster has {free:g} CPU(s) free): ask for fewer "
                              "--workers or --threads") from None

    def _start(self, k: int, states: np.ndarray):
        if self._weights_ref is None:
            self._weights_ref = (self._put(self.network.weights),
                                 None if self.network.accumulators is None else self._put(self.network.accumulators))
        weights, acc = self._weights_ref
        return self._actor_class.remote(self._spec, weights, acc, states)

    def _replace(self, k: int) -> None:
        """Start worker k again from the driver's weights (those of the last sync), with fresh random states."""
        self._failures += 1
        if self._failures > MAX_FAILURES:
            raise TD2048Error(f"{self._failures} Ray workers died with no sync between: giving up (the last "
                              "snapshot is whole: --resume goes on from it)")
        try:
            self.ray.kill(self.actors[k])
        except Exception:  # noqa: BLE001 - it is dead already
            pass
        self._replaced += 1
        self._one_table[k] = False
        sys.stderr.write(f"td2048 train: warning: Ray worker {k} (process {self.pids[k]}) died; started again "
                         "from the weights of the last sync\n")
        seed = np.random.SeedSequence([self._seed or 0, 1 + k, self._replaced])
        self.actors[k] = self._start(k, thread_rng_states(seed, self.threads))
        self.pids[k], self.nodes[k] = self._started([self.actors[k].ready.remote()])[0]

    def _get(self, ref):
        """``ray.get``, with a worker's own error (a TD2048Error, a full disk) raised here in one line."""
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.OutOfDiskError:
            raise TD2048Error(DISK_FULL) from None
        except self.ray.exceptions.RayTaskError as e:
            if isinstance(e.cause, self.ray.exceptions.OutOfDiskError):
                raise TD2048Error(DISK_FULL) from None
            if isinstance(e.cause, TD2048Error):
                raise TD2048Error(str(e.cause)) from None
            raise

    def _put(self, array: np.ndarray):
        """``ray.put``, with a full disk a one-line error."""
        try:
            return self.ray.put(array)
        except self.ray.exceptions.OutOfDiskError:
            raise TD2048Error(DISK_FULL) from None

    def _call_all(self, method: str, *args) -> list:
        """Call a method on every worker; a worker that died is started again and called once more."""
        refs = [getattr(actor, method).remote(*args) for actor in self.actors]  # all at once, then each answer
        results = []
        for k in range(self.workers):
            while True:
                try:
                    results.append(self._get(refs[k]))
                    break
                except self.ray.exceptions.RayActorError:
                    self._replace(k)
                    refs[k] = getattr(self.actors[k], method).remote(*args)
        return results

    def close(self) -> None:
        """Stop the workers."""
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # noqa: BLE001 - gone already
                pass

    # ------------------------------------------------------------ learning

    @property
    def rng_states(self) -> np.ndarray:
        """The workers' threads' random states, ``uint64[workers * threads, 4]``, worker by worker."""
        return np.concatenate(self._call_all("rng_states"))

    def restart_pools(self) -> list[dict]:
        """The boards kept for restarts, per thread, worker by worker."""
        return [pool for pools in self._call_all("restart_pools") for pool in pools]

    def set_restart_pools(self, pools: list[dict]) -> None:
        """Take back the boards of :meth:`restart_pools`: each worker its threads' rings (saved with another
        number of workers or threads: the rings dealt out among the workers, each dealing its share to its
        threads).

        Parameters
        ----------
        pools : list of dict
            Per thread, as :meth:`restart_pools` gives them.
        """
        if not pools:
            return
        shares = [pools[k::self.workers] for k in range(self.workers)] \
            if len(pools) != self.workers * self.threads \
            else [pools[k * self.threads:(k + 1) * self.threads] for k in range(self.workers)]
        for k, share in enumerate(shares):
            self._get(self.actors[k].set_restart_pools.remote(share))

    def merge(self) -> None:
        """Sync the workers now, if they learned since the last sync (before the driver's weights are saved)."""
        if self._learned_since_sync:
            self._exchange()

    def run(self, episodes: int, alpha: float, options: LearningOptions, first_episode: int = 0,
            tc: bool = False) -> EpisodeBlock:
        """Learn from ``episodes`` episodes on the workers, syncing them every ``sync_seconds``.

        Parameters
        ----------
        episodes : int
            Episodes to play.
        alpha, options, first_episode, tc
            As :meth:`td2048.learn.Learner.run` takes them (``first_episode``: the block's first episode; each
            piece's schedule counts from its own first episode). Distillation learns in one process, not here.

        Returns
        -------
        EpisodeBlock
            Every episode's results, in the block's order.
        """
        scores = np.zeros(episodes, np.int64)
        max_codes = np.zeros(episodes, np.int64)
        moves = np.zeros(episodes, np.int64)
        restarted = np.zeros(episodes, np.uint8)
        start = time.perf_counter()
        syncs = len(self.sync_log)
        todo = [(0, episodes)]  # ranges of episodes not yet handed out (a dead worker's piece comes back here)
        rate = [float(self.threads)] * self.workers  # episodes per second per worker, measured as they play
        in_flight = [0] * self.workers  # pieces sent to each worker and not yet back (up to PIECES_AHEAD)
        pending: dict = {}  # ref -> (worker, its actor, lo, hi)
        piece_seconds = min(PIECE_SECONDS, self.sync_seconds / 4)
        sync = None  # the sync under way: its steps queue on the workers between their pieces

        def lost(k: int) -> None:
            """Worker k was started again: the old one's pieces go back to be played."""
            for other in [o for o, v in pending.items() if v[0] == k and v[1] is not self.actors[k]]:
                _, _, a, b = pending.pop(other)
                todo.insert(0, (a, b))
            in_flight[k] = 0

        while todo or pending or sync is not None:
            if sync is None and self._learned_since_sync and \
                    time.monotonic() - self._last_sync >= self.sync_seconds:
                sync = self._begin_sync()
            ahead = 1 if sync is not None and not sync.beside else PIECES_AHEAD  # a sync waits behind fewer
            while todo and min(in_flight) < ahead:
                k = in_flight.index(min(in_flight))
                lo, hi = todo.pop(0)
                left = hi - lo + sum(b - a for a, b in todo)
                size = max(1, min(hi - lo, int(rate[k] * piece_seconds),
                                  left // (2 * self.workers * PIECES_AHEAD) or 1))
                if lo + size < hi:
                    todo.insert(0, (lo + size, hi))
                piece = self.actors[k].learn.remote(size, alpha, options, first_episode + lo, tc)
                pending[piece] = (k, self.actors[k], lo, lo + size)
                in_flight[k] += 1
            waiting = list(pending) + (sync.refs if sync is not None else [])
            wait = None if sync is not None or not self._learned_since_sync else \
                max(0.0, self.sync_seconds - (time.monotonic() - self._last_sync))  # until the next sync is due
            ready, _ = self.ray.wait(waiting, num_returns=1, timeout=wait)
            for ref in ready:
                if ref not in pending:
                    continue
                k, actor, lo, hi = pending.pop(ref)
                try:
                    s, c, m, r, seconds = self._get(ref)
                except self.ray.exceptions.RayActorError:
                    if actor is self.actors[k]:  # not started again yet (for its other piece)
                        self._replace(k)
                        lost(k)
                    todo.insert(0, (lo, hi))
                    continue
                in_flight[k] -= 1
                scores[lo:hi], max_codes[lo:hi], moves[lo:hi], restarted[lo:hi] = s, c, m, r
                rate[k] = (hi - lo) / max(seconds, 1e-3)
                self._learned_since_sync = True
                self._one_table[k] = tc or self.threads == 1 or self._spec.merge_seconds is None
            if sync is not None and all(ref in ready or self._ready(ref) for ref in sync.refs):
                sync, replaced = self._advance_sync(sync)
                for k in replaced:
                    lost(k)
        done = self.sync_log[syncs:]
        info = {"workers": self.workers, "syncs": len(done),
                "sync_s": round(sum(d["seconds"] for d in done), 4),
                "sync_bytes": sum(d["bytes"] for d in done), "sync_changed": sum(sum(d["changed"]) for d in done),
                "sync_merged": sum(d["merged"] for d in done),
                "syncs_beside": sum(d["beside"] for d in done),  # run on the workers' sync threads, beside learning
                # seconds of the syncs' three steps: listing the changes, merging them, writing them in
                "sync_steps_s": [round(sum(d["phases"][i] for d in done), 4) for i in range(3)]}
        return EpisodeBlock(scores, max_codes, moves, time.perf_counter() - start, restarted, info)

    def _ready(self, ref) -> bool:
        ready, _ = self.ray.wait([ref], num_returns=1, timeout=0)
        return bool(ready)

    def _exchange(self) -> None:
        """Sync now, every worker idle: each worker's changes merged by index range on the workers, then
        written everywhere (a sync that a lost worker cut short is made again)."""
        while True:
            sync = self._begin_sync()
            while sync is not None:
                self.ray.wait(sync.refs, num_returns=len(sync.refs))
                sync, _ = self._advance_sync(sync)
            if not self._learned_since_sync:
                return

    def _begin_sync(self) -> _Sync:
        """Step 1 of a sync: every worker lists its changes.

        Once every worker learns on its one table (TC, or TD whose threads have no copies to merge), the
        sync's steps run on a thread of each worker's own, beside the piece it is playing, as one more
        thread of a shared table would: the worker never waits for a sync. (TD's flags of a piece are set
        as it ends: what it changed after the listing goes to the next sync, as any change after a
        listing does.) Otherwise each step waits behind the pieces the worker was given."""
        self._learned_since_sync = False  # what the workers learn from now on goes to the next sync
        actors = list(self.actors)
        sync = _Sync(actors, [], time.perf_counter(), beside=all(self._one_table))
        sync.refs = [self._call(sync, actor, "changes", self._bounds) for actor in actors]
        return sync

    @staticmethod
    def _call(sync: _Sync, actor, method: str, *args):
        """Call one of a sync's steps on a worker: on its sync thread, or behind its pieces."""
        call = getattr(actor, method)
        return (call.options(concurrency_group=SYNC_GROUP) if sync.beside else call).remote(*args)

    def _advance_sync(self, sync: _Sync) -> tuple[_Sync | None, list[int]]:
        """Take a sync one step further, once its step's calls have answered.

        Returns the sync (None once it ended) and the workers started again (their old pieces are lost).
        A worker lost in the middle ends the sync early: it is started again from the driver's weights, and
        the others list every weight they changed at the next sync."""
        ray = self.ray
        try:
            if sync.step == 0:  # listed: worker j merges range j of every worker's list
                listed = [self._get(ref) for ref in sync.refs]
                sync.changed = [count for _, count in listed]
                sync.merged = [self._call(sync, sync.actors[j], "merge", [listed[k][0][j] for k in range(self.workers)])
                               for j in range(self.workers)]
                sync.refs, sync.step, sync.times = sync.merged, 1, [time.perf_counter()]
                return sync, []
            if sync.step == 1:  # merged: the workers write the merged ranges in, and so does the driver
                applied = [self._call(sync, actor, "apply", sync.merged) for actor in sync.actors]
                sync.parts = [self._get(ref) for ref in sync.merged]
                sync.times.append(time.perf_counter())
                for indices, values, acc in sync.parts:
                    if len(acc) and self.network.accumulators is None:
                        self.network.start_accumulators(self._spec.tc_start_rate)
                    acc_now = self.network.accumulators if self.network.accumulators is not None else NO_ACCUMULATORS
                    apply_changes(indices, values, acc, self.network.weights, NO_ACCUMULATORS, acc_now,
                                  NO_ACCUMULATORS)
                self._weights_ref = None  # a worker started from now on starts from these weights
                sync.refs, sync.step = applied, 2
                return sync, []
            replaced = []
            for k, ref in enumerate(sync.refs):  # written
                try:
                    self._get(ref)
                except ray.exceptions.RayActorError:  # started again from the driver's weights, which have it all
                    if sync.actors[k] is self.actors[k]:
                        self._replace(k)
                        replaced.append(k)
            self._log_sync(sync)
            return None, replaced
        except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError, ray.exceptions.RayTaskError) as error:
            if sync.step == 2:
                raise
            dead = [k for k in self._dead_workers() if sync.actors[k] is self.actors[k]]
            gone = [k for k in range(self.workers) if sync.actors[k] is not self.actors[k]]
            if not dead and not gone:
                raise TD2048Error(f"a sync of the Ray workers failed: {str(error).splitlines()[0]}") from None
            for k in dead:
                self._replace(k)
            for k in range(self.workers):
                if k not in dead and k not in gone:
                    self.actors[k].relist.remote()
            self._learned_since_sync = True  # the living workers' changes are still to be synced
            return None, dead

    def _log_sync(self, sync: _Sync) -> None:
        merged_count = sum(len(p[0]) for p in sync.parts)
        per_change = 8 + (8 if any(len(p[2]) for p in sync.parts) else 0)  # index and weight, TC's two accumulators
        # what crossed processes: each worker's changes of the others' ranges to them, each merged range to
        # the other workers and to the driver (the bytes of the ranges a worker keeps stay in its own store)
        moved = sum(sync.changed) * (self.workers - 1) // self.workers + merged_count * self.workers
        end = time.perf_counter()
        listed_at, merged_at = sync.times
        self.sync_log.append({"seconds": end - sync.start, "changed": sync.changed, "merged": merged_count,
                              "bytes": moved * per_change, "beside": sync.beside,
                              "phases": (listed_at - sync.start, merged_at - listed_at, end - merged_at)})
        self._failures = 0
        self._last_sync = time.monotonic()

    def _dead_workers(self) -> list[int]:
        """The workers that do not answer."""
        dead = []
        for k, actor in enumerate(self.actors):
            try:
                self.ray.get(actor.ready.remote(), timeout=60)
            except self.ray.exceptions.RayError:
                dead.append(k)
            except Exception:  # noqa: BLE001 - a timeout: as good as dead
                dead.append(k)
        return dead


def ray_learner(network: Network, settings, seed: int | None, states: np.ndarray | None) -> RayLearner:
    """A run's learner on ``settings.workers`` Ray workers (a :data:`td2048.run.LearnerFactory`).

    Parameters
    ----------
    network : Network
        The run's network.
    settings : TrainSettings
        The run's settings (workers, threads, sync and merge intervals, memory limit).
    seed : int or None
        Seed of the workers' random states, when ``states`` is None.
    states : numpy.ndarray or None
        ``uint64[workers * threads, 4]``: random states to go on from.

    Returns
    -------
    RayLearner
        The learner, its workers started.
    """
    return RayLearner(network, settings.workers, settings.threads, seed=seed, rng_states=states,
                      sync_seconds=settings.sync_every, merge_seconds=settings.merge_every,
                      memory_limit=settings.memory_limit, tc_start_rate=settings.tc_start_rate)


__all__ = ["RayLearner", "ray_learner"]
