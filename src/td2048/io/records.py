"""The course's episode records: one line per episode, written by ``td2048 eval --record``.

This module reads and writes the grammar; the games are played by :mod:`td2048.recording`.

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

import numpy as np

from td2048.errors import TD2048Error

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
    """One record line from ``actions[i] = (kind, a, b, ms)`` (see the module's docstring)."""
    parts = []
    for kind, a, b, ms in actions[:n].tolist():
        text = f"{a:X}{b}" if kind == 0 else f"#{DIRECTIONS[a]}[{b}]" if b else f"#{DIRECTIONS[a]}"
        parts.append(f"{text}({ms})" if ms else text)
    return f"{player}:{env}@{tick}|{''.join(parts)}|{env}@{tock}"
