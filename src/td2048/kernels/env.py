"""Compiled steps of the Gymnasium environments: a range of boards stepped in one call.

Each board keeps, next to itself, its four afterstates and their rewards, computed once when
the board arrives: they give the next step's move (a lookup), the legal-move mask (an
afterstate that equals the board is an illegal move) and the end of the game (no legal
move). A step is then one lookup, one new tile and the four slides of the new board.

Per board ``i``: ``boards[i]`` (the state; ``(lo, hi)`` rows on 5-bit cells), ``afters[i, a]``
and ``gains[i, a]`` (afterstate and reward of move ``a``), ``rngs[i]`` (its own xoshiro
state), ``pending[i]`` (the game ended at the last step: this step starts a new one; the
Gymnasium "next step" autoreset). A step writes ``obs[i]`` (16 cell codes, row-major),
``rewards[i]`` (float64), ``terminated[i]``, ``illegal[i]`` and ``masks[i]``; an illegal action
leaves the board as it is, with reward 0. ``lo..hi`` is the range of boards: threads step
disjoint ranges of the same arrays.
"""

import numpy as np

from td2048.config import njit
from td2048.games.bitboard import ROW_MASK, U64, transpose
from td2048.games.game2048 import new_game, spawn_tile
from td2048.games.wide import wide_move, wide_new_game, wide_spawn_tile

_U0 = U64(0)
_U4 = U64(4)
_U8 = U64(8)
_U16 = U64(16)
_U32 = U64(32)
_LOW32 = U64(0xFFFFFFFF)
_M16 = U64(0x0000FFFF0000FFFF)
_M8 = U64(0x00FF00FF00FF00FF)
_M4 = U64(0x0F0F0F0F0F0F0F0F)


@njit(inline="always")
def _slide_both(table, x):
    """(left result, right result, reward) of sliding the rows of ``x``: one row-table load a row
    (the table word holds both results; a 2048 row pays the same either way)."""
    left = _U0
    right = _U0
    reward = 0
    for r in range(4):
        shift = U64(16 * r)
        entry = table[np.int64((x >> shift) & ROW_MASK)]
        left |= (entry & ROW_MASK) << shift
        right |= ((entry >> _U16) & ROW_MASK) << shift
        reward += np.int64(entry >> _U32)
    return left, right, reward


@njit(inline="always")
def _nibbles_to_bytes(x):
    """The 8 nibbles of the low 32 bits of ``x`` as the 8 bytes of a word (nibble k -> byte k)."""
    x &= _LOW32
    x = (x | (x << _U16)) & _M16
    x = (x | (x << _U8)) & _M8
    return (x | (x << _U4)) & _M4


@njit(inline="always")
def _arrive(table, b, afters, gains, masks, i):
    """Store board ``b``'s afterstates, rewards and legal moves (up, right, down, left); True when one is legal."""
    left, right, row_gain = _slide_both(table, b)
    t = transpose(b)
    up, down, column_gain = _slide_both(table, t)
    afters[i, 0] = transpose(up)
    afters[i, 1] = right
    afters[i, 2] = transpose(down)
    afters[i, 3] = left
    gains[i, 0] = column_gain
    gains[i, 1] = row_gain
    gains[i, 2] = column_gain
    gains[i, 3] = row_gain
    any_legal = False
    for a in range(4):
        legal = afters[i, a] != b
        masks[i, a] = legal
        any_legal |= legal
    return any_legal


@njit
def step_narrow(table, boards, afters, gains, rngs, pending, actions, obs_words, rewards, terminated, illegal,
                masks, starts_only, lo, hi):
    """One step of boards ``lo..hi`` on 4-bit cells (2048); ``obs_words`` is the int8 observation as uint64[n, 2].
    ``starts_only``: only the pending boards move (they start their games): a reset."""
    for i in range(lo, hi):
        if starts_only and not pending[i]:
            continue
        rng = rngs[i]
        if pending[i]:
            b = new_game(rng)
            gain = 0
            pending[i] = False
            bad = False
        else:
            a = actions[i]
            b = afters[i, a]
            bad = b == boards[i]
            gain = 0 if bad else gains[i, a]
            if not bad:
                b = spawn_tile(b, rng)
        rewards[i] = gain
        illegal[i] = bad
        if bad:
            terminated[i] = False
            continue  # the board, its observation and its moves stay as they are
        boards[i] = b
        over = not _arrive(table, b, afters, gains, masks, i)
        terminated[i] = over
        pending[i] = over
        obs_words[i, 0] = _nibbles_to_bytes(b)
        obs_words[i, 1] = _nibbles_to_bytes(b >> _U32)


@njit(inline="always")
def _wide_arrive(table, lo_word, hi_word, afters, gains, masks, obs, i):
    any_legal = False
    for a in range(4):
        after, gain = wide_move(table, (lo_word, hi_word), a)
        afters[i, a, 0] = after[0]
        afters[i, a, 1] = after[1]
        gains[i, a] = gain
        legal = after[0] != lo_word or after[1] != hi_word
        masks[i, a] = legal
        any_legal |= legal
    for c in range(16):
        obs[i, c] = np.int8(((lo_word >> U64(4 * c)) & U64(0xF)) | (((hi_word >> U64(c)) & U64(1)) << _U4))
    return any_legal


@njit
def step_wide(table, boards, afters, gains, rngs, pending, actions, obs, rewards, terminated, illegal, masks,
              starts_only, lo, hi):
    """One step of boards ``lo..hi`` on 5-bit cells (2584, or 2048 past 32768); ``obs`` is int8[n, 16]."""
    for i in range(lo, hi):
        if starts_only and not pending[i]:
            continue
        rng = rngs[i]
        if pending[i]:
            b = wide_new_game(rng)
            gain = 0
            pending[i] = False
            bad = False
        else:
            a = actions[i]
            b = (afters[i, a, 0], afters[i, a, 1])
            bad = b[0] == boards[i, 0] and b[1] == boards[i, 1]
            gain = 0 if bad else gains[i, a]
            if not bad:
                b = wide_spawn_tile(b, rng)
        rewards[i] = gain
        illegal[i] = bad
        if bad:
            terminated[i] = False
            continue
        boards[i, 0] = b[0]
        boards[i, 1] = b[1]
        over = not _wide_arrive(table, b[0], b[1], afters, gains, masks, obs, i)
        terminated[i] = over
        pending[i] = over
