"""td2048: temporal-difference learning of n-tuple networks for 2048-like games.

Layers, calls going one way only::

    cli/        parse options, print, one error boundary  (td2048.cli)
    learn.py    training loop, block orchestration         (Python)
    network.py  tuple specs, presets, index plans, values  (Python + kernels)
    games/      bitboards, row tables, moves, new tiles    (kernels)

The public API is this package's ``__all__``: load a model (:func:`load`), play it
(:class:`Agent`, ``depth=`` for expectimax), train (:func:`train` with :class:`TrainSettings`),
boards from tile values (:class:`Board`), and the Gymnasium environments ``td2048/2048-v0`` and
``td2048/2584-v0``, registered on import (once Gymnasium is imported too).

Kernels are ``@njit`` functions that take arrays and scalars only; a whole block of episodes
runs inside one compiled call.
"""

from td2048.api import load, save
from td2048.envs import register_when_imported
from td2048.errors import TD2048Error
from td2048.games.board import Board
from td2048.learn import TrainSettings, train
from td2048.network import Network, parse_network
from td2048.play import Agent, Search, evaluate
from td2048.stats import BlockStats
from td2048.version import __version__

register_when_imported()  # gymnasium.make("td2048/2048-v0"), gymnasium.make_vec("td2048/2584-v0", num_envs=N)


def __getattr__(name):  # the environment classes import Gymnasium: only when asked for
    if name in ("TileGameEnv", "TileGameVectorEnv"):
        from td2048 import envs

        return getattr(envs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Agent", "Board", "BlockStats", "Network", "Search", "TD2048Error", "TileGameEnv", "TileGameVectorEnv",
           "TrainSettings", "__version__", "evaluate", "load", "parse_network", "save", "train"]
