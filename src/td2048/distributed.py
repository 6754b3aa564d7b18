"""Evaluation in shards: the same games on one machine or on a Ray cluster.

``td2048 eval --shard-size K`` and ``td2048 eval --ray [ADDRESS]`` cut the games into shards of
K games (the last one shorter). Each shard is played by an agent of its own, on one thread, with
a fresh transposition table and its own seed, derived from the run's seed and the shard's
number alone::

    seed S --SeedSequence(S, spawn_key=(i,))--> shard i's random state   (= SeedSequence(S).spawn(n)[i])

so a shard's games do not depend on who plays it, when, or next to what: the shards' games,
put back in game order, are the same whatever the number of threads, workers or nodes, and
the statistics block built from them (:meth:`BlockStats.from_block` over all the games'
scores, largest tiles and moves) is the same number for number. Only the seconds differ.

On Ray (:func:`play_on_ray`) each shard is one task. The weights go into the object store once
(``ray.put``) and reach each node once; the workers of a node read them in place, from shared
memory, and build the :class:`Network` around them (a task's arguments say the network, the
game, the cell width and the method; kernels load from the node's kernel cache, which
``TD2048_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` name on the workers when set on the driver). A
worker that dies in the middle of a shard (killed, out of memory, its node lost) loses only
that shard's task, which Ray runs again (``max_retries``): results are collected per shard, so
no game is counted twice or lost.

Ray is an optional dependency (``pip install 'td2048[ray]'``), imported only here and only when
used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from td2048.config import DEFAULT_MEMORY_LIMIT, DEFAULT_SHARD_SIZE
from td2048.errors import TD2048Error
from td2048.network import Network, NetworkSpec
from td2048.settings import Search
from td2048.stats import BlockStats

if TYPE_CHECKING:
    from td2048.play import Agent

SHARD_RETRIES = 3  # times Ray runs a shard again after its worker died
RAY_MISSING = "--ray needs Ray, which is not installed: pip install 'td2048[ray]'"
# environment variables that follow the driver to the workers (kernel caches; test-only fault injection)
FORWARDED_ENV = ("TD2048_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "TD2048_TEST_KILL_SHARD")


@dataclass(frozen=True)
class Shard:
    """Games ``start .. start + games - 1`` of a run, played from the run's seed and ``index``."""

    index: int
    start: int
    games: int


def plan_shards(games: int, shard_size: int) -> list[Shard]:
    """``games`` games cut into shards of ``shard_size`` (the last one holds the rest)."""
    if games < 1 or shard_size < 1:
        raise TD2048Error(f"games and the shard size must be at least 1, not {games} and {shard_size}")
    return [Shard(i, start, min(shard_size, games - start)) for i, start in enumerate(range(0, games, shard_size))]


def shard_seed(seed: int, index: int) -> np.random.SeedSequence:
    """Shard ``index``'s seed: the ``index``-th child of ``SeedSequence(seed)``, whatever the number of shards."""
    return np.random.SeedSequence(seed, spawn_key=(index,))


def fresh_seed() -> int:
    """A seed from fresh entropy, for a run given none (printed with its results, so it can be played again)."""
    return int(np.random.SeedSequence().entropy)


@dataclass
class ShardResult:
    """One shard's games, in order: their scores, largest tile codes and moves; its search counters
    (nodes, leaves, table probes, table hits); its record lines when asked for; where it ran."""

    index: int
    scores: np.ndarray
    max_codes: np.ndarray
    moves: np.ndarray
    seconds: float
    counters: np.ndarray
    records: list[str] | None = None
    node: str = ""
    pid: int = 0


@dataclass
class ShardedRun:
    """The merged result of every shard: the statistics block of all the games, the search
    counters summed, the records in game order (None unless asked for), shards per node."""

    stats: BlockStats
    search_counts: dict[str, int]
    records: list[str] | None
    seed: int
    shard_size: int
    shards: int
    nodes: dict[str, int] = field(default_factory=dict)


def play_shard(network: Network, search: Search, seed: int, shard: Shard, names: tuple[str, str] | None = None,
               memory_limit: int = DEFAULT_MEMORY_LIMIT) -> ShardResult:
    """Play one shard's games on this thread; ``names`` (player, env): also write each game's record line
    (see :mod:`td2048.io.records`: the same games as without, at depth 1)."""
    from td2048.play import Agent  # here: reading a sweep file needs no compiled code

    agent = Agent(network, search, shard_seed(seed, shard.index), 1, memory_limit)
    scores, max_codes, moves = (np.zeros(shard.games, np.int64) for _ in range(3))
    records = None
    started = time.perf_counter()
    if names is None:
        agent.play_into(scores, max_codes, moves)
    else:
        records = _record_shard(agent, names, scores, max_codes, moves)
    seconds = time.perf_counter() - started
    return ShardResult(shard.index, scores, max_codes, moves, seconds, agent.counters.sum(axis=0)[:4].copy(),
                       records, pid=os.getpid())


def _record_shard(agent: Agent, names: tuple[str, str], scores, max_codes, moves) -> list[str]:
    """The shard's games with their record lines (kept, not written to a file)."""
    from td2048.io.records import record_lines

    return [line for line, _ in record_lines(agent, names, scores, max_codes, moves)]


def merge_shards(results: Iterable[ShardResult], games: int, seconds: float, game: str = "2048",
                 ) -> tuple[BlockStats, dict[str, int], list[str] | None]:
    """One statistics block (and the search counters, and the records) of every shard's games, in game order."""
    results = sorted(results, key=lambda r: r.index)
    if [r.index for r in results] != list(range(len(results))) or sum(len(r.scores) for r in results) != games:
        raise TD2048Error(f"shards missing or doubled: {[r.index for r in results]} for {games} games")
    stats = BlockStats.from_block(games, *(np.concatenate([getattr(r, a) for r in results])
                                           for a in ("scores", "max_codes", "moves")), seconds, game=game)
    total = np.sum([r.counters for r in results], axis=0)
    counts = dict(zip(("nodes", "leaves", "tt_probes", "tt_hits"), map(int, total), strict=True))
    records = None if results[0].records is None else [line for r in results for line in r.records]
    return stats, counts, records


def _warm_up(network: Network, search: Search, names, memory_limit: int) -> None:
    """Compile (or load) the kernels a shard uses, before the clock starts."""
    from td2048.play import Agent

    agent = Agent(network, search, 0, 1, memory_limit)
    empty = np.zeros(0, np.int64)
    agent.play_into(empty, empty, empty)
    if names is not None and search.depth == 1 and not search.downgrade:
        _record_shard(agent, names, *(np.zeros(1, np.int64) for _ in range(3)))


def play_sharded(network: Network, search: Search, games: int, seed: int | None = None,
                 shard_size: int = DEFAULT_SHARD_SIZE, threads: int = 1, names: tuple[str, str] | None = None,
                 on_progress: Callable[[int], None] | None = None,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT) -> ShardedRun:
    """Play ``games`` games shard by shard on this machine, ``threads`` shards at once: the same games,
    statistics and records as :func:`play_on_ray` with the same seed and shard size."""
    seed = fresh_seed() if seed is None else seed
    shards = plan_shards(games, shard_size)
    _warm_up(network, search, names, memory_limit)
    results: list[ShardResult] = []
    lock = threading.Lock()
    queue = list(reversed(shards))

    def worker(_thread):
        while True:
            with lock:
                if not queue:
                    return
                shard = queue.pop()
            result = play_shard(network, search, seed, shard, names, memory_limit)
            with lock:
                results.append(result)
                done = sum(len(r.scores) for r in results)
            if on_progress is not None:
                on_progress(done)

    from td2048.play import run_threads

    start = time.perf_counter()
    run_threads(min(threads, len(shards)), worker)
    seconds = time.perf_counter() - start
    stats, counts, records = merge_shards(results, games, seconds, network.game)
    return ShardedRun(stats, counts, records, seed, shard_size, len(shards), {"local": len(shards)})


# ---------------------------------------------------------------------------------------------- Ray

def import_ray():
    """The ``ray`` module, or a one-line TD2048Error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise TD2048Error(RAY_MISSING) from None
    return ray


def forwarded_env() -> dict[str, str]:
    """The driver's variables that the workers need (the kernel caches), for Ray's ``runtime_env``."""
    return {name: os.environ[name] for name in FORWARDED_ENV if os.environ.get(name)}


@dataclass(frozen=True)
class ModelSpec:
    """What a worker needs besides the weights to rebuild a network (small: it travels with each task)."""

    key: str  # the weights' object id: a worker builds each model once
    spec: NetworkSpec
    game: str
    cell_bits: int
    method: str

    @classmethod
    def of(cls, network: Network, key: str) -> ModelSpec:
        return cls(key, network.spec, network.game, network.cell_bits, network.method)


# per worker process: model key -> (network over the shared weights, the object store's array that holds them)
_worker_networks: dict[str, tuple[Network, np.ndarray]] = {}


def _shared_writable(weights: np.ndarray) -> np.ndarray:
    """The same memory as a writable array (no copy). The object store hands out read-only arrays, for
    which Numba compiles every kernel again (20 s or more per network); the playing kernels never write
    a weight, so they take the shared pages as they are."""
    import ctypes

    buffer = (ctypes.c_char * weights.nbytes).from_address(weights.ctypes.data)
    return np.frombuffer(buffer, dtype=weights.dtype)  # the caller keeps ``weights``: its buffer stays mapped


def _worker_network(model: ModelSpec, weights: np.ndarray, memory_limit: int) -> Network:
    if model.key not in _worker_networks:
        _worker_networks.clear()  # one model at a time per worker
        shared = weights if weights.flags.writeable else _shared_writable(weights)
        network = Network(model.spec, shared, memory_limit=max(memory_limit, model.spec.nbytes), game=model.game,
                          cell_bits=model.cell_bits, method=model.method)
        _worker_networks[model.key] = (network, weights)
    return _worker_networks[model.key][0]


def _kill_once_for_tests() -> None:
    """Fault injection: ``TD2048_TEST_KILL_SHARD=PATH`` makes the first shard to start (the one that
    creates PATH) kill its own worker process, as a crash or an OOM kill would."""
    marker = os.environ.get("TD2048_TEST_KILL_SHARD")
    if marker:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os._exit(9)


def ray_shard(model: ModelSpec, weights: np.ndarray, search: Search, seed: int, shard: Shard,
              names: tuple[str, str] | None, memory_limit: int) -> ShardResult:
    """The body of a shard's Ray task (``weights``: the object store's array, resolved by Ray)."""
    import ray

    network = _worker_network(model, weights, memory_limit)
    _kill_once_for_tests()
    result = play_shard(network, search, seed, shard, names, memory_limit)
    result.node = ray.get_runtime_context().get_node_id()
    return result


def connect_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to the Ray cluster at ``address`` ("auto": the one this machine belongs to), or start a
    local one (``num_cpus``: its CPUs, default all); quietly. True when this call connected (the caller
    then disconnects with ``ray.shutdown()``), False when this process was connected already."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage-statistics notice
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    options = {"address": address or "local", "logging_level": logging.ERROR, "log_to_driver": False,
               "configure_logging": True, "runtime_env": {"env_vars": forwarded_env()}}
    if address is None:
        options.update(num_cpus=num_cpus, include_dashboard=False)
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise TD2048Error(f"cannot connect to Ray at {address or 'a new local instance'}: "
                          f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    return True


def play_on_ray(network: Network, search: Search, games: int, seed: int | None = None,
                shard_size: int = DEFAULT_SHARD_SIZE, names: tuple[str, str] | None = None,
                on_progress: Callable[[int], None] | None = None, memory_limit: int = DEFAULT_MEMORY_LIMIT,
                address: str | None = None, num_cpus: int | None = None, resources: dict | None = None,
                retries: int = SHARD_RETRIES) -> ShardedRun:
    """Play ``games`` games as Ray tasks, one per shard: the same games, statistics and records as
    :func:`play_sharded` with the same seed and shard size.

    Uses this process's Ray connection if it has one, else connects (see :func:`connect_ray`) and
    disconnects at the end. ``resources``: what each task needs besides its CPU (e.g. a custom
    resource that only some nodes have)."""
    ray = import_ray()
    seed = fresh_seed() if seed is None else seed
    shards = plan_shards(games, shard_size)
    connected = connect_ray(address, num_cpus)
    try:
        start = time.perf_counter()
        weights = ray.put(network.weights)
        model = ModelSpec.of(network, weights.hex())
        task = ray.remote(ray_shard).options(num_cpus=1, max_retries=retries, retry_exceptions=False,
                                             resources=resources or {},
                                             runtime_env={"env_vars": forwarded_env()} if not connected else None)
        pending = {task.remote(model, weights, search, seed, shard, names, memory_limit): shard for shard in shards}
        results, done = [], 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    if isinstance(e.cause, TD2048Error):  # one line, as on one machine
                        raise TD2048Error(str(e.cause)) from None
                    raise
                except ray.exceptions.RayError as e:
                    raise TD2048Error(f"a shard failed on Ray: {str(e).splitlines()[0]}") from None
                results.append(result)
                done += len(result.scores)
                if on_progress is not None:
                    on_progress(done)
        seconds = time.perf_counter() - start
    finally:
        if connected:
            ray.shutdown()
    stats, counts, records = merge_shards(results, games, seconds, network.game)
    nodes = Counter(r.node for r in results)
    return ShardedRun(stats, counts, records, seed, shard_size, len(shards), dict(nodes))


# -------------------------------------------------------------------------------------------- sweeps

SWEEP_SECTIONS = ("train", "grid", "random", "sweep")
_NOT_SWEPT = ("out", "resume", "quiet")
_RANDOM_KINDS = ("uniform", "loguniform", "randint", "choice")


def _setting_name(option: str) -> tuple[str, object]:
    """``td2048 train``'s option name (``alpha``, ``lambda``, ``merge-every``, ``tc``, ``no-promotion``) -> the
    TrainSettings field and a function from the option's value to the field's."""
    from dataclasses import fields

    from td2048.settings import TrainSettings

    name = option.replace("-", "_")
    if name in _NOT_SWEPT:
        raise TD2048Error(f"{option!r} is set by the sweep itself (each trial is a run directory under --out)")
    if name == "lambda":
        return "lam", float
    if name == "tc":
        return "tc_from", lambda on: "0" if on else None
    if name == "no_promotion":
        return "promote", lambda on: not on
    if name not in {f.name for f in fields(TrainSettings)}:
        raise TD2048Error(f"unknown training option {option!r} in the sweep (see td2048 train --help)")
    return name, lambda value: value


@dataclass
class SweepPlan:
    """A sweep file, read: fixed options, grid lists, random distributions (as td2048 train's options)
    and the sweep's own settings."""

    train: dict
    grid: dict[str, list]
    random: dict[str, dict]
    samples: int = 1  # each point of the grid this many times (seeds seed, seed + 1, ...), random options drawn again
    metric: str = "avg"  # "avg" or "reach:TILE": the last block's average score or reach rate of TILE
    scheduler: str = "fifo"  # "fifo": every trial to its end; "asha": stop the weak ones early
    grace: int = 2  # ASHA: blocks every trial plays before it may be stopped
    cpus: int = 1  # CPUs per trial (its --threads)
    seed: int | None = None  # seed of the random draws

    @property
    def metric_key(self) -> str:
        return "avg" if self.metric == "avg" else f"reach_{self.metric.split(':', 1)[1]}"


def load_sweep(path: str | os.PathLike) -> SweepPlan:
    """Read and check a sweep file (TOML, sections [train], [grid], [random], [sweep])."""
    import tomllib

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise TD2048Error(f"{path}: not valid TOML ({e})") from None
    unknown = set(data) - set(SWEEP_SECTIONS)
    if unknown:
        raise TD2048Error(f"{path}: unknown section(s) {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(SWEEP_SECTIONS)})")
    train, grid, random = data.get("train", {}), data.get("grid", {}), data.get("random", {})
    for option in (*train, *grid, *random):
        _setting_name(option)
    for option, values in grid.items():
        if not isinstance(values, list) or not values:
            raise TD2048Error(f"{path}: [grid] {option} must be a non-empty list")
    for option, dist in random.items():
        if not (isinstance(dist, dict) and len(dist) == 1 and next(iter(dist)) in _RANDOM_KINDS):
            raise TD2048Error(f"{path}: [random] {option} must be one of {{uniform = [lo, hi]}}, "
                              "{loguniform = [lo, hi]}, {randint = [lo, hi]}, {choice = [a, b, ...]}")
    twice = (set(train) & set(grid)) | (set(train) & set(random)) | (set(grid) & set(random))
    if twice:
        raise TD2048Error(f"{path}: {', '.join(sorted(twice))} given in more than one section")
    options = data.get("sweep", {})
    known = {"samples", "metric", "scheduler", "grace", "cpus", "seed"}
    if set(options) - known:
        raise TD2048Error(f"{path}: unknown [sweep] option(s) {', '.join(sorted(set(options) - known))}")
    plan = SweepPlan(train, grid, random, **options)
    if plan.metric != "avg" and not re.fullmatch(r"reach:\d+", plan.metric):
        raise TD2048Error(f"{path}: [sweep] metric must be \"avg\" or \"reach:TILE\" (\"reach:2048\"), "
                          f"not {plan.metric!r}")
    if plan.scheduler not in ("fifo", "asha"):
        raise TD2048Error(f"{path}: [sweep] scheduler must be \"fifo\" or \"asha\", not {plan.scheduler!r}")
    if plan.samples < 1 or plan.cpus < 1 or plan.grace < 1:
        raise TD2048Error(f"{path}: [sweep] samples, cpus and grace must be at least 1")
    trial_settings(plan, {})  # the fixed options must make a valid run
    return plan


def trial_settings(plan: SweepPlan, chosen: dict):
    """The TrainSettings of a trial: the fixed options and the trial's chosen values."""
    from td2048.settings import TrainSettings

    values = {}
    chosen = dict(chosen)
    sample = chosen.pop("sample", 0)  # the repetition of a grid point ([sweep] samples > 1): its own seed
    for option, value in {**plan.train, **chosen}.items():
        name, convert = _setting_name(option)
        values[name] = convert(value)
    values.setdefault("threads", plan.cpus)
    values["seed"] = values.get("seed", 0) + sample
    try:
        settings = TrainSettings(**values)
        settings.validate()
    except TypeError as e:
        raise TD2048Error(f"bad training options in the sweep: {e}") from None
    return settings


def trial_name(chosen: dict) -> str:
    """A run directory's name from the trial's chosen values, the same at every start of the sweep."""
    text = ",".join(f"{k}={chosen[k]:.4g}" if isinstance(chosen[k], float) else f"{k}={chosen[k]}"
                    for k in sorted(chosen))
    safe = re.sub(r"[^A-Za-z0-9=,.+-]", "_", text)[:80]
    return f"{safe or 'trial'}-{hashlib.sha1(json.dumps(chosen, sort_keys=True).encode()).hexdigest()[:8]}"


def _param_space(plan: SweepPlan) -> dict:
    from ray import tune

    space = {option: tune.grid_search(values) for option, values in plan.grid.items()}
    if plan.samples > 1:  # repetitions as a grid axis: each its own seed and run directory
        space["sample"] = tune.grid_search(list(range(plan.samples)))
    for option, dist in plan.random.items():
        kind, args = next(iter(dist.items()))
        space[option] = tune.choice(args) if kind == "choice" else getattr(tune, kind)(*args)
    return space


def sweep_trial(config: dict) -> None:
    """One Tune trial: a td2048 run directory, created or resumed, reporting every block."""
    from pathlib import Path

    from ray import tune

    from td2048.run import SETTINGS, TrainingRun

    chosen = {k: v for k, v in config.items() if not k.startswith("_")}
    plan = SweepPlan(**config["_plan"])
    directory = Path(config["_out"]) / "runs" / trial_name(chosen)
    settings = trial_settings(plan, chosen)
    training = (TrainingRun.resume(directory) if (directory / SETTINGS).exists()
                else TrainingRun.create(directory, settings))
    for stats in training.blocks():
        metrics = {"episodes": stats.episodes, "avg": stats.avg, "max": stats.max, "moves_per_s": stats.moves_per_s,
                   **{f"reach_{tile}": share for tile, share in stats.reach.items()}}
        if plan.metric_key not in metrics:
            metrics[plan.metric_key] = stats.reach_rate(int(plan.metric_key.removeprefix("reach_")))
        tune.report({**metrics, "run": str(directory)})
    training.finish()


@dataclass
class TrialSummary:
    name: str
    directory: str
    chosen: dict
    episodes: int
    metric: float
    avg: float
    status: str


SWEEP_SUMMARY = "sweep.json"  # in a sweep's folder once every trial has ended: the plan and the trials


def _plan_text(plan: SweepPlan) -> str:
    return json.dumps(plan.__dict__, sort_keys=True)


def finished_sweep(plan: SweepPlan, out: str | os.PathLike) -> list[TrialSummary] | None:
    """The trials of a sweep of ``plan`` that already ran to its end under ``out`` (from its summary), or
    None: not finished, another plan (the sweep file changed), or a trial's run directory gone."""
    from pathlib import Path

    try:
        data = json.loads((Path(out) / SWEEP_SUMMARY).read_text())
        if data["plan"] != _plan_text(plan):
            return None
        trials = [TrialSummary(**t) for t in data["trials"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return trials if trials and all(Path(t.directory).is_dir() for t in trials) else None


def _save_summary(plan: SweepPlan, out, trials: list[TrialSummary]) -> None:
    from dataclasses import asdict
    from pathlib import Path

    from td2048.io.atomic import atomic_open

    with atomic_open(Path(out) / SWEEP_SUMMARY, "w") as f:
        json.dump({"plan": _plan_text(plan), "trials": [asdict(t) for t in trials]}, f, indent=1)


def _saved_statuses(experiment) -> dict[str, str]:
    """Each trial's status (by run name) in the experiment's saved state: after Ctrl-C the trials that
    ``fit`` returns all read as terminated, while the saved state keeps the interrupted ones to be continued
    (TERMINATED: ran to its end or stopped by the scheduler). Empty when there is no readable state."""
    from ray import tune

    try:
        trials = tune.ExperimentAnalysis(str(experiment)).trials
    except Exception:  # then nothing is known to have ended, and the next run asks Tune again
        return {}
    return {trial_name({k: v for k, v in t.config.items() if not k.startswith("_")}): t.status for t in trials}


def run_sweep(plan: SweepPlan, out: str | os.PathLike, address: str | None = None) -> list[TrialSummary]:
    """Run (or continue: a sweep stopped in any way goes on from its trials' snapshots) every trial of
    ``plan`` as Ray Tune trials under ``out``; the trials, best first.

    A sweep whose trials have all ended is not started again: its trials come from ``out``'s summary,
    without Ray (which takes seconds to start, and may not be there where the results are read)."""
    from pathlib import Path

    finished = finished_sweep(plan, out)
    if finished is not None:
        return finished
    ray = import_ray()
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # with verbose=0: no tables of Tune's on the terminal
    connected = connect_ray(address)
    try:
        trainable = tune.with_resources(sweep_trial, {"cpu": plan.cpus})
        experiment = out / "tune"
        if tune.Tuner.can_restore(str(experiment)):
            tuner = tune.Tuner.restore(str(experiment), trainable, resume_unfinished=True, resume_errored=True)
        else:
            scheduler = (ASHAScheduler(time_attr="episodes", grace_period=plan.grace * trial_settings(plan, {}).block,
                                       max_t=max(trial_settings(plan, {}).episodes, 1))
                         if plan.scheduler == "asha" else FIFOScheduler())
            space = {**_param_space(plan), "_plan": plan.__dict__, "_out": str(out)}
            if plan.seed is not None:
                np.random.seed(plan.seed)  # Tune draws random options from NumPy's global generator
            tuner = tune.Tuner(trainable, param_space=space,
                               tune_config=tune.TuneConfig(metric=plan.metric_key, mode="max",
                                                           num_samples=1, scheduler=scheduler),
                               run_config=tune.RunConfig(name="tune", storage_path=str(out), verbose=0))
        results = tuner.fit()
        saved = _saved_statuses(experiment)
        summaries = []
        for result in results:
            chosen = {k: v for k, v in result.config.items() if not k.startswith("_")}
            name, metrics = trial_name(chosen), result.metrics or {}
            episodes = int(metrics.get("episodes", 0))
            status = ("error" if result.error else "unfinished" if saved.get(name) != "TERMINATED"
                      else "stopped" if episodes < trial_settings(plan, chosen).episodes else "done")
            summaries.append(TrialSummary(name, str(out / "runs" / name), chosen, episodes,
                                          float(metrics.get(plan.metric_key, 0.0)), float(metrics.get("avg", 0.0)),
                                          status))
    finally:
        if connected:
            ray.shutdown()
    summaries.sort(key=lambda t: t.metric, reverse=True)
    if summaries and all(t.status in ("done", "stopped") for t in summaries):  # none to continue
        _save_summary(plan, out, summaries)
    return summaries


__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "ShardResult", "ShardedRun", "connect_ray", "merge_shards",
           "plan_shards", "play_on_ray", "play_shard", "play_sharded", "shard_seed",
           "SweepPlan", "finished_sweep", "load_sweep", "run_sweep"]
