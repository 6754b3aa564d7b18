"""The learning kernels' parameter vector: what each position holds, in one place.

The episode kernels (:mod:`td2048.kernels.episode`) take a learner's numbers as one float64
vector, ``params``, read by these names (``params[ALPHA_SPLIT]``). The generated kernel modules
import the names from here, and Numba compiles a module-level int as a constant, so a read by
name costs what a read by number did. The Python side fills the vector with
:func:`learning_params`.
"""

import numpy as np

ALPHA_SPLIT = 0  # alpha / (tuples x isomorphisms): the share of the TD error each feature weight moves by
LAMBDA = 1  # lambda of the lambda-returns (backward updates): 0 is TD(0), 1 Monte Carlo
NSTEP = 2  # n of n-step returns instead (backward updates); 0: lambda-returns
EXPLORE_KIND = 3  # the exploration schedule: 0 none, 1 const, 2 linear, 3 exp (td2048.schedules.exploration)
EXPLORE_E0 = 4  # its epsilon at the first episode (const: its only one)
EXPLORE_E1 = 5  # linear: its epsilon at the end; exp: the decay rate per episode
EXPLORE_EPISODES = 6  # linear: episodes from E0 to E1; exp: episodes before epsilon drops to 0
FIRST_EPISODE = 7  # the episode count of a call's first episode (the schedule counts episodes)
PROMOTE = 8  # 1.0: a multistage network's new stage starts from the previous stage's weights
RESTARTS = 9  # share of episodes started from a kept board instead of a new game (0: none)
RESTART_CODE = 10  # a new game keeps its first board with a tile code at least this, for restarts
TEACHER_MOVES = 11  # distillation: the share of episodes that follow perfect play's moves (the others the network's)
BACKUP_ALL = 12  # 1.0: expected targets back up every legal move's afterstate of a position played, not only its own
TEACHER_LOSS = 13  # distillation: 0 each move's value toward perfect play's, 1 the regret loss on their ranking
RANK_MOVES = 14  # expected targets: 1.0 also ranks each position's moves by their expected targets (regret loss)
ENDGAME_STARTS = 15  # share of the episodes not restarted that start from an endgame's start (its table given)
RESTART_BESIDE = 16  # restarts: the kept board also holds a second tile of at least this code (0: no second tile)
N_PARAMS = 17

NO_EXPLORATION = (0.0, 0.0, 0.0, 0.0)


def learning_params(alpha_split: float, lam: float = 0.0, nstep: int = 0,
                    explore: tuple[float, float, float, float] = NO_EXPLORATION, first_episode: int = 0,
                    promote: bool = True, restarts: float = 0.0, restart_code: int = 0,
                    teacher_moves: float = 0.0, backup_all: bool = False,
                    teacher_loss: str = "value", rank_moves: bool = False,
                    endgame_starts: float = 0.0, restart_beside: int = 0) -> np.ndarray:
    """The vector the learning kernels read.

    Parameters
    ----------
    alpha_split : float
        alpha / (tuples x isomorphisms).
    lam : float
        Lambda of the lambda-returns.
    nstep : int
        n of n-step returns; 0: lambda-returns.
    explore : tuple of 4 floats
        The exploration schedule as :func:`td2048.schedules.exploration` gives it: (kind, E0, E1 or rate,
        episodes).
    first_episode : int
        The episode count of the first episode played with the vector.
    promote : bool
        Whether a multistage network's new stage starts from the previous stage's weights.
    restarts : float
        Share of episodes started from kept boards.
    restart_code : int
        Tile code whose first board a new game keeps for restarts.
    teacher_moves : float
        Distillation: the share of episodes that follow perfect play's moves.
    backup_all : bool
        Expected targets (forward): back up every legal move's afterstate of each position played.
    teacher_loss : str
        Distillation: ``"value"``, each move's value moves toward perfect play's; ``"regret"``, the regret loss
        on the moves' ranking (td2048.kernels.targets.regret_update).
    rank_moves : bool
        Expected targets (forward): each position's moves are also ranked by their expected targets, the
        regret loss with them in place of perfect play's values.
    endgame_starts : float
        With an endgame's table: the share of the episodes not restarted that start from the endgame's start (its
        fixed tiles in an orientation drawn at random, two new tiles on the free cells).
    restart_beside : int
        Restarts: the kept board is the first that also holds, beside the tile of ``restart_code``, a second
        tile of at least this code; 0: none needed.

    Returns
    -------
    numpy.ndarray
        ``float64[N_PARAMS]``, each number at its named position.
    """
    params = np.zeros(N_PARAMS, np.float64)
    params[ALPHA_SPLIT] = alpha_split
    params[LAMBDA] = lam
    params[NSTEP] = nstep
    params[EXPLORE_KIND], params[EXPLORE_E0], params[EXPLORE_E1], params[EXPLORE_EPISODES] = explore
    params[FIRST_EPISODE] = first_episode
    params[PROMOTE] = float(promote)
    params[RESTARTS] = restarts
    params[RESTART_CODE] = restart_code
    params[TEACHER_MOVES] = teacher_moves
    params[BACKUP_ALL] = float(backup_all)
    params[TEACHER_LOSS] = float(teacher_loss == "regret")
    params[RANK_MOVES] = float(rank_moves)
    params[ENDGAME_STARTS] = endgame_starts
    params[RESTART_BESIDE] = restart_beside
    return params


# the names the generated kernel modules import (td2048.kernels.codegen)
POSITIONS = ("ALPHA_SPLIT", "LAMBDA", "NSTEP", "EXPLORE_KIND", "EXPLORE_E0", "EXPLORE_E1", "EXPLORE_EPISODES",
             "FIRST_EPISODE", "PROMOTE", "RESTARTS", "RESTART_CODE", "TEACHER_MOVES", "BACKUP_ALL",
             "TEACHER_LOSS", "RANK_MOVES", "ENDGAME_STARTS", "RESTART_BESIDE")

__all__ = [*POSITIONS, "N_PARAMS", "NO_EXPLORATION", "POSITIONS", "learning_params"]
