"""Exact perfect play on small boards (``td2048 solve``): every reachable position's value.

Positions (the player to move, after a new tile) are enumerated forward from the start, layer by layer of
tile sum (:mod:`td2048.solve.layers`), then valued backward from the largest sum
(:mod:`td2048.solve.induction`), for two aims: the expected score, and for each tile the probability of
ever holding it (each its own optimal play). :mod:`td2048.solve.solution` holds the result and its file;
:mod:`td2048.solve.policy` measures any policy against it exactly.
"""

from td2048.solve.estimate import estimate_bytes, estimate_positions
from td2048.solve.induction import solve
from td2048.solve.policy import PolicyValue, agent_policy, exact_policy_value
from td2048.solve.solution import Solution, load_solution

__all__ = ["PolicyValue", "Solution", "agent_policy", "estimate_bytes", "estimate_positions", "exact_policy_value",
           "load_solution", "solve"]
