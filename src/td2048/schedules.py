"""The schedules of a training run, read from their option's text: exploration, alpha and snapshots.

Plain Python, as :mod:`td2048.settings`, which checks a run's schedules with these before anything is
allocated; the learner (:mod:`td2048.learn`), the block loop (:mod:`td2048.training`) and the run directory
(:mod:`td2048.run`) read them as the run goes.
"""

from __future__ import annotations

import math

from td2048.errors import TD2048Error


def exploration(schedule: str) -> tuple[float, float, float, float]:
    """Exploration schedule -> (kind, three numbers) for the kernels; epsilon of episode n is

    ``none``: 0; ``const:E``: E; ``linear:E0:E1:N``: from E0 to E1 over N episodes, then E1;
    ``exp:E0:R:N``: E0 * exp(-R n) for the first N episodes, then 0 (``exp:1:0.0005:5000``).
    """
    text = schedule.strip().lower()
    kinds = {"none": (0, 0), "const": (1, 1), "linear": (2, 3), "exp": (3, 3)}
    name, *numbers = text.split(":")
    try:
        kind, count = kinds[name]
        values = [float(x) for x in numbers]
        if len(values) == count and all(math.isfinite(v) for v in values):
            e0 = values[0] if values else 0.0
            ok = 0.0 <= e0 <= 1.0
            if kind == 2:
                ok = ok and 0.0 <= values[1] <= 1.0 and values[2] > 0
            if kind == 3:
                ok = ok and values[1] >= 0 and values[2] > 0
            if ok:
                return (float(kind), *(values + [0.0] * (3 - len(values))))
    except (KeyError, ValueError):
        pass
    raise TD2048Error(f"bad --explore {schedule!r} (const:0.01, linear:0.1:0:50000 or exp:1:0.0005:5000; "
                      "epsilons in [0, 1])")


def alpha_at(schedule: str, alpha: float, episode: int) -> float:
    """The learning rate at ``episode`` (the first of a block) under a schedule.

    ``const``: alpha. ``step:0.1@0,0.05@500000``: 0.1 from episode 0, 0.05 from 500,000 (the base
    --alpha before the first step). ``invsqrt:T``: alpha / sqrt(1 + episode / T).
    """
    text = schedule.strip().lower()
    try:
        if text == "const":
            return alpha
        kind, _, spec = text.partition(":")
        if kind == "invsqrt":
            horizon = float(spec)
            if horizon > 0 and math.isfinite(horizon):
                return alpha / math.sqrt(1.0 + episode / horizon)
        elif kind == "step":
            steps = sorted((int(at), float(value)) for value, at in (part.split("@") for part in spec.split(",")))
            if steps and all(v > 0 and math.isfinite(v) and at >= 0 for at, v in steps):
                current = alpha
                for at, value in steps:
                    if episode >= at:
                        current = value
                return current
    except ValueError:
        pass
    raise TD2048Error(f"bad --alpha-schedule {schedule!r} (const, step:0.1@0,0.05@500000 or invsqrt:100000)")


_TIME_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(text: str) -> float | None:
    """Seconds of a time written ``30s``, ``5m``, ``1.5h``; None when ``text`` is not one (or not above 0)."""
    text = str(text).strip().lower()
    try:
        if text[-1:] in _TIME_UNITS:
            seconds = float(text[:-1]) * _TIME_UNITS[text[-1]]
            if seconds > 0 and math.isfinite(seconds):
                return seconds
    except ValueError:
        pass
    return None


def snapshot_interval(every: int | str) -> tuple[int | None, float | None]:
    """(episodes, seconds) between snapshots from ``10000`` (episodes) or ``5m`` / ``30s`` / ``2h`` (time)."""
    seconds = duration_seconds(str(every))
    if seconds is not None:
        return None, seconds
    try:
        if int(str(every).strip()) >= 1:
            return int(str(every).strip()), None
    except ValueError:
        pass
    raise TD2048Error(f"--snapshot-every must be a number of episodes (10000) or a time (30s, 5m, 1h), not {every!r}")
