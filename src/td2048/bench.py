"""Moves per second of training and of testing (no updates), compiled code warmed."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from td2048.config import DEFAULT_BLOCK, DEFAULT_CLAMP_2584, DEFAULT_MEMORY_LIMIT, DEFAULT_TC_ALPHA
from td2048.games.shape import BoardShape
from td2048.io.model import load_model
from td2048.learn import DEFAULT_OPTIONS, EpisodeBlock, Learner
from td2048.learning_options import LearningOptions
from td2048.network import Network, parse_network
from td2048.play import Agent
from td2048.stats import BlockStats


def _timed_blocks(play: Callable[[int], EpisodeBlock | BlockStats], seconds: float | None, episodes: int | None,
                  block: int) -> tuple[int, float]:
    """Blocks of episodes, each played by ``play(n)`` (a learner's, or an agent's without learning), until
    ``seconds`` have passed, or exactly ``episodes`` episodes: (moves, seconds)."""
    moves, elapsed, played = 0, 0.0, 0
    while (elapsed < seconds) if episodes is None else (played < episodes):
        n = block if episodes is None else min(block, episodes - played)
        result = play(n)
        moves += int(np.sum(result.moves))
        elapsed += result.seconds
        played += n
    return moves, elapsed


def benchmark(network: str = "4x6", seconds: float | None = 5.0, isomorphisms: int | None = None, seed: int = 0,
              options: LearningOptions = DEFAULT_OPTIONS, block: int = DEFAULT_BLOCK,
              memory_limit: int = DEFAULT_MEMORY_LIMIT, weights: str | None = None, threads: int = 1,
              game: str = "2048", clamp: int | None = None, cells: int | None = None, method: str = "afterstate",
              episodes: int | None = None, tc: bool = False, merge_seconds: float | None = None,
              tc_records: bool = False, board: str = "4x4", weight_bits: int = 32) -> dict:
    """Train for ``seconds``, then play (no updates) with the weights so trained for ``seconds``.

    With ``episodes``: train exactly that many episodes, then play as many: the same work as
    another program's "train N episodes from zero, then test N" (benchmarks/compare.py).

    Episodes run in blocks of ``block`` (the training default), as ``td2048 train`` runs them; with
    several threads they all write the network's weights without locks, as in training, or with
    ``merge_seconds`` (TD only) each its copy, merged every that many seconds (``td2048 train --merge-every``).
    Training starts from zero weights, or from a weight file (``weights``): a trained network
    plays longer games over more of its tables, which is slower than the first seconds of a run.
    ``compile_s`` is the time of the first tiny call, which compiles the kernels or loads them
    from Numba's cache; it is not counted in the speeds.

    ``tc``: train with temporal coherence (meta rate 1.0, the default of ``td2048 train --tc``), whose
    threads write the accumulators too; ``tc_records``: on records, each weight beside its accumulators
    (``td2048 train --tc-records``). ``options``: how training learns (:class:`td2048.learning_options.LearningOptions`:
    ``update``, backward or forward; ``target="expected"`` trains by expected targets, as ``td2048 train
    --target expected`` does). ``weight_bits``: 16 trains and plays on 16-bit weights (``td2048 train --weight-bits
    16``; a model given is converted).
    """
    loaded = None
    if weights is not None:
        loaded, _ = load_model(weights)
        loaded = loaded.with_weight_bits(weight_bits)
        spec, game, cells, method = loaded.spec, loaded.game, loaded.cell_bits, loaded.method
    else:
        if game == "2584" and clamp is None:
            clamp = DEFAULT_CLAMP_2584
        spec = parse_network(network, isomorphisms, clamp, board=BoardShape.parse(board))

    alpha = DEFAULT_TC_ALPHA if tc else 0.1
    start = time.perf_counter()
    # compiles, or loads from the cache, the kernels the measures use
    fresh = Network(spec, memory_limit=memory_limit, game=game, cell_bits=cells, method=method,
                    weight_bits=weight_bits)
    warm = Learner(fresh, seed=seed, threads=threads, merge_seconds=merge_seconds, memory_limit=memory_limit,
                   tc_records=tc_records)
    warm.run(threads, alpha, options, tc=tc)
    Agent(fresh, seed=seed, threads=threads).play(threads)
    compile_s = time.perf_counter() - start
    del warm, fresh
    start = time.perf_counter()
    net = loaded if loaded is not None else Network(spec, memory_limit=memory_limit, game=game, cell_bits=cells,
                                                    method=method, weight_bits=weight_bits)
    player = Learner(net, seed=seed, threads=threads, merge_seconds=merge_seconds, memory_limit=memory_limit,
                     tc_records=tc_records)
    if tc:  # TC's accumulators (and records) are made before the clock starts, as the weights are
        player.run(0, alpha, options, tc=True)
    alloc_s = time.perf_counter() - start

    train_moves, train_s = _timed_blocks(lambda n: player.run(n, alpha, options, tc=tc), seconds, episodes, block)
    player.merge()
    agent = Agent(net, seed=seed + 1, threads=threads)
    test_moves, test_s = _timed_blocks(agent.play, seconds, episodes, block)
    return {
        "game": game,
        "cells": 5 if net.wide else 4,
        "network": spec.name,
        "board": spec.board.name,
        "clamp": spec.clamp,
        "weights": weights,
        "isomorphisms": spec.isomorphisms,
        "update": options.update,
        "tc": tc,
        "target": options.target,
        "method": method,
        "threads": threads,
        "merge_every": merge_seconds,
        "tc_records": bool(tc and tc_records),
        "weight_bits": weight_bits,
        "episodes": episodes,
        "train_moves_per_s": round(train_moves / train_s, 1),
        "test_moves_per_s": round(test_moves / test_s, 1),
        "train_moves": train_moves,
        "test_moves": test_moves,
        "train_s": round(train_s, 3),
        "test_s": round(test_s, 3),
        "compile_s": round(compile_s, 3),
        "alloc_s": round(alloc_s, 3),
        "weights_bytes": spec.nbytes,
        "nonzero_weights": int(np.count_nonzero(net.weights)),
    }
