"""The public Python API's functions that the modules below do not already offer as they are.

Everything public is importable from the package: ``import td2048`` (see its ``__all__``).
"""

from __future__ import annotations

import os

from td2048.io.model import load_model, save_model
from td2048.network import Network


def load(path: str | os.PathLike, game: str | None = None) -> Network:
    """Load a model file.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.td2048`` model file: a run's ``model.td2048`` or ``snapshot.td2048``, or one saved by :func:`save`.
    game : {"2048", "2584"}, optional
        When given, refuse a model of the other game.

    Returns
    -------
    Network
        The network with its weights, ready to play or to train further.

    Raises
    ------
    TD2048Error
        For a missing, truncated, corrupted or foreign file, or a model of another game.
    """
    network, _header = load_model(path, game=game)
    return network


def save(network: Network, path: str | os.PathLike) -> None:
    """Save a network as a model file, atomically (a temporary file, then a rename).

    Parameters
    ----------
    network : Network
        The network to save, with its weights.
    path : str or os.PathLike
        Where to write the ``.td2048`` file, which ``td2048 eval`` and the other commands read.

    Raises
    ------
    TD2048Error
        When the file cannot be written.
    """
    save_model(path, network)
