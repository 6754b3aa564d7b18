"""What ``td2048 train`` says about a run: the line that opens its block table, and the next steps at its end."""

from __future__ import annotations

import shlex
from pathlib import Path

from td2048.cli import invoked_as
from td2048.io.rundir import PRETRAIN
from td2048.version import __version__


def run_header(training, verb: str) -> str:
    """The line that opens a run's block table: what is trained, how, and where.

    Parameters
    ----------
    training : td2048.run.TrainingRun
        The run (its settings, directory, network, learner and start).
    verb : str
        What the run does now: ``"train"``, ``"resuming at episode N"``, ``"pretraining"``, ...

    Returns
    -------
    str
        One comment line (``# td2048 ...``) with the network, the method and its options, the seed, the threads
        or Ray workers, the episodes and the run directory.
    """
    settings, out = training.settings, training.directory
    methods = "".join([
        f", optimistic {settings.optimistic:g}" if settings.optimistic else "",
        "" if settings.tc_start() is None else f", TC (alpha {settings.tc_alpha}"
        + ("" if settings.tc_start_rate == 1 else f", starting at rate {settings.tc_start_rate:g}")
        + (", on records" if settings.tc_records and not settings.workers else "")
        + f") from episode {settings.tc_start()}",
        f", restarts {settings.restarts:g}" if settings.restarts else "",
        f" from the first {settings.restart_tile}" if settings.restarts and settings.restart_tile else "",
        f" with a {settings.restart_beside} beside" if settings.restarts and settings.restart_beside else "",
        ", new stages fresh (no promotion)" if settings.stages and not settings.promote
        and settings.promote_at is None else "",
        f", stages learned apart until episode {settings.promote_at}, then each promoted from the one before"
        if settings.promote_at is not None else ""])
    if settings.pretrain is not None:
        network, episodes = settings.pretrain_plan()
        methods += f", started from network {network} after {episodes} episodes of TD(0) ({out / PRETRAIN})"
    if settings.time_limit is not None:
        methods += f", at most {settings.time_limit} of training"
    if checks := settings.start_checks():
        methods += f", {checks.text()} (start {training.start} of at most {settings.max_starts})"
    if settings.exact is not None:
        every = "block" if settings.exact_every == 1 else f"{settings.exact_every} blocks"
        methods += f", valued exactly against {settings.exact} every {every}"
    where = f"{settings.threads} thread(s)"
    if settings.threads > 1 and settings.merge_every is not None and settings.tc_start() != 0:
        where += f" (TD on copies merged every {settings.merge_every:g} s)"
    if settings.workers:
        where = (f"{settings.workers} Ray worker(s) of {where} on {len(set(training.learner.nodes))} node(s), "
                 f"synced every {settings.sync_every:g} s")
    targets = {"expected": ", expected targets", "expected-all": ", expected targets for every move",
               "ranked": ", expected targets, the moves ranked by them"}
    updates = f"{settings.update} updates" + targets.get(settings.target, "")
    if settings.nstep:
        updates += f" of {settings.nstep}-step returns"
    elif settings.lam:
        updates += f" of lambda-returns (lambda {settings.lam:g})"
    if settings.alpha_schedule != "const":
        updates += f", alpha scheduled {settings.alpha_schedule}"
    if settings.weight_bits == 16:
        updates += ", 16-bit weights"
    if settings.explore != "none":
        updates += f", exploring {settings.explore}"
    if settings.teacher is not None:
        loss = ", the regret loss" if settings.teacher_loss == "regret" else ""
        updates = (f"distilled from {settings.teacher}{loss} ({settings.teacher_moves:g} of the episodes perfect "
                   "play's)")
    if settings.endgame is not None:
        updates += f", the endgame's table {settings.endgame} playing its endgame"
        if settings.endgame_starts:
            updates += f" ({settings.endgame_starts:g} of the episodes from its start)"
    return (f"# td2048 {__version__} {verb} ({settings.game}): {training.network.spec.describe(settings.game)}; "
            f"alpha {settings.alpha}, {settings.method} values, {updates}{methods}, seed {settings.seed}, "
            f"{where}, {settings.episodes} episodes -> {out}")


def next_steps(model: Path, run_dir: Path, plot: bool = True) -> list[str]:
    """The lines printed at the end of a run: what to do with its model, as commands to paste.

    Parameters
    ----------
    model : pathlib.Path
        The run's model file (``DIR/model.td2048``), as it was printed.
    run_dir : pathlib.Path
        The run directory.
    plot : bool
        Whether to suggest ``td2048 plot`` (not when the run could not draw its curves).

    Returns
    -------
    list of str
        Comment lines (``# next: ...``), each a command with what it does; paths quoted for the shell
        where they need it. The commands play the model's own game (2048 or 2584) and cells, and call td2048
        as it was called (:func:`td2048.cli.invoked_as`: ``.venv/bin/td2048`` when the environment is not
        activated), so that each runs as printed.
    """
    import importlib.util

    path, directory, td2048 = shlex.quote(str(model)), shlex.quote(str(run_dir)), invoked_as()
    served = importlib.util.find_spec("uvicorn") is not None and importlib.util.find_spec("fastapi") is not None
    steps = [(f"{td2048} eval {path} --games 1000", "test it, no learning"),
             (f"{td2048} watch {path}", "one game in the terminal"),
             (f"{td2048} serve {path}", "a web app to play with hints" if served
              else "a web app; needs pip install 'td2048[serve]'")]
    if plot:
        drawing = shlex.quote(str(run_dir / "progress.png"))  # in the run directory, as every file a next line writes
        steps.append((f"{td2048} plot {directory} -o {drawing}", "the curves; more run directories to compare"))
    width = max(len(command) for command, _ in steps)
    return [f"# {'next:' if i == 0 else '':6} {command:{width}}   ({what})" for i, (command, what) in enumerate(steps)]
