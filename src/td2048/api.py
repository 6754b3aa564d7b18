"""The public Python API's functions that the modules below do not already offer as they are.

Everything public is importable from the package: ``import td2048`` (see its ``__all__``).
"""

from __future__ import annotations

import os

from td2048.io.model import load_model, save_model
from td2048.network import Network


def load(path: str | os.PathLike, game: str | None = None) -> Network:
    """The network in a ``.td2048`` model file (a run's ``model.td2048`` or ``snapshot.td2048``);
    ``game`` given ("2048" or "2584"): refuse a model of the other game."""
    network, _header = load_model(path, game=game)
    return network


def save(network: Network, path: str | os.PathLike) -> None:
    """Write ``network`` as a ``.td2048`` model file, atomically (``td2048 eval`` and the others read it)."""
    save_model(path, network)
