"""td2048: temporal-difference learning of n-tuple networks for 2048-like games.

Layers, calls going one way only::

    cli/                parse options, print, one error boundary  (td2048.cli)
    settings.py         what a run is asked to do                 (Python: checked before any kernel loads)
    search_settings.py  how a player searches                     (Python: checked before any kernel loads)
    training.py         a run's blocks, train() in memory         (Python)
    learn.py            learning a block of episodes, threads     (Python + kernels)
    play.py             choosing moves, playing without learning  (Python + kernels)
    network.py          tuple specs, presets, index plans, values (Python + kernels)
    games/              tiles, bitboards, row tables, moves       (kernels; tiles.py plain Python)

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
