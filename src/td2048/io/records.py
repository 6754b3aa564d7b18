"""The course's episode records: one line per episode, written by ``td2048 eval --record``.

::

    line  := PLAYER ':' ENV '@' TICK '|' place place (slide place)* '|' WINNER '@' TOCK
    place := POS CODE [ '[' REWARD ']' ] [ '(' MS ')' ]      POS: hex cell 0-F, CODE: 1 or 2
    slide := '#' ('U' | 'R' | 'D' | 'L') [ '[' REWARD ']' ] [ '(' MS ')' ]

``[REWARD]`` and ``(MS)`` are written only when non-zero; TICK and TOCK are the epoch
milliseconds at the start and end of the episode; WINNER is the last agent that acted (the
environment, which places the last tile). A 1-ply player decides in microseconds, so no
action takes a whole millisecond and no ``(MS)`` is written.
"""

from __future__ import annotations

import os
import time

import numpy as np

from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.learn import MAX_EPISODE_MOVES, WIDE_MAX_EPISODE_MOVES
from td2048.network import Network
from td2048.rng import make_rng_state
from td2048.stats import BlockStats

DIRECTIONS = "URDL"  # 0 = up, 1 = right, 2 = down, 3 = left
_NAME_FORBIDDEN = set(":@|#[]()\n\r")


def parse_names(text: str) -> tuple[str, str]:
    """``player:env`` -> (player, env); names may not hold the grammar's punctuation."""
    if text.count(":") != 1:
        raise TD2048Error(f"--names must be PLAYER:ENV, not {text!r}")
    player, env = text.split(":")
    for name in (player, env):
        if not name or _NAME_FORBIDDEN & set(name) or name != name.strip():
            raise TD2048Error(f"bad name {name!r} in --names (no spaces around, none of : @ | # [ ] ( ))")
    return player, env


def format_episode(player: str, env: str, tick: int, tock: int, actions: np.ndarray, n: int) -> str:
    parts = []
    for kind, a, b in actions[:n].tolist():
        if kind == 0:
            parts.append(f"{a:X}{b}")
        else:
            parts.append(f"#{DIRECTIONS[a]}[{b}]" if b else f"#{DIRECTIONS[a]}")
    return f"{player}:{env}@{tick}|{''.join(parts)}|{env}@{tock}"


def record_games(network: Network, path: str | os.PathLike, games: int, seed: int | None = None,
                 names: tuple[str, str] = ("td2048", "random")) -> BlockStats:
    """Play ``games`` greedy games, write their records to ``path`` (atomically), return their statistics."""
    from td2048.games.game2048 import row_table
    from td2048.games.wide import wide_row_table

    kernels = network.kernels
    table = wide_row_table(network.game) if network.wide else row_table()
    longest = WIDE_MAX_EPISODE_MOVES if network.wide else MAX_EPISODE_MOVES
    actions = np.zeros((2 * longest + 4, 3), np.int64)
    handoff = np.zeros((2, 2 if network.wide else 1), np.uint64)
    rng = make_rng_state(seed)
    scores, max_codes, moves = (np.zeros(games, np.int64) for _ in range(3))
    player, env = names
    seconds = 0.0
    with atomic_open(path, "w") as f:
        for g in range(games):
            start = time.perf_counter()
            tick = time.time_ns() // 1_000_000
            n, score, largest, handed = kernels.record_episode(table, network.weights, rng, actions, handoff)
            if handed:  # two 32768 tiles: go on on 5-bit cells, where they can merge
                wide_actions = np.zeros((2 * WIDE_MAX_EPISODE_MOVES + 4, 3), np.int64)
                wide_actions[:n] = actions[:n]
                start = np.zeros((2, 2), np.uint64)
                start[0, 0] = handoff[0, 0]
                n, score, largest = network.wide_kernels().record_finish(
                    wide_row_table(network.game), network.weights, rng, wide_actions, n, start, score)
                actions_of_game = wide_actions
            else:
                actions_of_game = actions
            tock = time.time_ns() // 1_000_000
            seconds += time.perf_counter() - start
            f.write(format_episode(player, env, tick, tock, actions_of_game, n) + "\n")
            scores[g], moves[g] = score, (n - 2) // 2
            max_codes[g] = largest
    return BlockStats.from_block(games, scores, max_codes, moves, seconds, game=network.game)
