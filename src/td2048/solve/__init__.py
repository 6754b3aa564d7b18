"""Exact perfect play on small boards (``td2048 solve``): every reachable position's value.

Positions (the player to move, after a new tile) are enumerated forward from the start, layer by layer of
tile sum (:mod:`td2048.solve.layers`), then valued backward from the largest sum
(:mod:`td2048.solve.induction`), for two aims: the expected score, and for each tile the probability of
ever holding it (each its own optimal play). :mod:`td2048.solve.solution` holds the result and its file;
:mod:`td2048.solve.policy` measures any policy against it exactly, and :mod:`td2048.solve.distribution` gives
the exact distribution of its final score.
"""

from td2048.solve.distribution import ScoreDistribution
from td2048.solve.estimate import estimate_bytes, estimate_positions
from td2048.solve.induction import solve
from td2048.solve.policy import PERFECT_PLAY, PolicyValue, agent_policy, exact_policy_value
from td2048.solve.solution import Solution, load_solution

__all__ = ["PERFECT_PLAY", "PolicyValue", "ScoreDistribution", "Solution", "agent_policy", "estimate_bytes",
           "estimate_positions", "exact_policy_value", "load_solution", "solve"]
