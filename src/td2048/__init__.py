"""td2048: temporal-difference learning of n-tuple networks for 2048-like games.

Layers, calls going one way only: each line imports only from itself and the lines below it::

    cli/                the td2048 command: one module per command, one error boundary  (td2048.cli)
    server/             td2048 serve: the engine's searches, its games, the JSON API, the web app
    distributed/        shards of games; training, evaluation and sweeps on Ray
    run.py              a run directory: snapshots, resume, Ctrl-C   (Python)
    training.py         a run's blocks, train() in memory            (Python)
    recording.py        games played for episode records             (Python + kernels)
    learn.py            learning a block of episodes, threads        (Python + kernels)
    play.py             choosing moves, playing without learning     (Python + kernels)
    solve/              exact perfect play on small boards           (Python + kernels of its own)
    envs/               the Gymnasium environments, an SB3 vector env (Python + kernels)
    io/                 model, weight and record files, run dirs     (Python)
    recipes.py          each small board's training recipes          (Python)
    settings.py         what a run is asked to do                    (Python: checked before any kernel loads)
    search_settings.py  how a player searches                        (Python: checked before any kernel loads)
    network.py          a network: its spec, weights and kernels     (Python + kernels)
    kernels/            each network's compiled code, written for it (kernels)
    spec.py             tuple specs, presets, the weights' layout    (Python)
    games/              tiles, shapes, bitboards, row tables, moves, position keys  (kernels; tiles.py and
                        shape.py plain Python)

``solve/`` sits beside learning and playing: ``td2048 solve`` writes a solution, and ``eval --exact``, ``train
--exact``, ``train --teacher`` and ``serve --solution`` read one; it never imports learning, playing or a network.
``games/keys.py``, a position's key, serves both: the solver keeps its positions by it, and the TD kernels look
positions up in a solution with it. Beside the lines: api.py (load, save), bench.py, judge.py, stats.py,
plot.py, teacher.py, threads.py, rng.py, palette.py, config.py, errors.py, version.py and models/;
``docs/concepts/architecture.md`` has a row for each module.

The public API is this package's ``__all__``: load a model (:func:`load`), play it
(:class:`Agent`, ``depth=`` for expectimax), train (:func:`train` with :class:`TrainSettings`),
boards from tile values (:class:`Board`), and the Gymnasium environments ``td2048/2048-v0`` and
``td2048/2584-v0``, registered on import (once Gymnasium is imported too).

Kernels are ``@njit`` functions that take arrays and scalars only; a whole block of episodes
runs inside one compiled call.
"""

import importlib

from td2048.envs import register_when_imported
from td2048.errors import TD2048Error
from td2048.version import __version__

register_when_imported()  # gymnasium.make("td2048/2048-v0"), gymnasium.make_vec("td2048/2584-v0", num_envs=N)

# The public names load on first use (PEP 562): ``td2048 --help`` or a mistyped option then answers before
# NumPy's and Numba's compiled modules are imported, in about a quarter of the time.
_PUBLIC = {"load": "td2048.api", "save": "td2048.api", "Board": "td2048.games.board",
           "TrainSettings": "td2048.settings", "BoardShape": "td2048.games.shape", "train": "td2048.training",
           "Network": "td2048.network",
           "parse_network": "td2048.network", "Agent": "td2048.play", "Search": "td2048.search_settings",
           "evaluate": "td2048.play", "BlockStats": "td2048.stats", "TileGameEnv": "td2048.envs",
           "TileGameVectorEnv": "td2048.envs"}


def __getattr__(name):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value  # once: later reads find it without this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))


__all__ = ["Agent", "Board", "BlockStats", "BoardShape", "Network", "Search", "TD2048Error", "TileGameEnv",
           "TileGameVectorEnv", "TrainSettings", "__version__", "evaluate", "load", "parse_network", "save", "train"]
