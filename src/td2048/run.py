"""Training runs a person can live with: a run directory, snapshots, resume after any crash, evaluation.

A run directory holds the files of :mod:`td2048.io.rundir`: the settings, written first, the log
(a block a line), a snapshot every --snapshot-every (5 minutes of training, or a number of
episodes; written atomically in the background), the final model and the curves' picture.

The model holds everything the snapshot holds (the weights, TC's accumulators, and the ``state`` a
resume needs: episodes, random states, kept boards), so once it is written the snapshot is removed:
a finished (or Ctrl-C-stopped) run keeps one copy of its weights, ``model.td2048``, and resumes from it.

A run killed at any moment (even with SIGKILL, even while writing a snapshot or between writing
the model and removing the snapshot) resumes from the newest whole file of the two: the log is cut
back to that file's episode count, so after a resume it holds every block exactly once.

On a board small enough to solve (``td2048 solve``), a run given a solution (``settings.exact``) values its
network's greedy policy exactly every ``settings.exact_every`` blocks and after its last
(:func:`exact_figures`): the block's log line gets an ``"exact"`` object, and the block table a line.

A run with ``settings.pretrain`` first trains the smaller network in its own run directory, ``DIR/pretrain``
(:meth:`TrainingRun.pretraining`: resumed like any run); the run's first block starts its network from that
run's model (:meth:`td2048.network.Network.start_from`), again after a resume that finds no snapshot.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import fields
from pathlib import Path

import numpy as np

from td2048.errors import TD2048Error, TrainingDiverged
from td2048.io.atomic import ensure_writable_dir, write_text_atomic
from td2048.io.model import check_same_network, load_model, read_header, save_model
from td2048.io.rundir import LOG, MODEL, PLOT, PRETRAIN, SETTINGS, SNAPSHOT, STARTS, read_log
from td2048.learn import Learner
from td2048.machine import available_memory
from td2048.network import Network
from td2048.schedules import snapshot_interval
from td2048.settings import TrainSettings
from td2048.stats import BlockStats
from td2048.training import open_solution, train_blocks
from td2048.version import __version__

# settings that define what is being trained: a resumed run keeps them
FIXED_ON_RESUME = ("network", "isomorphisms", "seed", "init", "game", "clamp", "cells", "method", "stages",
                   "optimistic", "board", "pretrain", "weight_bits")
FINITE_CHECK_SECONDS = 60.0  # the weights are checked for a divergence at most this often between blocks


def _rng_to_json(states: np.ndarray) -> list[list[str]]:
    return [[f"{int(v):016x}" for v in row] for row in states]


def _rng_from_json(rows) -> np.ndarray:
    return np.array([[int(v, 16) for v in row] for row in rows], dtype=np.uint64)


def resume_source(directory: str | Path) -> Path | None:
    """The file a run resumes from: its snapshot or its model, whichever holds more episodes.

    A running run has a snapshot and, when it was resumed after it finished, an older model; a finished
    (or Ctrl-C-stopped) run has its model alone, which holds everything a snapshot holds; a run stopped
    between writing its model and removing its snapshot has both, the model the newer. On a tie (both
    written by one finish, as td2048 did before a finished run kept its model alone) the snapshot is
    taken. Only the files' headers are read.

    Parameters
    ----------
    directory : str or pathlib.Path
        A run directory.

    Returns
    -------
    pathlib.Path or None
        ``snapshot.td2048``, ``model.td2048`` or, when the model was compressed (``xz model.td2048``),
        ``model.td2048.xz``; None when there is none of them (a run stopped before its first snapshot).

    Raises
    ------
    TD2048Error
        When the snapshot cannot be read, or there is no snapshot and the model cannot be read or holds
        no training state (a model for playing only, put in its place).
    """
    directory = Path(directory)
    snapshot = directory / SNAPSHOT
    model = next((m for m in (directory / MODEL, directory / f"{MODEL}.xz") if m.exists()), None)
    best = (_episodes(read_header(snapshot)), snapshot) if snapshot.exists() else None
    if model is None:
        return None if best is None else best[1]
    try:
        header = read_header(model)
        if "state" not in header:
            raise TD2048Error(f"{model}: holds no training state to resume from (a model for playing only?)")
    except TD2048Error:
        if best is None:
            raise
        return best[1]  # a snapshot is there: a damaged or replaced model is not needed
    if best is None or _episodes(header) > best[0]:
        return model
    return best[1]


def _episodes(header: dict) -> int:
    return int((header.get("state") or {}).get("episodes", 0))


# makes a run's learner: (network, settings, seed or None, random states or None) -> a Learner, or an object that
# stands for one (td2048.distributed.ray_train.RayLearner)
LearnerFactory = Callable[[Network, TrainSettings, "int | None", "np.ndarray | None"], Learner]


def local_learner(network: Network, settings: TrainSettings, seed: int | None, states: np.ndarray | None) -> Learner:
    """A run's learner on this machine: ``settings.threads`` threads, from ``seed`` or from ``states``.

    Parameters
    ----------
    network : Network
        The run's network.
    settings : TrainSettings
        The run's settings (threads, merge interval).
    seed : int or None
        Seed of the threads' random states, when ``states`` is None.
    states : numpy.ndarray or None
        ``uint64[threads, 4]``: the threads' random states to go on from.

    Returns
    -------
    Learner
        The learner.
    """
    return Learner(network, seed, settings.threads, rng_states=states, merge_seconds=settings.merge_every,
                   memory_limit=settings.memory_limit, tc_records=settings.tc_records)


# what a background snapshot leaves free beside its copy of the weights
SNAPSHOT_HEADROOM = 1 << 30


def snapshot_copy_fits(network: Network, free: int | None) -> bool:
    """Whether a background snapshot's copy of the weights (and TC's accumulators) fits in ``free`` bytes.

    The copy lets training go on while the file is written; on a network that takes most of the memory it
    would take the rest and more (a network of 15 GiB with its accumulators on a 24 GiB machine), so the
    snapshot is written from the weights themselves instead, training paused.

    Parameters
    ----------
    network : Network
        The network being trained.
    free : int or None
        The memory free now in bytes (:func:`td2048.machine.available_memory`); None where it cannot be read,
        and then the copy is made.

    Returns
    -------
    bool
        True when the copy and :data:`SNAPSHOT_HEADROOM` fit in ``free``.
    """
    copy = network.weights.nbytes + (0 if network.accumulators is None else network.accumulators.nbytes)
    return free is None or copy + SNAPSHOT_HEADROOM <= free


def exact_figures(network: Network, solution, threads: int = 1, memory_limit: int | None = None) -> dict:
    """A network's greedy policy valued exactly on a solved board, as a training log's ``"exact"`` object.

    The policy is :class:`td2048.play.Agent`'s at depth 1 (:func:`td2048.solve.agent_policy`), valued by
    :func:`td2048.solve.exact_policy_value` over every position it can meet (up to the board's symmetries when
    the network reads all of them: :attr:`~td2048.spec.NetworkSpec.symmetric`).

    Parameters
    ----------
    network : Network
        The network, of the solution's board and game (its weights are only read).
    solution : td2048.solve.Solution
        The board's solution, with its values (:func:`td2048.solve.load_solution`).
    threads : int
        Threads that choose the policy's moves.
    memory_limit : int or None
        The most bytes of weights; None: the network's own.

    Returns
    -------
    dict
        ``expected_score`` (the policy's), ``optimal_expected_score`` (perfect play's), ``loss`` (their
        difference, the score lost a game), ``loss_share`` (the loss as a share of the optimum),
        ``optimal_move_share``, ``moves`` (a game's expected moves), ``positions`` (the boards the policy
        meets, up to symmetry when ``symmetric``), ``symmetric``, ``reach`` (tile value, as a string -> the
        probability of ever holding it) and ``seconds`` (those the valuation took).
    """
    from td2048.play import Agent
    from td2048.solve import agent_policy, exact_policy_value

    started = time.perf_counter()
    agent = Agent(network, None, 0, threads, memory_limit=max(memory_limit or 0, network.spec.nbytes))
    value = exact_policy_value(solution, agent_policy(agent), symmetric=network.spec.symmetric)
    seconds = time.perf_counter() - started
    optimum = value.optimal_expected_score
    return {"expected_score": value.expected_score, "optimal_expected_score": optimum, "loss": value.loss,
            "loss_share": value.loss / optimum if optimum else 0.0, "optimal_move_share": value.optimal_move_share,
            "moves": value.moves, "positions": value.positions, "symmetric": value.symmetric,
            "reach": {str(t): p for t, p in value.reach.items()}, "seconds": round(seconds, 6)}


def learner_threads(settings: TrainSettings) -> int:
    """Random states a run's learner has: its threads, times its Ray workers (if any)."""
    return settings.threads * max(1, settings.workers)


class TrainingRun:
    """One run directory being trained: create or resume, then iterate :meth:`blocks`."""

    def __init__(self, directory: Path, settings: TrainSettings, network: Network, learner: Learner, done: int,
                 solution=None, teacher=None, endgame=None):
        """Use :meth:`create` or :meth:`resume`."""
        self.directory = directory
        self.solution = solution  # settings.exact's, opened once
        self.teacher = teacher  # settings.teacher's, opened once
        self.endgame = endgame  # settings.endgame's, opened once
        self.settings = settings
        self.network = network
        self.learner = learner
        self.done = done
        self.last_snapshot = done
        self.last_snapshot_time = time.monotonic()
        self.last_check_time = time.monotonic()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="td2048-snapshot")
        self._pending: Future | None = None
        self._pending_episodes = 0
        self.plot_error: str | None = None
        thrown = read_log(directory / STARTS)  # --start-over-below's starts thrown away
        self.start = 1 + sum(1 for b in thrown if b.get("start_over"))
        tile = str(settings.start_over_without)  # whether this start has built it yet (--start-over-without)
        self.built = any(b.get("reach", {}).get(tile, 0.0) > 0 for b in read_log(directory / LOG))
        self.seconds = sum(b.get("seconds", 0.0) for b in thrown + read_log(directory / LOG))  # training time

    # ------------------------------------------------------------ opening

    @classmethod
    def create(cls, directory: str | Path, settings: TrainSettings,
               learner_factory: LearnerFactory = local_learner) -> TrainingRun:
        settings.validate()
        board = None
        if (settings.exact or settings.teacher or settings.endgame) is not None and settings.init is not None:
            board = read_header(settings.init).get("network", {}).get("board", "4x4")  # the board is the model's
        solution = open_solution(settings, board)  # checked before anything is written
        teacher = open_solution(settings, board, "teacher")
        endgame = open_solution(settings, board, "endgame")
        directory = ensure_writable_dir(directory)
        if (directory / LOG).exists() or (directory / SNAPSHOT).exists():
            raise TD2048Error(f"{directory} already holds a run; resume it with --resume {directory} "
                              "or choose another --out")
        if settings.seed is None:
            settings.seed = int(np.random.SeedSequence().entropy % (2**63))
        network = cls._initial_network(settings)
        write_text_atomic(directory / SETTINGS, json.dumps(
            {**settings.to_dict(), "network_spec": network.spec.to_dict(), "td2048": __version__},
            indent=2) + "\n")
        (directory / LOG).write_text("")
        learner = learner_factory(network, settings, settings.seed, None)
        return cls(directory, settings, network, learner, 0, solution, teacher, endgame)

    @staticmethod
    def _initial_network(settings: TrainSettings) -> Network:
        if settings.init is None:
            return settings.new_network()
        network, header = load_model(settings.init, game=settings.game, memory_limit=settings.memory_limit,
                                     method=settings.method)
        if settings.network is not None:
            check_same_network(settings.init, header, settings.spec())
        settings.network = network.spec.name
        settings.board = network.spec.board.name
        settings.isomorphisms = network.spec.isomorphisms
        settings.clamp = network.spec.clamp
        return network.with_weight_bits(settings.weight_bits)

    @classmethod
    def resume(cls, directory: str | Path, overrides: dict | None = None,
               learner_factory: LearnerFactory = local_learner) -> TrainingRun:
        directory = Path(directory)
        try:
            saved = json.loads((directory / SETTINGS).read_text())
        except FileNotFoundError:
            raise TD2048Error(f"{directory}: no training run to resume (no {SETTINGS})") from None
        except (OSError, json.JSONDecodeError) as e:
            raise TD2048Error(f"{directory / SETTINGS}: unreadable ({e})") from None
        known = {f.name for f in fields(TrainSettings)}
        saved.setdefault("tc_start_rate", 1.0)  # a run made before the rate could be set started its TC at 1
        settings = TrainSettings(**{k: v for k, v in saved.items() if k in known})
        for key, value in (overrides or {}).items():
            if key in FIXED_ON_RESUME and value != getattr(settings, key):
                raise TD2048Error(f"--{key.replace('_', '-')} cannot change when resuming "
                                  f"(the run has {getattr(settings, key)!r})")
            setattr(settings, key, value)
        settings.validate()
        solution = open_solution(settings)  # checked before anything is written
        teacher = open_solution(settings, option="teacher")
        endgame = open_solution(settings, option="endgame")
        ensure_writable_dir(directory)
        for stale in directory.glob(".*.tmp"):  # a save that a crash cut short
            stale.unlink(missing_ok=True)

        source = resume_source(directory)
        if source is not None:
            network, header = load_model(source, game=settings.game, memory_limit=settings.memory_limit,
                                         method=settings.method)
            check_same_network(source, header, settings.spec())
            network = network.with_weight_bits(settings.weight_bits)  # a model holds float32 weights
            state = header.get("state") or {}
            done = int(state.get("episodes", 0))
            states = _rng_from_json(state["rng_states"]) if "rng_states" in state else None
            pools = state.get("restart_pools", [])
            tc_start = settings.tc_start()
            if tc_start is not None and done > tc_start and network.accumulators is None:
                raise TD2048Error(f"{source}: the run is {done - tc_start} episodes into its TC phase, but the "
                                  f"{source.name} holds no TC accumulators (was it replaced by a playing model?)")
            if source.name != SNAPSHOT:  # a snapshot older than the model (a stop between the two): of no use
                (directory / SNAPSHOT).unlink(missing_ok=True)
        else:  # killed before the first snapshot: start again
            network, done, states, pools = cls._initial_network(settings), 0, None, []
        if states is None and done == 0:  # no snapshot yet: start again as created, with the run's seed
            learner = learner_factory(network, settings, settings.seed, None)
        elif states is None or len(states) != learner_threads(settings):
            seed_seq = np.random.SeedSequence([settings.seed, done])
            learner = learner_factory(network, settings, int(seed_seq.generate_state(1, np.uint64)[0]), None)
        else:
            learner = learner_factory(network, settings, None, states)
        learner.set_restart_pools(pools)  # each thread's ring of kept boards (with other --threads: dealt anew)
        kept = [b for b in read_log(directory / LOG) if b.get("episodes", 0) <= done]
        write_text_atomic(directory / LOG, "".join(json.dumps(b) + "\n" for b in kept))
        write_text_atomic(directory / SETTINGS, json.dumps({**saved, **settings.to_dict()}, indent=2) + "\n")
        return cls(directory, settings, network, learner, done, solution, teacher, endgame)

    def pretraining(self, learner_factory: LearnerFactory = local_learner) -> TrainingRun | None:
        """The pretraining still to train (``settings.pretrain``), a run of its own in ``DIR/pretrain``.

        Train its :meth:`blocks` and :meth:`finish` it before this run's blocks, which start from its model.

        Parameters
        ----------
        learner_factory : callable
            Makes its learner (as :meth:`create`'s).

        Returns
        -------
        TrainingRun or None
            The pretraining run, created or resumed where it stopped; None when the run has no pretraining,
            or it has ended, or this run is past its start.
        """
        if self.settings.pretrain is None or self.done > 0 or self._pretraining_ended():
            return None
        directory = self.directory / PRETRAIN
        if (directory / SETTINGS).exists():
            run = TrainingRun.resume(directory, learner_factory=learner_factory)
        else:
            run = TrainingRun.create(directory, self.settings.pretrain_settings(), learner_factory)
        if run.done < run.settings.episodes:
            return run
        run._writer.shutdown()
        return None

    def _pretraining_ended(self) -> bool:
        """Whether the pretraining's model holds all its episodes (read from the model's header)."""
        model = self.directory / PRETRAIN / MODEL
        try:
            return model.exists() and _episodes(read_header(model)) >= self.settings.pretrain_plan()[1]
        except TD2048Error:
            return False

    def _start_from_pretrained(self) -> None:
        """Start the network from the pretraining's model (before the first block)."""
        if not self._pretraining_ended():
            raise TD2048Error(f"{self.directory / PRETRAIN}: the pretraining has not ended (train "
                              "TrainingRun.pretraining() first, or resume the run)")
        source, _ = load_model(self.directory / PRETRAIN / MODEL, game=self.settings.game,
                               memory_limit=self.settings.memory_limit, method=self.settings.method)
        self.network.start_from(source)
        self.learner.sync()

    # ------------------------------------------------------------ training

    def blocks(self, stop: Callable[[], bool] = lambda: False) -> Iterator[BlockStats]:
        """Train block by block, logging each and snapshotting on schedule; ends early when ``stop()``.

        With a solution (``settings.exact``), the blocks that end a stretch of ``exact_every`` x ``block``
        episodes, the last block and a block after which ``stop()`` holds carry :meth:`exact`'s figures
        under ``extra["exact"]`` (in the log line and the table); the valuation's time is not the block's.
        So the run ends on a valued block: a stop that comes after a block was found not due (while its
        line is written or its table shown) takes effect after the next block.
        """
        if self.done == 0 and self.settings.pretrain is not None:
            self._start_from_pretrained()
        try:
            with open(self.directory / LOG, "a", encoding="utf-8") as log:
                for stats in train_blocks(self.settings, self.learner, self.done, self.teacher, self.endgame,
                                          self.start, self.seconds, self.built):
                    before, self.done = self.done, stats.episodes
                    self.seconds += stats.seconds
                    valued = not stats.extra.get("start_over") and (
                        self._exact_due(before, stop) or (self.solution is not None and "time_limit" in stats.extra))
                    if valued:
                        stats.extra["exact"] = self.exact()
                    log.write(json.dumps(stats.to_json()) + "\n")
                    log.flush()
                    if stats.extra.get("start_over"):
                        self._start_over(log)
                    yield stats
                    if time.monotonic() - self.last_check_time >= FINITE_CHECK_SECONDS:
                        self.check_finite()  # (snapshot() and finish() check before they write)
                    if stop() and (valued or self.solution is None):  # else one more block, valued, then stop
                        return
                    if self._snapshot_due():
                        self.snapshot(background=True)
        except OSError as e:
            raise TD2048Error(f"cannot write {self.directory / LOG}: {e.strerror or e}") from None

    def _start_over(self, log) -> None:
        """The learner started over (``--start-over-below``): the thrown-away start's blocks move from the log
        to :data:`STARTS`, its snapshot goes, and the run counts from episode 0 again."""
        self.wait()
        log.flush()
        thrown = read_log(self.directory / LOG)
        earlier = read_log(self.directory / STARTS)
        write_text_atomic(self.directory / STARTS, "".join(json.dumps(b) + "\n" for b in earlier + thrown))
        log.seek(0)
        log.truncate()
        (self.directory / SNAPSHOT).unlink(missing_ok=True)
        self.done = self.last_snapshot = 0
        self.last_snapshot_time = time.monotonic()
        self.start += 1

    def _exact_due(self, before: int, stop: Callable[[], bool]) -> bool:
        """Whether the block from episode ``before`` to :attr:`done` is valued exactly."""
        if self.solution is None:
            return False
        every = self.settings.block * self.settings.exact_every
        return (self.done // every > before // every or self.done >= self.settings.episodes or self.time_is_up()
                or stop())

    def time_is_up(self) -> bool:
        """Whether the run has trained its ``time_limit`` (:attr:`seconds`, the blocks' training time)."""
        return self.settings.time_left(self.seconds) == 0.0

    def exact(self) -> dict:
        """The network's greedy policy valued exactly against the run's solution, now.

        What the threads (or Ray workers) learned is merged into the network's weights first.

        Returns
        -------
        dict
            :func:`exact_figures`'s object.

        Raises
        ------
        TD2048Error
            When the run has no solution (``settings.exact`` is None).
        """
        if self.solution is None:
            raise TD2048Error("this run has no solution to value its network against (settings.exact)")
        self.learner.merge()
        return exact_figures(self.network, self.solution, self.settings.threads, self.settings.memory_limit)

    def check_finite(self) -> None:
        """Check that every weight is still a finite number (one pass over the weights).

        A step too large for the network (say ``--tc-alpha 2``) makes the weights grow without bound and then
        NaN, and a network of NaN plays no move: its games end at once with nothing scored. The run checks
        after a block at most every minute and before every snapshot and the model, so that no file is
        written with such weights.

        Raises
        ------
        TrainingDiverged
            When a weight is infinite or NaN; its message says what was kept and what to change.
        """
        self.last_check_time = time.monotonic()
        with np.errstate(invalid="ignore", over="ignore"):  # a NaN or an infinity makes the sum one (and so
            if np.isfinite(self.network.weights.sum()):     # would weights past 1e29, diverging as surely)
                return
        s = self.settings
        tc_start = s.tc_start()
        option, step = (("--tc-alpha", s.tc_alpha) if tc_start is not None and self.done > tc_start
                        else ("--alpha", s.alpha))
        kept = (f"{self.directory} keeps the weights saved at episode {self.last_snapshot:,}"
                if self.last_snapshot > 0 else "no weights of the run were saved")
        raise TrainingDiverged(
            f"the weights diverged (a weight is no longer a finite number) by episode {self.done:,}: the step "
            f"is too large for this network ({option} {step:g}); {kept}; train again with a smaller step, "
            f"e.g. td2048 train --resume {shlex.quote(str(self.directory))} {option} {step / 2:g}")

    def _snapshot_due(self) -> bool:
        episodes, seconds = snapshot_interval(self.settings.snapshot_every)
        if episodes is not None:
            return self.done - self.last_snapshot >= episodes
        return time.monotonic() - self.last_snapshot_time >= seconds

    def _state(self) -> dict:
        state = {"episodes": self.done, "rng_states": _rng_to_json(self.learner.rng_states),
                 "threads": self.settings.threads}
        if self.settings.workers:
            state["workers"] = self.settings.workers
        if self.settings.restarts > 0:  # the boards kept for restarts, so that a resumed run goes on as one
            state["restart_pools"] = self.learner.restart_pools()
        return state

    def _training_info(self) -> dict:
        s = self.settings
        return {"episodes": self.done, "alpha": s.alpha, "alpha_schedule": s.alpha_schedule, "update": s.update,
                "lambda": s.lam, "nstep": s.nstep, "explore": s.explore, "seed": s.seed, "threads": s.threads,
                "init": s.init, "optimistic": s.optimistic, "stages": s.stages, "promote": s.promote,
                "tc_from": s.tc_from, "tc_alpha": s.tc_alpha, "tc_start_rate": s.tc_start_rate, "restarts": s.restarts,
                "restart_tile": s.restart_tile, "run": str(self.directory),
                **({"workers": s.workers, "sync_every": s.sync_every} if s.workers else {})}

    def snapshot(self, background: bool = False) -> None:
        """Save weights and state; in the background the weights are copied first and training goes on.

        A copy that does not fit in the memory free now (:func:`snapshot_copy_fits`) is not made: the snapshot is
        then written from the weights themselves, and training waits for it.
        """
        self.wait()
        self.learner.merge()
        self.check_finite()
        net = self.network
        background = background and snapshot_copy_fits(net, available_memory())
        network = net.copy() if background else net
        state, info = self._state(), self._training_info()
        self.last_snapshot = self.done
        self.last_snapshot_time = time.monotonic()

        def write():
            save_model(self.directory / SNAPSHOT, network, training=info, state=state)
            self.draw_plot()

        if background:
            self._pending = self._writer.submit(write)
            self._pending_episodes = self.done
        else:
            write()

    def wait(self) -> None:
        """Wait for a background snapshot. One that could not be written (a full disk, say) is a warning
        on stderr, not the end of the run: the last snapshot written stays whole, training goes on, and
        the next snapshot tries again. (The model that :meth:`finish` writes raises.)"""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            try:
                pending.result()
            except TD2048Error as e:
                sys.stderr.write(f"td2048 train: warning: the snapshot at episode {self._pending_episodes:,} was "
                                 f"not written ({e}); training goes on, and the next snapshot tries again\n")

    def finish(self) -> Path:
        """Save the model, with everything a resume needs, and remove the snapshot it replaces.

        The model holds what a snapshot holds (weights, TC's accumulators, the ``state``: episodes,
        random states, kept boards), so a finished run keeps one copy of its weights, and
        :meth:`resume` goes on from the model. The model is written (atomically) before the snapshot
        is removed: a run stopped between the two resumes from the model, the newer of them.

        Returns
        -------
        pathlib.Path
            The model's path, ``DIR/model.td2048``.
        """
        self.wait()  # a background snapshot still being written would land after its removal
        self.learner.merge()
        self.check_finite()
        model = self.directory / MODEL
        save_model(model, self.network, training=self._training_info(), state=self._state())
        self.last_snapshot = self.done
        self.last_snapshot_time = time.monotonic()
        try:
            (self.directory / SNAPSHOT).unlink(missing_ok=True)
        except OSError as e:  # harmless: a resume takes the model, the newer file, and removes the snapshot
            sys.stderr.write(f"td2048 train: warning: cannot remove {self.directory / SNAPSHOT} "
                             f"({e.strerror or e}); {MODEL} holds everything it held\n")
        self.draw_plot()
        self._writer.shutdown()
        return model

    def draw_plot(self) -> None:
        try:
            from td2048.plot import plot_runs

            plot_runs([self.directory], self.directory / PLOT)
        except Exception as e:  # a plot must never stop training
            if self.plot_error is None:
                self.plot_error = str(e)
                sys.stderr.write(f"td2048 train: warning: cannot draw {PLOT}: {e}\n")


__all__ = ["FIXED_ON_RESUME", "LOG", "MODEL", "PLOT", "SETTINGS", "SNAPSHOT", "LearnerFactory", "TrainingRun",
           "exact_figures", "learner_threads", "local_learner", "read_log", "resume_source"]
