"""Training a network block by block: the blocks of a run, and :func:`train`, a whole run in memory.

:func:`train_blocks` takes a learner (a :class:`td2048.learn.Learner`, or what stands for one, such as
:class:`td2048.distributed.ray_train.RayLearner`) from one episode count to the run's last, a block a call: each
block gets its learning rate (alpha's schedule, or TC's meta rate from the episode where TC begins, where a block
ends), the run's :class:`~td2048.learning_options.LearningOptions`, and, for distillation, the teacher that the caller
opened (:func:`open_solution`). :func:`train` is the Python API's run in memory; ``td2048 train`` goes through
:mod:`td2048.run`, which adds the run directory, snapshots and resume.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from td2048.errors import TD2048Error
from td2048.learn import Learner
from td2048.network import Network
from td2048.schedules import alpha_at
from td2048.settings import TrainSettings
from td2048.stats import BlockStats
from td2048.teacher import teacher_arrays


def open_solution(settings: TrainSettings, board: str | None = None, option: str = "exact"):
    """The solution that ``settings.exact`` (or ``settings.teacher``) names, opened and checked against the run's
    board and game.

    Parameters
    ----------
    settings : TrainSettings
        The run's settings (checked).
    board : str or None
        The run's board, when it is not yet ``settings.board`` (a new run from ``--init``'s model); None:
        ``settings.board``.
    option : str
        ``"exact"`` (the solution the run is valued against), ``"teacher"`` (distillation's) or ``"endgame"``
        (the endgame's table that plays in the training games).

    Returns
    -------
    td2048.solve.Solution or None
        The solution, memory-mapped, its checksum verified; None when the setting is None.

    Raises
    ------
    TD2048Error
        In one line, for a file that cannot be read, is not a solution, is truncated or altered, or solves
        another board or game than the run's.
    """
    path = getattr(settings, option)
    if path is None:
        return None
    from td2048.solve import load_solution  # here: a run without a solution never loads the solver

    solution = load_solution(path, endgame=option == "endgame")
    board = board or settings.board
    if solution.board.name != board or solution.game != settings.game:
        raise TD2048Error(f"--{option} {path} solves {solution.game} on {solution.board.name}, but the run "
                          f"trains {settings.game} on {board}")
    return solution


def train(settings: TrainSettings, network: Network | None = None,
          on_block: Callable[[BlockStats], None] | None = None) -> tuple[Network, list[BlockStats]]:
    """Train a network in memory, block by block.

    (``td2048 train`` goes through :mod:`td2048.run`, which adds the run directory, snapshots and resume.)

    Parameters
    ----------
    settings : TrainSettings
        What to train and how (checked here; a seed of None is drawn and set).
    network : Network or None
        The network to train; None: a new one from the settings (with ``settings.pretrain``, started from the
        pretrained network's values, :meth:`td2048.network.Network.start_from`).
    on_block : callable or None
        Called with each block's statistics as it ends (the pretraining's first).

    Returns
    -------
    tuple of (Network, list of BlockStats)
        The trained network and every block's statistics (the pretraining's first; with
        a start check (``settings.start_checks()``), the blocks of the starts thrown away too, each with
        ``extra["start"]``).

    Raises
    ------
    TD2048Error
        On settings that make no run, or that ask for Ray workers or exact valuations, or a teacher's solution
        that cannot be read or solves another board or game.
    """
    settings.validate()
    if settings.workers:
        raise TD2048Error("train() learns in this process: for Ray workers use `td2048 train --ray` (or "
                          "td2048.distributed.ray_train.RayLearner with td2048.training.train_blocks)")
    if settings.exact:
        raise TD2048Error("train() keeps no log to value into: for exact valuations use `td2048 train --exact` "
                          "(or td2048.run.exact_figures in on_block)")
    teacher = open_solution(settings, None if network is None else network.spec.board.name, "teacher")
    endgame = open_solution(settings, None if network is None else network.spec.board.name, "endgame")
    if settings.seed is None:
        settings.seed = int(np.random.SeedSequence().entropy % (2**63))
    stats = []
    if network is None:
        network = settings.new_network()
        if settings.pretrain is not None:  # first the smaller network, then this one from its values
            source, stats = train(settings.pretrain_settings(), on_block=on_block)
            network.start_from(source)
    learner = Learner(network, settings.seed, settings.threads, merge_seconds=settings.merge_every,
                      memory_limit=settings.memory_limit, tc_records=settings.tc_records)
    for block in train_blocks(settings, learner, 0, teacher, endgame):
        stats.append(block)
        if on_block is not None:
            on_block(block)
    learner.merge()
    return network, stats


def train_blocks(settings: TrainSettings, learner: Learner, done: int, teacher=None,
                 endgame=None, start: int = 1, seconds: float = 0.0, built: bool = False) -> Iterator[BlockStats]:
    """Train from ``done`` episodes up to ``settings.episodes``, block by block.

    Parameters
    ----------
    settings : TrainSettings
        The run's settings (checked).
    learner : Learner
        The learner of the run's network, its random state where the run is.
    done : int
        Episodes already trained.
    teacher : td2048.solve.Solution or None
        ``settings.teacher``'s solution, opened by the caller (:func:`open_solution`); None without a teacher.
    endgame : td2048.solve.Solution or None
        ``settings.endgame``'s table, opened by the caller (:func:`open_solution`); None without one. The log's
        ``endgame`` field of each block: the moves the table chose, the episodes it played in, and those started
        from its start.
    start : int
        With a start check (``settings.start_checks()``): the start the run is in (1 the first; a resumed run's
        own).
    seconds : float
        Training time already spent (a resumed run's blocks', the starts thrown away included), for
        ``settings.time_limit``: no block starts once the limit is reached, and the block that would pass it is
        cut to the episodes that the pace of the block before fits into the time left.
    built : bool
        With ``settings.start_over_without``: whether a game of the start's episodes so far built its tile (a
        resumed run's, from its log).

    Yields
    ------
    BlockStats
        Each block's statistics as it ends. With a start check, each block's ``extra["start"]`` is its start's
        number, and the block at one of ``settings.start_checks().episodes()`` that fails a check made there
        (:meth:`td2048.start_over.StartChecks.fails`; in a start before the ``settings.max_starts``-th) has
        ``extra["start_over"]``, what the start fell short of:
        when it is yielded, the learner has started over (:meth:`Learner.start_over`), and the next blocks
        count from episode 0. With ``settings.promote_at``, the block that ends there (in a start kept past it)
        has ``extra["promoted"]`` True: when it is yielded, the stages have been promoted
        (:meth:`Learner.promote_stages`). With ``settings.time_limit``, the block cut to the time left, the last,
        has ``extra["time_limit"]`` True.

    Raises
    ------
    TD2048Error
        When the settings name a teacher or an endgame's table and none is given.
    """
    tc_start = settings.tc_start()
    options = settings.learning_options()
    if settings.teacher is not None and teacher is None:
        raise TD2048Error(f"the run distils from {settings.teacher}: open it (td2048.training.open_solution) "
                          "and pass it as the teacher")
    if settings.endgame is not None and endgame is None:
        raise TD2048Error(f"the run plays the table {settings.endgame}: open it (td2048.training.open_solution("
                          "settings, option='endgame')) and pass it as the endgame")
    if teacher is not None:  # the arrays through which the kernels read perfect play's values
        teacher = teacher_arrays(teacher, learner.network.board, learner.network.game)
    if endgame is not None:
        endgame = learner.endgame_of(endgame)
    start_checks = settings.start_checks()
    checks = start_checks.episodes()
    tile = None if settings.start_over_without is None else str(settings.start_over_without)
    pace, last = None, False  # episodes a second, of the block before; the block cut to the time left, the last
    while done < settings.episodes and settings.time_left(seconds) != 0.0 and not last:
        n = min(settings.block, settings.episodes - done)
        left = settings.time_left(seconds)
        if left is not None and pace is not None and left * pace < n:
            n, last = max(1, int(left * pace)), True
        tc = tc_start is not None and done >= tc_start
        if tc_start is not None and done < tc_start:
            n = min(n, tc_start - done)  # a block ends where TC begins
        check = next((episode for episode in checks if episode > done), None)
        if check is not None:
            n = min(n, check - done)  # and where a start is checked
        if settings.promote_at is not None and done < settings.promote_at:
            n = min(n, settings.promote_at - done)  # and where the stages are promoted
        alpha = settings.tc_alpha if tc else alpha_at(settings.alpha_schedule, settings.alpha, done)
        if teacher is None and endgame is None:
            block = learner.run(n, alpha, options, done, tc)
        else:  # on this process's learner alone (TrainSettings.validate keeps --teacher and --endgame off Ray)
            block = learner.run(n, alpha, options, done, tc, teacher, endgame)
        done += n
        seconds += block.seconds
        pace = n / block.seconds if block.seconds > 0 else None
        extra = {"alpha": alpha, **(block.info or {})}
        if tc:
            extra["tc"] = True
        natural = slice(None)
        if settings.restarts > 0 or settings.endgame_starts > 0:  # the statistics: of the games played from the start
            natural = block.restarted == 0
            extra["restarted"] = int(block.restarted.sum())
        if checks:
            extra["start"] = start
        if last:
            extra["time_limit"] = True  # the block cut to the time left: the run's last
        stats = BlockStats.from_block(done, block.scores[natural], block.max_codes[natural], block.moves,
                                      block.seconds, game=learner.network.game, **extra)
        built = built or (tile is not None and stats.reach.get(tile, 0.0) > 0)
        why = None
        if done in checks and start < settings.max_starts:
            why = start_checks.fails(done, stats.avg, built, stats.extra.get("corner"))
        if why is not None:
            stats.extra["start_over"] = why
            learner.start_over(settings.optimistic)
            done, start, built = 0, start + 1, False
        elif done == settings.promote_at:
            learner.promote_stages(settings.promoted_tc_rate())
            stats.extra["promoted"] = True
        yield stats
