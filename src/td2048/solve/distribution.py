"""The exact distribution of a player's final score on a solved board (``--score-at-least``).

The score is not a function of the final board, but nearly: every tile on it was built by merges that
scored a fixed amount (2048: the tile 2^k scores (k - 1) 2^k from twos), less the big tiles that were dealt
rather than merged (each 4 dealt in 2048, each 2 in 2584, scores its own merge's worth less). So with F
the number of big tiles dealt in a game, its score is ``gain(final board) - gain(big tile) * F``, and one
small count per position carries the whole distribution: the forward pass of a policy's exact valuation
(:func:`td2048.solve.exact_policy_value`) propagates, for each position, the probability of meeting it
with each F, over a window of F that follows the layer (F's spread is a few units; columns whose total
probability is below :data:`NEGLIGIBLE` are dropped, and what they held is counted in ``dropped``). Each
position with no legal move adds its F-probabilities to the score they make.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from td2048.config import njit
from td2048.games.tiles import tile_value
from td2048.solve.chance import P_BIG, P_SMALL, chance_children, chance_scratch, child_rows
from td2048.solve.positions import key_codes, slide
from td2048.solve.sets import build_index

NEGLIGIBLE = 1e-20  # a window column of F holding less probability than this over a whole layer is dropped


@dataclass
class ScoreDistribution:
    """The probability of each final score of a game under one policy.

    Attributes
    ----------
    scores : numpy.ndarray
        ``int64``, the scores with a probability above zero, increasing.
    probabilities : numpy.ndarray
        Their probabilities (summing to 1 less ``dropped``).
    dropped : float
        Probability left out with columns of F too unlikely to keep (below 1e-12 on the boards solved).
    """

    scores: np.ndarray
    probabilities: np.ndarray
    dropped: float = 0.0

    @property
    def mean(self) -> float:
        """The expected score (the policy's expected score, to rounding)."""
        return float(self.scores @ self.probabilities)

    @property
    def median(self) -> int:
        """The least score whose cumulative probability reaches one half."""
        cumulative = np.cumsum(self.probabilities)
        return int(self.scores[min(int(np.searchsorted(cumulative, 0.5 * cumulative[-1])), len(self.scores) - 1)])

    @property
    def mode(self) -> int:
        """The most likely score (the least of equally likely ones)."""
        return int(self.scores[int(np.argmax(self.probabilities))])

    def at_least(self, score: float) -> float:
        """The probability of a final score of at least ``score``, within [0, 1]."""
        return min(max(float(self.probabilities[self.scores >= score].sum()), 0.0), 1.0)

    def to_json(self, thresholds=()) -> dict:
        """``score_median``, ``score_mode`` and ``p_score_at_least`` (keyed by each threshold, as a string)."""
        return {"score_median": self.median, "score_mode": self.mode,
                "p_score_at_least": {_label(x): self.at_least(x) for x in thresholds}}

    def lines(self, thresholds=()) -> list[str]:
        """The figures as lines of text."""
        out = [f"score: median {self.median:,}, most likely {self.mode:,}"]
        out += [f"  P(score >= {_label(x)}) = {self.at_least(x):.6f}" for x in thresholds]
        return out


def _label(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def merge_gains(game: str, top_code: int) -> np.ndarray:
    """``int64[top_code + 1]``: the score a tile of each code made when built by merges from the small tile
    (2048: the tile 2^k, (k - 1) 2^k; 2584: its value plus the gains of the two tiles it was merged from)."""
    gains = np.zeros(max(top_code, 2) + 1, np.int64)
    for code in range(2, len(gains)):
        parts = (code - 1, code - 1) if game == "2048" or code == 2 else (code - 1, code - 2)
        gains[code] = tile_value(game, code) + gains[parts[0]] + gains[parts[1]]
    return gains


@njit
def spread_layer(keys, moves, mass, f0, symmetric, wide, table4, table5, vertical, frame, n, perms, col_shift,
                 row_shift, square, shifts, keys_small, index_small, mass_small, f0_small, keys_big, index_big,
                 mass_big, f0_big, gains, big_gain, hist):
    """One layer's step: each position's probabilities by F (``mass[s, j]``: F = f0 + j) go to the children of
    its move (a small tile keeps F, a big one adds 1), or, for a position with no legal move (``moves[s] < 0``),
    to the score it ends with (``hist[score]``). Returns the number of children not found."""
    codes = np.zeros(16, np.int64)
    images, children, rows = chance_scratch()
    width = mass.shape[1]
    missing = 0
    for s in range(keys.shape[0]):
        key = keys[s]
        if moves[s] < 0:
            key_codes(key, wide, frame, n, codes)
            base = 0
            for i in range(n):
                base += gains[codes[i]]
            for j in range(width):
                if mass[s, j] != 0.0:
                    hist[base - big_gain * (f0 + j)] += mass[s, j]
            continue
        lo, hi, reward, legal = slide(key, moves[s], wide, table4, table5, vertical, frame, n)
        empty = chance_children(lo, hi, symmetric, wide, frame, n, perms, col_shift, row_shift, square, shifts, images,
                                children)
        found = child_rows(children, empty, keys_small, index_small, keys_big, index_big, rows)
        missing += empty - found
        p_small = P_SMALL / empty
        p_big = P_BIG / empty
        at_small = f0 - f0_small
        at_big = f0 + 1 - f0_big
        for k in range(found):
            i1 = rows[0, k]
            i2 = rows[1, k]
            for j in range(width):
                p = mass[s, j]
                if p != 0.0:
                    mass_small[i1, at_small + j] += p_small * p
                    mass_big[i2, at_big + j] += p_big * p
    return missing


def score_distribution(rules, sums, layers, layer_moves, symmetric: bool, start, top_code: int) -> ScoreDistribution:
    """The distribution of the final score of a policy, from its layers (increasing tile sums), their keys and
    its move on each (-1 where none is legal), and the start (tile sum: (keys, probabilities)): see the module."""
    from td2048.errors import TD2048Error

    small_step, big_step = rules.tile_steps
    gains = merge_gains(rules.game, top_code)
    big_gain = int(gains[2])
    hist = np.zeros(int(gains[top_code]) * rules.n + 1, np.float64)
    index = {s: i for i, s in enumerate(sums)}
    windows: dict[int, tuple[int, np.ndarray]] = {}  # layer: (F of column 0, probabilities [positions, columns])

    def window(i, lo, hi):
        """Layer i's probabilities over F in at least [lo, hi), widened (copied) where needed."""
        have = windows.get(i)
        if have is None:
            windows[i] = (lo, np.zeros((len(layers[i]), hi - lo)))
            return windows[i]
        f0, mass = have
        if f0 <= lo and f0 + mass.shape[1] >= hi:
            return have
        new0, new1 = min(f0, lo), max(f0 + mass.shape[1], hi)
        wider = np.zeros((mass.shape[0], new1 - new0))
        wider[:, f0 - new0:f0 - new0 + mass.shape[1]] = mass
        windows[i] = (new0, wider)
        return windows[i]

    for s, (keys, probs) in start.items():
        i = index[s]
        fours = (rules.codes_of(keys) == 2).sum(axis=1)  # the big tiles dealt at the start
        for f in np.unique(fours):
            f0, mass = window(i, int(f), int(f) + 1)
            rows = np.searchsorted(layers[i], keys[fours == f])
            np.add.at(mass, (rows, int(f) - f0), probs[fours == f])
    dropped = 0.0
    nothing = (np.zeros(0, np.uint64), np.zeros((0, 1)))
    indexes: dict[int, np.ndarray] = {}

    def indexed(i):
        if i not in indexes:
            indexes[i] = build_index(layers[i])
        return indexes[i]
    for i, s in enumerate(sums):
        f0, mass = windows.pop(i, (0, np.zeros((len(layers[i]), 1))))
        column = mass.sum(axis=0)
        kept = np.flatnonzero(column >= NEGLIGIBLE)
        if len(kept) == 0:
            dropped += float(column.sum())
            continue
        first, last = int(kept[0]), int(kept[-1]) + 1
        dropped += float(column[:first].sum() + column[last:].sum())
        mass = np.ascontiguousarray(mass[:, first:last])
        f0 += first
        width = mass.shape[1]
        ahead = []
        for step, shift in ((small_step, 0), (big_step, 1)):
            j = index.get(s + step)
            if j is None:
                ahead.append((nothing[0], build_index(nothing[0]), nothing[1], 0))
            else:
                g0, g = window(j, f0 + shift, f0 + shift + width)
                ahead.append((layers[j], indexed(j), g, g0))
        indexes.pop(i, None)
        missing = spread_layer(layers[i], layer_moves[i], mass, f0, symmetric, *rules.args, rules.shifts, *ahead[0],
                               *ahead[1], gains, big_gain, hist)
        if missing:  # pragma: no cover - layers inconsistent with their rules
            raise TD2048Error(f"the score's distribution lost {missing} children at tile sum {s}")
    scores = np.flatnonzero(hist > 0)
    return ScoreDistribution(scores.astype(np.int64), hist[scores], dropped)
