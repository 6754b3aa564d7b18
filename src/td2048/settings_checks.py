"""The rules a training run's settings obey: each option in range, and which options go together.

:meth:`td2048.settings.TrainSettings.validate` runs :func:`check_settings` before anything is allocated or
compiled: a setting that breaks a rule is a :class:`~td2048.errors.TD2048Error` of one line that names its
option. Plain Python, as :mod:`td2048.settings` is: the CLI checks its options without loading Numba.
"""

from __future__ import annotations

import math
import os

from td2048.config import DEFAULT_CLAMP_2584
from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape
from td2048.games.tiles import GAMES
from td2048.schedules import alpha_at, snapshot_interval
from td2048.spec import METHODS, WEIGHT_BITS, format_bytes, parse_stages


def check_settings(settings) -> None:
    """Check every setting of a run (:meth:`td2048.settings.TrainSettings.validate`), and complete the settings
    that follow from others (a 2584 run without a clamp gets the default clamp; ``exact_every`` 1 with ``exact``;
    TC's first rate).

    Parameters
    ----------
    settings : TrainSettings
        The run's settings.

    Raises
    ------
    TD2048Error
        The first setting that is out of range or malformed, in one line naming its option.
    """
    if settings.episodes < 1:
        raise TD2048Error(f"--episodes must be at least 1, not {settings.episodes}")
    if settings.block < 1:
        raise TD2048Error(f"--block must be at least 1, not {settings.block}")
    if settings.threads < 1:
        raise TD2048Error(f"--threads must be at least 1, not {settings.threads}")
    if not (isinstance(settings.workers, int) and settings.workers >= 0):
        raise TD2048Error(f"--workers must be at least 1, not {settings.workers}")
    if not (isinstance(settings.sync_every, (int, float)) and math.isfinite(settings.sync_every)
            and settings.sync_every > 0):
        raise TD2048Error(f"--sync-every must be a positive number of seconds, not {settings.sync_every}")
    snapshot_interval(settings.snapshot_every)  # raises on a bad interval
    settings.time_limit_seconds()  # and on a bad time limit
    alpha_at(settings.alpha_schedule, settings.alpha, 0)  # raises on a bad schedule
    if not (math.isfinite(settings.alpha) and settings.alpha > 0):
        raise TD2048Error(f"--alpha must be a positive number, not {settings.alpha}")
    if settings.seed is not None and settings.seed < 0:
        raise TD2048Error(f"--seed must be >= 0, not {settings.seed}")
    if settings.merge_every is not None and not (isinstance(settings.merge_every, (int, float))
                                             and math.isfinite(settings.merge_every) and settings.merge_every > 0):
        raise TD2048Error(f"--merge-every must be a positive number of seconds, not {settings.merge_every}")
    if settings.method not in METHODS:
        raise TD2048Error(f"--method must be one of {', '.join(METHODS)}, not {settings.method!r}")
    if settings.game not in GAMES:
        raise TD2048Error(f"--game must be one of {', '.join(GAMES)}, not {settings.game!r}")
    if settings.weight_bits not in WEIGHT_BITS:
        raise TD2048Error(f"--weight-bits must be 32 or 16, not {settings.weight_bits!r}")
    settings.board = BoardShape.parse(settings.board).name  # raises on a shape that is not supported
    if settings.exact_every is not None:
        if not (isinstance(settings.exact_every, int) and settings.exact_every >= 1):
            raise TD2048Error(f"--exact-every must be a number of blocks, at least 1, not {settings.exact_every}")
        if settings.exact is None:
            raise TD2048Error("--exact-every sets how often --exact SOLUTION values the network: add --exact")
    elif settings.exact is not None:
        settings.exact_every = 1
    if settings.exact is not None:
        settings.exact = os.fspath(settings.exact)  # a path given as a Path: kept as text in settings.json
    if settings.clamp is None and settings.game == "2584":
        settings.clamp = DEFAULT_CLAMP_2584
    if not (isinstance(settings.optimistic, (int, float)) and math.isfinite(settings.optimistic)
            and settings.optimistic >= 0):
        raise TD2048Error(f"--optimistic must be a value >= 0 (the score a board is first thought worth), "
                          f"not {settings.optimistic}")
    if settings.optimistic > 0 and settings.init is not None:
        raise TD2048Error("--optimistic sets the starting weights; with --init the model's weights are the start")
    parse_stages(settings.stages, settings.game)  # raises on bad thresholds
    if settings.pretrain is not None:
        _check_pretrain(settings)
    settings.tc_start()  # raises on a bad --tc-from
    if not (isinstance(settings.tc_alpha, (int, float)) and math.isfinite(settings.tc_alpha) and settings.tc_alpha > 0):
        raise TD2048Error(f"--tc-alpha must be a positive number, not {settings.tc_alpha}")
    if settings.tc_start_rate is None:
        settings.tc_start_rate = settings.default_tc_start_rate()
    settings.learning_options()  # raises on an option out of range (each is checked as the value is made), or on a
    # bad --restart-tile (restart_code)
    _check_combinations(settings)
    if settings.network is not None:
        settings.spec().check_memory(settings.memory_limit)
    if (settings.tc_from is not None and settings.network is not None
            and settings.spec().tc_nbytes() > settings.memory_limit):
        raise TD2048Error(f"--tc needs {format_bytes(settings.spec().tc_nbytes())} for the weights and their "
                          f"accumulators, over the memory limit of {format_bytes(settings.memory_limit)} "
                          "(raise it with --memory-limit)")
    if settings.tc_records and settings.network is not None and settings.spec().tc_nbytes(True) > settings.memory_limit:
        raise TD2048Error(f"--tc-records needs {format_bytes(settings.spec().tc_nbytes(True))} for the weights, "
                          f"their accumulators and the records, over the memory limit of "
                          f"{format_bytes(settings.memory_limit)} (raise it with --memory-limit)")

def _check_combinations(settings) -> None:
    """Check the settings that go together, each of them in range (:func:`check_settings`)."""
    if settings.weight_bits == 16:
        refused = [option for option, given in (
            ("--game 2584", settings.game != "2048"), ("--method state", settings.method != "afterstate"),
            ("--tc/--tc-from", settings.tc_from is not None), ("--merge-every", settings.merge_every is not None),
            ("--workers (Ray)", settings.workers > 0), ("--pretrain", settings.pretrain is not None)) if given]
        if refused:
            raise TD2048Error(f"--weight-bits 16 is for TD on 2048's afterstate values, on one table: not with "
                              f"{', '.join(refused)}")
    if settings.tc_start_rate != 1 and settings.tc_from is None:
        raise TD2048Error("--tc-start-rate sets where TC's rates start: add --tc or --tc-from")
    if settings.tc_records and settings.tc_from is None:
        raise TD2048Error("--tc-records sets how TC keeps its accumulators: add --tc or --tc-from")
    if settings.lam > 0 and settings.nstep > 0:
        raise TD2048Error("--lambda and --nstep are two kinds of return: give one of them")
    if settings.target in ("expected-all", "ranked") and settings.update != "forward":
        raise TD2048Error(f"--target {settings.target} backs up each position's moves as it is played: it needs "
                          "--update forward")
    if settings.target != "sample" and (settings.lam > 0 or settings.nstep > 1):
        raise TD2048Error(f"--target {settings.target} looks one move ahead over every new tile: it takes no "
                          "--lambda or --nstep")
    if settings.teacher is not None:
        settings.teacher = os.fspath(settings.teacher)
        if settings.target != "sample" or settings.lam > 0 or settings.nstep > 1:
            raise TD2048Error("--teacher gives every position its exact value: it takes no --target, --lambda "
                              "or --nstep")
        if settings.explore != "none" or settings.restarts > 0:
            raise TD2048Error("--teacher chooses the moves itself (--teacher-moves): it takes no --explore or "
                              "--restarts")
        if settings.workers:
            raise TD2048Error("--teacher learns in this process: it takes no --ray")
        if settings.teacher_loss == "regret" and settings.method != "afterstate":
            raise TD2048Error("--teacher-loss regret ranks the moves' afterstates: it needs afterstate values")
    elif settings.teacher_loss != "value":
        raise TD2048Error("--teacher-loss needs --teacher")
    if settings.endgame is not None:
        settings.endgame = os.fspath(settings.endgame)
        if settings.teacher is not None:
            raise TD2048Error("--endgame plays a table's moves in TD's games; --teacher distils a whole "
                              "solution: give one of them")
        if settings.workers:
            raise TD2048Error("--endgame learns in this process: it takes no --ray")
        if settings.game != "2048":
            raise TD2048Error("--endgame: endgame tables are of 2048, the run trains 2584")
    elif settings.endgame_starts:
        raise TD2048Error("--endgame-starts starts episodes from an endgame's start: it needs --endgame")
    _check_start_over(settings)
    if settings.promote_at is not None:
        if not (isinstance(settings.promote_at, int) and 1 <= settings.promote_at < settings.episodes):
            raise TD2048Error(f"--promote-at must be an episode within the run's {settings.episodes}, not "
                              f"{settings.promote_at}")
        if not settings.stages:
            raise TD2048Error("--promote-at copies each stage into the next: it needs --stages")
        if settings.workers:
            raise TD2048Error("--promote-at copies the stages in this process: it takes no --ray")
    if (settings.lam > 0 or settings.nstep > 1) and settings.update != "backward":
        raise TD2048Error("--lambda and --nstep need --update backward (returns are computed at the episode's end)")

def _check_start_over(settings) -> None:
    """Check the start checks against the rest of the run (:func:`_check_combinations`); each of their fields
    is checked as :meth:`~td2048.settings.TrainSettings.start_checks` makes them."""
    checks = settings.start_checks()
    if not checks:
        return
    if settings.start_over_corner_below is not None and not settings.restarts > 0:
        raise TD2048Error("--start-over-corner-below reads the boards kept for restarts (each game's first "
                          "board with the restart tile): add --restarts P")
    for check, episode in checks.checks().items():
        option = "corner-below" if check == "corner" else check
        if episode >= settings.episodes:
            raise TD2048Error(f"--start-over-{option} checks a start at episode {episode}, after the run's "
                              f"{settings.episodes} episodes: check it earlier, or train longer")
    if settings.init is not None or settings.pretrain is not None:
        raise TD2048Error("a start check starts over from fresh weights; with --init or --pretrain the "
                          "start is trained weights: leave one of them out")
    if settings.workers:
        raise TD2048Error("a start check learns in this process: it takes no --ray")


def _check_pretrain(settings) -> None:
    """Check a run that starts from a pretrained network (:func:`check_settings`)."""
    settings.pretrain_plan()
    for given, option in ((settings.init, "--init"), (settings.optimistic, "--optimistic"),
                          (settings.stages, "--stages"), (settings.teacher, "--teacher"), (settings.workers, "--ray")):
        if given:
            raise TD2048Error(f"--pretrain sets the starting weights from a pretrained network: it takes no "
                              f"{option}")
    settings.pretrain_settings()  # raises on a network that does not fit the board or the memory limit
    if settings.network is not None:
        spec = settings.spec()
        if not spec.one_tuple:
            raise TD2048Error(f"--pretrain starts a network of one tuple (such as the whole board, "
                              f"{''.join(f'{c:x}' for c in range(spec.board.n_cells))}) from a smaller one's "
                              f"values; {spec.name} is not one")
