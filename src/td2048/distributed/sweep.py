"""Sweeps: a grid or random search over training settings, each trial a run directory, on Ray Tune.

``td2048 sweep FILE`` reads a sweep file (TOML: [train] fixed options of ``td2048 train``, [grid]
lists, [random] distributions, [sweep] the sweep's own settings; :func:`load_sweep`), runs every
trial as a Tune trial that trains a normal run directory (:func:`sweep_trial`), and summarises
the trials, best first (:func:`run_sweep`). A sweep stopped in any way continues from its trials'
snapshots; one whose trials have all ended is read back from its summary without Ray.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from td2048.distributed.cluster import connect_ray, import_ray
from td2048.errors import TD2048Error
from td2048.io.atomic import atomic_open
from td2048.io.rundir import SETTINGS
from td2048.settings import TrainSettings, merge_off

SWEEP_SECTIONS = ("train", "grid", "random", "sweep")
_NOT_SWEPT = ("out", "resume", "quiet")
_RANDOM_KINDS = ("uniform", "loguniform", "randint", "choice")


def _setting_name(option: str) -> tuple[str, object]:
    """``td2048 train``'s option name (``alpha``, ``lambda``, ``merge-every``, ``tc``, ``no-promotion``) -> the
    TrainSettings field and a function from the option's value to the field's."""
    name = option.replace("-", "_")
    if name in _NOT_SWEPT:
        raise TD2048Error(f"{option!r} is set by the sweep itself (each trial is a run directory under --out)")
    if name == "lambda":
        return "lam", float
    if name == "tc":
        return "tc_from", lambda on: "0" if on else None
    if name == "no_promotion":
        return "promote", lambda on: not on
    if name == "merge_every":  # seconds, or "off": one table (the default)
        return name, lambda value: None if merge_off(value) else value
    if name not in {f.name for f in fields(TrainSettings)}:
        raise TD2048Error(f"unknown training option {option!r} in the sweep (see td2048 train --help)")
    return name, lambda value: value


@dataclass
class SweepPlan:
    """A sweep file, read: fixed options, grid lists, random distributions (as td2048 train's options)
    and the sweep's own settings."""

    train: dict
    grid: dict[str, list]
    random: dict[str, dict]
    samples: int = 1  # each point of the grid this many times (seeds seed, seed + 1, ...), random options drawn again
    metric: str = "avg"  # "avg" or "reach:TILE": the last block's average score or reach rate of TILE
    scheduler: str = "fifo"  # "fifo": every trial to its end; "asha": stop the weak ones early
    grace: int = 2  # ASHA: blocks every trial plays before it may be stopped
    cpus: int = 1  # CPUs per trial (its --threads)
    seed: int | None = None  # seed of the random draws

    @property
    def metric_key(self) -> str:
        return "avg" if self.metric == "avg" else f"reach_{self.metric.split(':', 1)[1]}"


def load_sweep(path: str | os.PathLike) -> SweepPlan:
    """Read and check a sweep file.

    Parameters
    ----------
    path : str or os.PathLike
        A TOML file with sections [train], [grid], [random] and [sweep] (see ``td2048 sweep --help``).

    Returns
    -------
    SweepPlan
        The sweep, its fixed options already checked as a training run's.

    Raises
    ------
    TD2048Error
        A missing or malformed file, an unknown section or option, or options that make no run (one line).
    """
    import tomllib

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise TD2048Error(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise TD2048Error(f"{path}: not valid TOML ({e})") from None
    unknown = set(data) - set(SWEEP_SECTIONS)
    if unknown:
        raise TD2048Error(f"{path}: unknown section(s) {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(SWEEP_SECTIONS)})")
    train, grid, random = data.get("train", {}), data.get("grid", {}), data.get("random", {})
    for option in (*train, *grid, *random):
        _setting_name(option)
    for option, values in grid.items():
        if not isinstance(values, list) or not values:
            raise TD2048Error(f"{path}: [grid] {option} must be a non-empty list")
    for option, dist in random.items():
        if not (isinstance(dist, dict) and len(dist) == 1 and next(iter(dist)) in _RANDOM_KINDS):
            raise TD2048Error(f"{path}: [random] {option} must be one of {{uniform = [lo, hi]}}, "
                              "{loguniform = [lo, hi]}, {randint = [lo, hi]}, {choice = [a, b, ...]}")
    twice = (set(train) & set(grid)) | (set(train) & set(random)) | (set(grid) & set(random))
    if twice:
        raise TD2048Error(f"{path}: {', '.join(sorted(twice))} given in more than one section")
    options = data.get("sweep", {})
    known = {"samples", "metric", "scheduler", "grace", "cpus", "seed"}
    if set(options) - known:
        raise TD2048Error(f"{path}: unknown [sweep] option(s) {', '.join(sorted(set(options) - known))}")
    plan = SweepPlan(train, grid, random, **options)
    if plan.metric != "avg" and not re.fullmatch(r"reach:\d+", plan.metric):
        raise TD2048Error(f"{path}: [sweep] metric must be \"avg\" or \"reach:TILE\" (\"reach:2048\"), "
                          f"not {plan.metric!r}")
    if plan.scheduler not in ("fifo", "asha"):
        raise TD2048Error(f"{path}: [sweep] scheduler must be \"fifo\" or \"asha\", not {plan.scheduler!r}")
    if plan.samples < 1 or plan.cpus < 1 or plan.grace < 1:
        raise TD2048Error(f"{path}: [sweep] samples, cpus and grace must be at least 1")
    trial_settings(plan, {})  # the fixed options must make a valid run
    return plan


def trial_settings(plan: SweepPlan, chosen: dict) -> TrainSettings:
    """The settings of one trial.

    Parameters
    ----------
    plan : SweepPlan
        The sweep.
    chosen : dict
        The trial's values of the swept options (``sample``: its repetition of a grid point, which adds
        to the seed).

    Returns
    -------
    TrainSettings
        The fixed options with the chosen values, checked.

    Raises
    ------
    TD2048Error
        When they make no valid run.
    """
    values = {}
    chosen = dict(chosen)
    sample = chosen.pop("sample", 0)  # the repetition of a grid point ([sweep] samples > 1): its own seed
    for option, value in {**plan.train, **chosen}.items():
        name, convert = _setting_name(option)
        values[name] = convert(value)
    values.setdefault("threads", plan.cpus)
    values["seed"] = values.get("seed", 0) + sample
    try:
        settings = TrainSettings(**values)
        settings.validate()
    except TypeError as e:
        raise TD2048Error(f"bad training options in the sweep: {e}") from None
    return settings


def trial_name(chosen: dict) -> str:
    """A trial's run directory name, the same at every start of the sweep.

    Parameters
    ----------
    chosen : dict
        The trial's values of the swept options.

    Returns
    -------
    str
        ``alpha=0.1,lambda=0.25-1a2b3c4d``: the values (at most 80 characters) and a hash of all of them.
    """
    text = ",".join(f"{k}={chosen[k]:.4g}" if isinstance(chosen[k], float) else f"{k}={chosen[k]}"
                    for k in sorted(chosen))
    safe = re.sub(r"[^A-Za-z0-9=,.+-]", "_", text)[:80]
    return f"{safe or 'trial'}-{hashlib.sha1(json.dumps(chosen, sort_keys=True).encode()).hexdigest()[:8]}"


def _param_space(plan: SweepPlan) -> dict:
    from ray import tune

    space = {option: tune.grid_search(values) for option, values in plan.grid.items()}
    if plan.samples > 1:  # repetitions as a grid axis: each its own seed and run directory
        space["sample"] = tune.grid_search(list(range(plan.samples)))
    for option, dist in plan.random.items():
        kind, args = next(iter(dist.items()))
        space[option] = tune.choice(args) if kind == "choice" else getattr(tune, kind)(*args)
    return space


def sweep_trial(config: dict) -> None:
    """One Tune trial: a td2048 run directory, created or resumed, reporting every block to Tune.

    Parameters
    ----------
    config : dict
        Tune's config: the trial's chosen values, and ``_plan`` and ``_out`` (the sweep and its folder).
    """
    from ray import tune

    from td2048.run import TrainingRun  # here: the learner's compiled code, on the worker

    chosen = {k: v for k, v in config.items() if not k.startswith("_")}
    plan = SweepPlan(**config["_plan"])
    directory = Path(config["_out"]) / "runs" / trial_name(chosen)
    settings = trial_settings(plan, chosen)
    training = (TrainingRun.resume(directory) if (directory / SETTINGS).exists()
                else TrainingRun.create(directory, settings))
    for stats in training.blocks():
        metrics = {"episodes": stats.episodes, "avg": stats.avg, "max": stats.max, "moves_per_s": stats.moves_per_s,
                   **{f"reach_{tile}": share for tile, share in stats.reach.items()}}
        if plan.metric_key not in metrics:
            metrics[plan.metric_key] = stats.reach_rate(int(plan.metric_key.removeprefix("reach_")))
        tune.report({**metrics, "run": str(directory)})
    training.finish()


@dataclass
class TrialSummary:
    """One trial of a sweep, as the summary table shows it."""

    name: str  # its run directory's name (trial_name)
    directory: str  # its run directory
    chosen: dict  # its values of the swept options
    episodes: int  # episodes trained
    metric: float  # the plan's metric at its last block
    avg: float  # the average score of its last block
    status: str  # "done", "stopped" (by the scheduler), "unfinished" or "error"


SWEEP_SUMMARY = "sweep.json"  # in a sweep's folder once every trial has ended: the plan and the trials


def _plan_text(plan: SweepPlan) -> str:
    return json.dumps(plan.__dict__, sort_keys=True)


def finished_sweep(plan: SweepPlan, out: str | os.PathLike) -> list[TrialSummary] | None:
    """The trials of a sweep that already ran to its end, from its summary.

    Parameters
    ----------
    plan : SweepPlan
        The sweep.
    out : str or os.PathLike
        The sweep's folder.

    Returns
    -------
    list of TrialSummary or None
        The trials, best first; None when the sweep has not finished, was of another plan (the sweep file
        changed), or a trial's run directory is gone.
    """
    try:
        data = json.loads((Path(out) / SWEEP_SUMMARY).read_text())
        if data["plan"] != _plan_text(plan):
            return None
        trials = [TrialSummary(**t) for t in data["trials"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return trials if trials and all(Path(t.directory).is_dir() for t in trials) else None


def _save_summary(plan: SweepPlan, out, trials: list[TrialSummary]) -> None:
    with atomic_open(Path(out) / SWEEP_SUMMARY, "w") as f:
        json.dump({"plan": _plan_text(plan), "trials": [asdict(t) for t in trials]}, f, indent=1)


def _saved_statuses(experiment) -> dict[str, str]:
    """Each trial's status (by run name) in the experiment's saved state: after Ctrl-C the trials that
    ``fit`` returns all read as terminated, while the saved state keeps the interrupted ones to be continued
    (TERMINATED: ran to its end or stopped by the scheduler). Empty when there is no readable state."""
    from ray import tune

    try:
        trials = tune.ExperimentAnalysis(str(experiment)).trials
    except Exception:  # then nothing is known to have ended, and the next run asks Tune again
        return {}
    return {trial_name({k: v for k, v in t.config.items() if not k.startswith("_")}): t.status for t in trials}


def run_sweep(plan: SweepPlan, out: str | os.PathLike, address: str | None = None) -> list[TrialSummary]:
    """Run, or continue, every trial of a sweep as Ray Tune trials.

    A sweep stopped in any way goes on from its trials' snapshots. A sweep whose trials have all ended
    is not started again: its trials come from ``out``'s summary, without Ray (which takes seconds to
    start, and may not be there where the results are read).

    Parameters
    ----------
    plan : SweepPlan
        The sweep (:func:`load_sweep`).
    out : str or os.PathLike
        The sweep's folder: run directories under ``out/runs``, Tune's state under ``out/tune``; on a
        cluster, a filesystem every node shares.
    address : str or None
        The Ray cluster's address; None: a new local instance.

    Returns
    -------
    list of TrialSummary
        The trials, best first by the plan's metric.

    Raises
    ------
    TD2048Error
        Ray is missing or unreachable.
    """
    finished = finished_sweep(plan, out)
    if finished is not None:
        return finished
    ray = import_ray()
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # with verbose=0: no tables of Tune's on the terminal
    connected = connect_ray(address)
    try:
        trainable = tune.with_resources(sweep_trial, {"cpu": plan.cpus})
        experiment = out / "tune"
        if tune.Tuner.can_restore(str(experiment)):
            tuner = tune.Tuner.restore(str(experiment), trainable, resume_unfinished=True, resume_errored=True)
        else:
            scheduler = (ASHAScheduler(time_attr="episodes", grace_period=plan.grace * trial_settings(plan, {}).block,
                                       max_t=max(trial_settings(plan, {}).episodes, 1))
                         if plan.scheduler == "asha" else FIFOScheduler())
            space = {**_param_space(plan), "_plan": plan.__dict__, "_out": str(out)}
            if plan.seed is not None:
                np.random.seed(plan.seed)  # Tune draws random options from NumPy's global generator
            tuner = tune.Tuner(trainable, param_space=space,
                               tune_config=tune.TuneConfig(metric=plan.metric_key, mode="max",
                                                           num_samples=1, scheduler=scheduler),
                               run_config=tune.RunConfig(name="tune", storage_path=str(out), verbose=0))
        results = tuner.fit()
        saved = _saved_statuses(experiment)
        summaries = []
        for result in results:
            if result.config is None:  # stopped (Ctrl-C) before Tune started it: it runs when the sweep goes on
                summaries.append(TrialSummary("not started", "-", {}, 0, float("-inf"), 0.0, "unfinished"))
                continue
            chosen = {k: v for k, v in result.config.items() if not k.startswith("_")}
            name, metrics = trial_name(chosen), result.metrics or {}
            episodes = int(metrics.get("episodes", 0))
            status = ("error" if result.error else "unfinished" if saved.get(name) != "TERMINATED"
                      else "stopped" if episodes < trial_settings(plan, chosen).episodes else "done")
            summaries.append(TrialSummary(name, str(out / "runs" / name), chosen, episodes,
                                          float(metrics.get(plan.metric_key, 0.0)), float(metrics.get("avg", 0.0)),
                                          status))
    finally:
        if connected:
            ray.shutdown()
    summaries.sort(key=lambda t: t.metric, reverse=True)
    if summaries and all(t.status in ("done", "stopped") for t in summaries):  # none to continue
        _save_summary(plan, out, summaries)
    return summaries


__all__ = ["SWEEP_SUMMARY", "SweepPlan", "TrialSummary", "finished_sweep", "load_sweep", "run_sweep", "sweep_trial",
           "trial_name", "trial_settings"]
