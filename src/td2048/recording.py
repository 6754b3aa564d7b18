"""Games played for the course's episode records (``td2048 eval --record``, and the shards' record lines).

An :class:`~td2048.play.Agent` plays each game; its lines are written in the grammar of
:mod:`td2048.io.records`. At depth 1 a whole game runs in one compiled call (the same games as ``td2048 eval``
with the seed); deeper, each decision is one compiled search, timed for the record's (MS).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

import numpy as np

from td2048.config import MAX_EPISODE_MOVES, WIDE_MAX_EPISODE_MOVES
from td2048.games.bitboard import grid_from_board
from td2048.games.wide import wide_to_codes
from td2048.io.atomic import atomic_open
from td2048.io.records import format_episode
from td2048.play import Agent
from td2048.stats import BlockStats


def record_games(agent: Agent, path: str | os.PathLike, games: int,
                 names: tuple[str, str] = ("td2048", "random"),
                 on_progress: Callable[[int], None] | None = None) -> BlockStats:
    """Play ``games`` games with ``agent`` (one thread), write their records to ``path`` (atomically),
    return their statistics. At depth 1 whole games run in one compiled call (the same games as
    ``td2048 eval`` with the seed); deeper, each decision is one compiled search, timed for (MS).
    ``on_progress`` is called with the number of games written after each one."""
    scores, max_codes, moves = (np.zeros(games, np.int64) for _ in range(3))
    with atomic_open(path, "w") as f:
        seconds = 0.0
        for done, (line, spent) in enumerate(record_lines(agent, names, scores, max_codes, moves), 1):
            f.write(line + "\n")
            seconds += spent
            if on_progress is not None:
                on_progress(done)
    return BlockStats.from_block(games, scores, max_codes, moves, seconds, game=agent.network.game)


def record_lines(agent: Agent, names: tuple[str, str], scores: np.ndarray, max_codes: np.ndarray,
                 moves: np.ndarray, first: int = 0) -> Iterator[tuple[str, float]]:
    """Play games ``first .. first + len(scores) - 1`` of the agent's seed (each from its own random state,
    :meth:`Agent.start_game`), filling the three arrays game by game; yields each game's record line
    and the seconds it took to play."""
    longest = WIDE_MAX_EPISODE_MOVES if agent.network.wide else MAX_EPISODE_MOVES
    greedy = agent.search.depth == 1 and not agent.search.downgrade
    player, env = names
    for g in range(len(scores)):
        agent.start_game(first + g)
        started = time.perf_counter()
        tick = time.time_ns() // 1_000_000
        actions, n, score, largest = _greedy_episode(agent, longest) if greedy else _searched_episode(agent)
        tock = time.time_ns() // 1_000_000
        spent = time.perf_counter() - started
        scores[g], moves[g], max_codes[g] = score, (n - 2) // 2, largest
        yield format_episode(player, env, tick, tock, actions, n), spent


def _greedy_episode(agent: Agent, longest: int):
    """One game by the greedy kernel that records its actions: (actions, n, score, largest code)."""
    network = agent.network
    table = network.row_table()
    actions = np.zeros((2 * longest + 4, 4), np.int64)
    handoff = np.zeros((2, 2 if network.wide else 1), np.uint64)
    n, score, largest, handed = network.kernels.record_episode(table, network.weights, agent.rng_state, actions,
                                                               handoff)
    if handed:  # two 32768 tiles: go on on 5-bit cells, where they can merge
        wide_actions = np.zeros((2 * WIDE_MAX_EPISODE_MOVES + 4, 4), np.int64)
        wide_actions[:n] = actions[:n]
        start = np.zeros((2, 2), np.uint64)
        start[0, 0] = handoff[0, 0]
        n, score, largest = network.wide_kernels().record_finish(
            network.row_table(wide=True), network.weights, agent.rng_state, wide_actions, n, start, score)
        actions = wide_actions
    return actions, n, score, largest


def _codes(board) -> list[int]:
    return wide_to_codes(board) if isinstance(board, tuple) else grid_from_board(board).reshape(16).tolist()


def _placement(before, after) -> tuple[int, int]:
    """(cell, code) of the one tile that is on ``after`` and not on ``before``."""
    for i, (a, b) in enumerate(zip(_codes(before), _codes(after), strict=True)):
        if a != b:
            return i, b
    return -1, 0


def _searched_episode(agent: Agent):
    """One game decided move by move by compiled searches, each timed: (actions, n, score, largest code)."""
    rows = []
    board = agent.empty_board
    for _ in range(2):
        placed = agent.spawn(board)
        rows.append((0, *_placement(board, placed), 0))
        board = placed
    score = 0
    values = np.zeros(4)
    while True:
        started = time.perf_counter()
        d, reward, after, following = agent.step(board, values)
        ms = int((time.perf_counter() - started) * 1000)
        if d < 0:
            break
        rows.append((1, d, reward, ms))
        rows.append((0, *_placement(after, following), 0))
        score += reward
        board = following
    return np.array(rows, np.int64).reshape(-1, 4), len(rows), score, max(_codes(board))
