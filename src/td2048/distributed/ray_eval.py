"""Evaluation on Ray: the shards of :mod:`td2048.distributed.shards` played as Ray tasks.

``td2048 eval --ray [ADDRESS]`` plays each shard as one task, with the same games, statistics
and records as ``--shard-size`` on one machine. The weights go into the object store once
(``ray.put``) and reach each node once; the workers of a node read them in place, from shared
memory, and build the :class:`Network` around them (a task's arguments say the network, the game,
the cell width and the method; kernels load from the node's kernel cache, see
:mod:`td2048.distributed.cluster`). A worker that dies in the middle of a shard (killed, out of
memory, its node lost) loses only that shard's task, which Ray runs again (``max_retries``):
results are collected per shard, so no game is counted twice or lost.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from td2048.config import DEFAULT_SHARD_SIZE
from td2048.distributed.cluster import connect_ray, forwarded_env, import_ray
from td2048.distributed.shards import (
    Shard,
    ShardedRun,
    ShardResult,
    fresh_seed,
    merge_shards,
    plan_shards,
    play_shard,
)
from td2048.errors import TD2048Error
from td2048.network import Network
from td2048.search_settings import Search
from td2048.spec import NetworkSpec

SHARD_RETRIES = 3  # times Ray runs a shard again after its worker died


@dataclass(frozen=True)
class ModelSpec:
    """What a worker needs besides the weights to rebuild a network (small: it travels with each task).

    Parameters
    ----------
    key : str
        The weights' object id: a worker builds each model once.
    spec : NetworkSpec
        The network's tuples and layout.
    game : str
        ``"2048"`` or ``"2584"``.
    cell_bits : int
        4 or 5.
    method : str
        ``"afterstate"`` or ``"state"``.
    """

    key: str
    spec: NetworkSpec
    game: str
    cell_bits: int
    method: str

    @classmethod
    def of(cls, network: Network, key: str) -> ModelSpec:
        """The spec of ``network``, whose weights are the object ``key``."""
        return cls(key, network.spec, network.game, network.cell_bits, network.method)


# per worker process: model key -> (network over the shared weights, the object store's array that holds them)
_worker_networks: dict[str, tuple[Network, np.ndarray]] = {}


def _shared_writable(weights: np.ndarray) -> np.ndarray:
    """The same memory as a writable array (no copy). The object store hands out read-only arrays, for
    which Numba would compile every kernel again; the playing kernels never write a weight, so they take
    the shared pages as they are."""
    import ctypes

    buffer = (ctypes.c_char * weights.nbytes).from_address(weights.ctypes.data)
    return np.frombuffer(buffer, dtype=weights.dtype)  # the caller keeps ``weights``: its buffer stays mapped


def _worker_network(model: ModelSpec, weights: np.ndarray, memory_limit: int | None) -> Network:
    if model.key not in _worker_networks:
        _worker_networks.clear()  # one model at a time per worker
        shared = weights if weights.flags.writeable else _shared_writable(weights)
        network = Network(model.spec, shared, memory_limit=max(memory_limit or 0, model.spec.nbytes), game=model.game,
                          cell_bits=model.cell_bits, method=model.method)
        _worker_networks[model.key] = (network, weights)
    return _worker_networks[model.key][0]


def ray_shard(model: ModelSpec, weights: np.ndarray, search: Search, seed: int, shard: Shard,
              names: tuple[str, str] | None, memory_limit: int | None) -> ShardResult:
    """The body of a shard's Ray task (see :func:`td2048.distributed.shards.play_shard`).

    Parameters
    ----------
    model : ModelSpec
        The network without its weights.
    weights : numpy.ndarray
        The object store's array of weights, resolved by Ray.
    search, seed, shard, names, memory_limit
        As :func:`td2048.distributed.shards.play_shard` takes them.

    Returns
    -------
    ShardResult
        The shard's games, with the node that played them.
    """
    import ray

    network = _worker_network(model, weights, memory_limit)
    result = play_shard(network, search, seed, shard, names, memory_limit)
    result.node = ray.get_runtime_context().get_node_id()
    return result


def play_on_ray(network: Network, search: Search, games: int, seed: int | None = None,
                shard_size: int = DEFAULT_SHARD_SIZE, names: tuple[str, str] | None = None,
                on_progress: Callable[[int], None] | None = None, memory_limit: int | None = None,
                address: str | None = None, num_cpus: int | None = None, resources: dict | None = None,
                retries: int = SHARD_RETRIES) -> ShardedRun:
    """Play games as Ray tasks, one per shard.

    The same games, statistics and records as :func:`td2048.distributed.shards.play_sharded` with the
    same seed and shard size. Uses this process's Ray connection if it has one, else connects (see
    :func:`td2048.distributed.cluster.connect_ray`) and disconnects at the end.

    Parameters
    ----------
    network : Network
        The model.
    search : Search
        How moves are chosen.
    games : int
        Games to play.
    seed : int or None
        The run's seed; None: fresh entropy (returned in the result).
    shard_size : int
        Games per shard (per task).
    names : tuple of (str, str) or None
        (player, env): also make the games' record lines.
    on_progress : callable or None
        Called with the games done after each shard.
    memory_limit : int or None
        The most bytes of weights and transposition table per task (None: see :class:`td2048.play.Agent`).
    address : str or None
        The cluster's address; None: a new local instance (when not connected already).
    num_cpus : int or None
        A new local instance's CPUs; None: all.
    resources : dict or None
        What each task needs besides its CPU (e.g. a custom resource that only some nodes have).
    retries : int
        Times a shard runs again after its worker died.

    Returns
    -------
    ShardedRun
        The statistics, counters and records of all the games, and the shards each node played.

    Raises
    ------
    TD2048Error
        Ray is missing or unreachable, a shard failed with a TD2048Error, or a shard's worker died with
        no retry left (one line).
    """
    ray = import_ray()
    seed = fresh_seed() if seed is None else seed
    shards = plan_shards(games, shard_size)
    connected = connect_ray(address, num_cpus)
    try:
        # everything Ray handed over is merged into arrays of this process's own inside: the arrays of a
        # task's result are views of Ray's buffers, which ray.shutdown() frees under them
        return _play_tasks(ray, network, search, games, seed, shards, shard_size, names, on_progress, memory_limit,
                           resources or {}, retries, None if connected else {"env_vars": forwarded_env()})
    finally:
        if connected:
            ray.shutdown()


def _play_tasks(ray, network: Network, search: Search, games: int, seed: int, shards: list[Shard], shard_size: int,
                names, on_progress, memory_limit: int | None, resources: dict, retries: int,
                runtime_env: dict | None) -> ShardedRun:
    """The shards as Ray tasks on the connected cluster, merged (see :func:`play_on_ray`)."""
    results: list[ShardResult] = []
    try:
        start = time.perf_counter()
        weights = ray.put(network.weights)
        model = ModelSpec.of(network, weights.hex())
        task = ray.remote(ray_shard).options(num_cpus=1, max_retries=retries, retry_exceptions=False,
                                             resources=resources, runtime_env=runtime_env)
        pending = {task.remote(model, weights, search, seed, shard, names, memory_limit): shard for shard in shards}
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                pending.pop(ref)
                try:
                    results.append(ray.get(ref))
                except ray.exceptions.RayTaskError as e:
                    if isinstance(e.cause, TD2048Error):  # one line, as on one machine
                        raise TD2048Error(str(e.cause)) from None
                    raise
                except ray.exceptions.RayError as e:
                    raise TD2048Error(f"a shard failed on Ray: {str(e).splitlines()[0]}") from None
                done += len(results[-1].scores)
                if on_progress is not None:
                    on_progress(done)
        seconds = time.perf_counter() - start
        stats, counts, records = merge_shards(results, games, seconds, network.game)  # copies
        nodes = Counter(r.node for r in results)
        return ShardedRun(stats, counts, records, seed, shard_size, len(shards), dict(nodes))
    finally:
        results.clear()  # no view of Ray's memory outlives this call, even with an exception on its way

__all__ = ["SHARD_RETRIES", "ModelSpec", "play_on_ray", "ray_shard"]
