"""The chance node of the solver: the new tile after a move.

After a move the game puts a new tile on one of the afterstate's empty cells, each cell equally likely: the
small tile (code 1: a 2 in 2048, a 1 in 2584) with probability :data:`P_SMALL` (0.9), else the big one (code 2)
with :data:`P_BIG` (0.1).
"""

from __future__ import annotations

from td2048.games.game2048 import P_FOUR

P_BIG = P_FOUR  # the new tile is code 2 with the games' p (0.1, the same in 2584), else code 1
P_SMALL = 1.0 - P_BIG
