"""How a learner learns from every episode of a run: one value (:class:`LearningOptions`), made once and passed on.

:meth:`td2048.settings.TrainSettings.learning_options` makes it from a run's settings (``td2048 bench`` from its own
options), and every runner takes it as it is: the threads' :class:`td2048.learn.Learner`, Ray's learner and its
workers (:mod:`td2048.distributed.ray_train`), :func:`td2048.bench.benchmark`. Plain Python: the CLI checks the
options here without loading Numba.
"""

from __future__ import annotations

from dataclasses import dataclass

from td2048.errors import TD2048Error
from td2048.schedules import exploration

UPDATE_MODES = ("backward", "forward")
TARGETS = ("sample", "expected", "expected-all", "ranked")
"""What an update moves V toward (``--target``): ``sample``, the next move actually played (TD(0) and its
returns); ``expected``, the mean over every new tile, with its probability, of the best move's r + V;
``expected-all``, the same, and for every legal move's afterstate of each position played, not only the
played one's (``--update forward``)."""
TEACHER_LOSSES = ("value", "regret")


@dataclass(frozen=True)
class LearningOptions:
    """How a learner learns from every episode of a run: one value, made once and passed on unchanged.

    :meth:`td2048.settings.TrainSettings.learning_options` makes it from a run's settings; every runner takes it
    as it is: :meth:`td2048.learn.Learner.run` (threads), :meth:`td2048.distributed.ray_train.RayLearner.run` and
    its workers (Ray), :func:`td2048.bench.benchmark`. What changes from block to block (the learning rate, the
    block's first episode, the TC phase) is an argument of each call, not an option. Each field is checked here,
    as the value is made; which fields a run may combine is :meth:`td2048.settings.TrainSettings.validate`'s to
    check.

    Raises
    ------
    TD2048Error
        When a field is out of range or malformed, in one line naming its option.
    """

    update: str = "backward"
    """``"backward"``: the whole episode first, then updates from its last afterstate; ``"forward"``: online."""
    lam: float = 0.0
    """Lambda of the lambda-returns (backward updates): 0 is TD(0), 1 Monte Carlo."""
    nstep: int = 0
    """n of n-step returns instead (backward updates); 0: lambda-returns."""
    explore: str = "none"
    """Epsilon-greedy schedule (:func:`exploration`), its episodes counted from the run's first."""
    promote: bool = True
    """Multistage: a stage entered for the first time starts from the previous stage's weights."""
    restarts: float = 0.0
    """Share of episodes started from boards kept from earlier games, in [0, 1)."""
    restart_code: int = 0
    """Code of the tile whose first board each game keeps for restarts."""
    restart_beside: int = 0
    """Restarts: the kept board also holds a second tile of at least this code (0: none needed)."""
    tc_start_rate: float = 1.0
    """Each weight's first TC rate, in (0, 1], where TC's accumulators are made."""
    target: str = "sample"
    """What an update moves V toward, one of :data:`TARGETS`."""
    teacher_moves: float = 0.5
    """Distillation: the share of episodes that follow perfect play's moves, in [0, 1]."""
    teacher_loss: str = "value"
    """Distillation: what the network learns from the solution, one of :data:`TEACHER_LOSSES`."""
    endgame_starts: float = 0.0
    """With an endgame's table: the share of the episodes not restarted that start from its start, in [0, 1)."""

    def __post_init__(self) -> None:
        if not (isinstance(self.lam, (int, float)) and 0.0 <= self.lam <= 1.0):
            raise TD2048Error(f"--lambda must be in [0, 1], not {self.lam}")
        if self.nstep < 0:
            raise TD2048Error(f"--nstep must be at least 1, not {self.nstep}")
        if self.target not in TARGETS:
            raise TD2048Error(f"--target must be one of {', '.join(TARGETS)}, not {self.target!r}")
        if not (isinstance(self.teacher_moves, (int, float)) and 0.0 <= self.teacher_moves <= 1.0):
            raise TD2048Error(f"--teacher-moves must be a share of episodes in [0, 1], not {self.teacher_moves}")
        if self.teacher_loss not in TEACHER_LOSSES:
            raise TD2048Error(f"--teacher-loss must be one of {', '.join(TEACHER_LOSSES)}, not {self.teacher_loss!r}")
        exploration(self.explore)  # raises on a bad schedule
        if self.update not in UPDATE_MODES:
            raise TD2048Error(f"--update must be one of {', '.join(UPDATE_MODES)}, not {self.update!r}")
        if not (isinstance(self.tc_start_rate, (int, float)) and 0 < self.tc_start_rate <= 1):
            raise TD2048Error(f"--tc-start-rate must be a rate in (0, 1], not {self.tc_start_rate}")
        if not (isinstance(self.restarts, (int, float)) and 0.0 <= self.restarts < 1.0):
            raise TD2048Error(f"--restarts must be a share of episodes in [0, 1), not {self.restarts}")
        if not (isinstance(self.endgame_starts, (int, float)) and 0.0 <= self.endgame_starts < 1.0):
            raise TD2048Error(f"--endgame-starts must be a share of episodes in [0, 1), not {self.endgame_starts}")
