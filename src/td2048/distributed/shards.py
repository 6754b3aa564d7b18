"""Evaluation in shards: the same games whoever plays them, on one machine or many (no Ray here).

``td2048 eval --shard-size K`` cuts the games into shards of K games (the last one shorter). Each
shard is played by an agent of its own, on one thread. Every game has its own random state,
derived from the run's seed and the game's index alone, and starts with an empty transposition
table (see :mod:`td2048.play`)::

    seed S --SeedSequence(S, spawn_key=(i,))--> game i's random state   (= SeedSequence(S).spawn(n)[i])

so a game does not depend on who plays it, when, or next to what: the shards' games, put back in
game order, are the games of ``td2048 eval`` on one thread or N, whatever the shard size or the
number of workers or nodes, and the statistics block built from them (:meth:`BlockStats.from_block`
over all the games' scores, largest tiles and moves) is the same number for number, as are the
search counters and the records. Only the seconds differ. :mod:`td2048.distributed.ray_eval` plays
the same shards as Ray tasks.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from td2048.config import DEFAULT_SHARD_SIZE
from td2048.errors import TD2048Error
from td2048.network import Network
from td2048.search_settings import Search
from td2048.stats import BlockStats
from td2048.threads import run_threads

if TYPE_CHECKING:
    from td2048.play import Agent


@dataclass(frozen=True)
class Shard:
    """Games ``start .. start + games - 1`` of a run (``index``: the shard's number, in game order)."""

    index: int
    start: int
    games: int


def plan_shards(games: int, shard_size: int) -> list[Shard]:
    """``games`` games cut into shards of ``shard_size`` (the last one holds the rest).

    Parameters
    ----------
    games : int
        Games of the run.
    shard_size : int
        Games per shard.

    Returns
    -------
    list of Shard
        The shards, in game order.

    Raises
    ------
    TD2048Error
        When games or the shard size is below 1.
    """
    if games < 1 or shard_size < 1:
        raise TD2048Error(f"games and the shard size must be at least 1, not {games} and {shard_size}")
    return [Shard(i, start, min(shard_size, games - start)) for i, start in enumerate(range(0, games, shard_size))]


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
               memory_limit: int | None = None) -> ShardResult:
    """Play one shard's games on this thread.

    Parameters
    ----------
    network : Network
        The model.
    search : Search
        How moves are chosen.
    seed : int
        The run's seed (each game's random state comes from it and the game's index).
    shard : Shard
        Which games.
    names : tuple of (str, str) or None
        (player, env): also make each game's record line (see :mod:`td2048.recording`; at depth 1 the
        same games as without).
    memory_limit : int or None
        The most bytes of weights and transposition table (None: see :class:`td2048.play.Agent`).

    Returns
    -------
    ShardResult
        The shard's games, counters and records, and this process's id.
    """
    from td2048.play import Agent  # here: importing this module loads no compiled code

    agent = Agent(network, search, seed, 1, memory_limit)
    scores, max_codes, moves = (np.zeros(shard.games, np.int64) for _ in range(3))
    records = None
    started = time.perf_counter()
    if names is None:
        agent.play_into(scores, max_codes, moves, first=shard.start)
    else:
        records = _record_shard(agent, names, scores, max_codes, moves, shard.start)
    seconds = time.perf_counter() - started
    return ShardResult(shard.index, scores, max_codes, moves, seconds, agent.counters.sum(axis=0)[:4].copy(),
                       records, pid=os.getpid())


def _record_shard(agent: Agent, names: tuple[str, str], scores, max_codes, moves, first: int) -> list[str]:
    """The shard's games (from game ``first``) with their record lines (kept, not written to a file)."""
    from td2048.recording import record_lines

    return [line for line, _ in record_lines(agent, names, scores, max_codes, moves, first)]


def merge_shards(results: Iterable[ShardResult], games: int, seconds: float, game: str = "2048",
                 ) -> tuple[BlockStats, dict[str, int], list[str] | None]:
    """Every shard's games, put back in game order, as one result.

    Parameters
    ----------
    results : iterable of ShardResult
        One per shard, in any order.
    games : int
        Games of the run.
    seconds : float
        Wall time of the run.
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    tuple of (BlockStats, dict, list of str or None)
        The statistics block of all the games, the search counters summed, the records in game order
        (None when not asked for).

    Raises
    ------
    TD2048Error
        When a shard is missing or there twice.
    """
    results = sorted(results, key=lambda r: r.index)
    if [r.index for r in results] != list(range(len(results))) or sum(len(r.scores) for r in results) != games:
        raise TD2048Error(f"shards missing or doubled: {[r.index for r in results]} for {games} games")
    stats = BlockStats.from_block(games, *(np.concatenate([getattr(r, a) for r in results])
                                           for a in ("scores", "max_codes", "moves")), seconds, game=game)
    total = np.sum([r.counters for r in results], axis=0)
    counts = dict(zip(("nodes", "leaves", "tt_probes", "tt_hits"), map(int, total), strict=True))
    records = None if results[0].records is None else [line for r in results for line in r.records]
    return stats, counts, records


def _warm_up(network: Network, search: Search, names, memory_limit: int | None) -> None:
    """Compile (or load) the kernels a shard uses, before the clock starts."""
    from td2048.play import Agent

    agent = Agent(network, search, 0, 1, memory_limit)
    empty = np.zeros(0, np.int64)
    agent.play_into(empty, empty, empty)
    if names is not None and search.depth == 1 and not search.downgrade:
        _record_shard(agent, names, *(np.zeros(1, np.int64) for _ in range(3)), 0)


def play_sharded(network: Network, search: Search, games: int, seed: int | None = None,
                 shard_size: int = DEFAULT_SHARD_SIZE, threads: int = 1, names: tuple[str, str] | None = None,
                 on_progress: Callable[[int], None] | None = None,
                 memory_limit: int | None = None) -> ShardedRun:
    """Play games shard by shard on this machine, several shards at once.

    The same games, statistics and records as :func:`td2048.distributed.ray_eval.play_on_ray` with the
    same seed and shard size.

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
        Games per shard.
    threads : int
        Shards played at once.
    names : tuple of (str, str) or None
        (player, env): also make the games' record lines.
    on_progress : callable or None
        Called with the games done after each shard.
    memory_limit : int or None
        The most bytes of weights and transposition table per shard (None: see :class:`td2048.play.Agent`).

    Returns
    -------
    ShardedRun
        The statistics, counters and records of all the games.
    """
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

    start = time.perf_counter()
    run_threads(min(threads, len(shards)), worker)
    seconds = time.perf_counter() - start
    stats, counts, records = merge_shards(results, games, seconds, network.game)
    return ShardedRun(stats, counts, records, seed, shard_size, len(shards), {"local": len(shards)})


__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "ShardResult", "ShardedRun", "fresh_seed", "merge_shards", "plan_shards",
           "play_shard", "play_sharded"]
