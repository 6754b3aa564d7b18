"""The model that ships with td2048, so that ``td2048 serve``, ``watch`` and ``analyze`` play right after
``pip install``: MODEL left out means this one.

A 4x5 network for 2048 trained with temporal coherence, stored without TC's accumulators and compressed
with xz (:mod:`td2048.io.model` reads it like any model file). How it was made and how well it plays:
``docs/guides/serve.md``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SHIPPED_MODEL = "4x5-tc.td2048.xz"


def shipped_model() -> Path:
    """The path of the shipped model file, inside the installed package.

    Returns
    -------
    pathlib.Path
        ``.../td2048/models/4x5-tc.td2048.xz``.
    """
    return Path(str(resources.files(__name__).joinpath(SHIPPED_MODEL)))


def model_or_shipped(path: str | None) -> str:
    """``path``, or the shipped model's path when it is None (the commands' MODEL left out).

    Parameters
    ----------
    path : str or None
        A model file given on the command line, or None.

    Returns
    -------
    str
        The model file to load.
    """
    return str(shipped_model()) if path is None else path
