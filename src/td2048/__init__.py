"""td2048: temporal-difference learning of n-tuple networks for 2048-like games.

Layers, calls going one way only::

    cli/        parse options, print, one error boundary  (td2048.cli)
    learn.py    training loop, block orchestration         (Python)
    network.py  tuple specs, presets, index plans, values  (Python + kernels)
    games/      bitboards, row tables, moves, new tiles    (kernels)

Kernels are ``@njit`` functions that take arrays and scalars only; a whole block of
episodes runs inside one compiled call.
"""

from importlib.metadata import PackageNotFoundError, version

from td2048.errors import TD2048Error

try:
    __version__ = version("td2048")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"

__all__ = ["TD2048Error", "__version__"]
