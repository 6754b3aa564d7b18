"""A training run directory's files, and its log, read without the learner (plain Python).

A run directory holds::

    settings.json     every setting, written first
    log.jsonl         one JSON object per block of episodes, appended as blocks end
    starts.jsonl      with --start-over-below: the blocks of the starts thrown away, each with its "start"
    snapshot.td2048   while the run trains: the weights and what resuming needs (episodes done, random
                      states, TC's accumulators, kept boards), written atomically every --snapshot-every
    model.td2048      the final model (also written when a run is stopped with Ctrl-C), holding all
                      the snapshot held: once it is written the snapshot is removed
    progress.png      the run's curves, redrawn at each snapshot
    pretrain/         with --pretrain: the run of the smaller network first trained (the same files), whose
                      model the run's network starts from

A finished run keeps one copy of its weights, the model, and resumes from it; a resume takes whichever
of the snapshot and the model holds more episodes (:func:`td2048.run.resume_source`).
The runner (:mod:`td2048.run`) writes them; the plot (:mod:`td2048.plot`) and the sweeps read them.
"""

from __future__ import annotations

import json
from pathlib import Path

SETTINGS = "settings.json"
LOG = "log.jsonl"
STARTS = "starts.jsonl"
SNAPSHOT = "snapshot.td2048"
MODEL = "model.td2048"
PLOT = "progress.png"
PRETRAIN = "pretrain"


def read_log(path: Path) -> list[dict]:
    """The blocks of a run's log.

    Parameters
    ----------
    path : pathlib.Path
        A ``log.jsonl`` file.

    Returns
    -------
    list of dict
        One dict per block, in order (none when the file does not exist); a line torn by a crash
        (the last one) and anything after it are dropped.
    """
    blocks = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                blocks.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return blocks


def has_blocks(directory: str | Path) -> bool:
    """Whether a run directory's log has anything in it yet.

    Parameters
    ----------
    directory : str or pathlib.Path
        A run directory.

    Returns
    -------
    bool
        True when its ``log.jsonl`` exists and is not empty (there is something to plot).
    """
    log = Path(directory) / LOG
    return log.is_file() and log.stat().st_size > 0
