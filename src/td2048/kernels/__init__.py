"""Compiled kernels, specialised per network.

Reading a tuple's index with a loop over a table of runs is several times slower than
straight-line shifts and masks, so each network gets its own kernels: :mod:`codegen` writes the
network's value and update functions as plain code, beside the fixed parts of :mod:`templates`
(the board's helpers); the episode kernels of :mod:`episode`, the distillation kernels of
:mod:`distill`, the search kernels of :mod:`search` and the endgame kernels of :mod:`endgame` (games whose
endgame a table plays) are appended unchanged; and the module is
saved in a cache directory and imported. Numba's ``cache=True`` then keeps the compiled code next
to it, so a network is compiled once per machine and loads quickly after. The shared kernels'
sources import, above their markers, the names that the generated module defines
(:mod:`interface` declares the per-network ones), so that a linter reads them as Python. The
learning kernels' parameter vector is named in :mod:`params`; merging threads' weight copies is
:mod:`merge`.

The cache directory is ``$TD2048_CACHE_DIR``, else ``$XDG_CACHE_HOME/td2048`` or
``~/.cache/td2048``; a generated file's name holds a hash of its whole source, so a change to
td2048 or to the network can never load stale code.

To read the generated module of a network, ask :func:`kernels_for` for it (without calling a
kernel nothing is compiled) and open the file it names, ``td2048_kernels_<hash>.py`` in the cache
directory; its docstring names the network and the variant::

    python -c "from td2048.kernels import kernels_for; from td2048.spec import parse_network
    print(kernels_for(parse_network('4x6'), state_values=True).__file__)"

``parse_network`` takes what ``--network`` takes (and ``board=BoardShape.parse('3x3')``,
``clamp=``, ``stages=``); the keywords of :func:`kernels_for` pick the variant (``wide``,
``tracked``, ``tc``, ...). ``codegen.generate_source`` gives the same text without writing a file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from td2048.intrinsics import fast_gather, fast_pext, fast_vector_indices
from td2048.kernels.codegen import generate_source

_loaded: dict[str, ModuleType] = {}
_by_variant: dict[tuple, ModuleType] = {}


def cache_dir() -> Path:
    """Where generated kernel modules are kept.

    Returns
    -------
    pathlib.Path
        ``$TD2048_CACHE_DIR``, else ``$XDG_CACHE_HOME/td2048``, else ``~/.cache/td2048``.
    """
    explicit = os.environ.get("TD2048_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "td2048"


def _writable_dir() -> Path:
    for candidate in (cache_dir(), Path(tempfile.gettempdir()) / f"td2048-{os.getuid()}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            if os.access(candidate, os.W_OK):
                return candidate
        except OSError:
            continue
    raise OSError("no writable directory for td2048's compiled kernels (set TD2048_CACHE_DIR)")


def kernels_for(spec, tracked: bool = False, wide: bool = False, state_values: bool = False,
                tc: bool = False, records: bool = False, expected: bool = False, short: bool = False,
                shared: bool = False) -> ModuleType:
    """The compiled-kernel module of a network spec (generated and imported on first use).

    Parameters
    ----------
    spec : NetworkSpec
        The network (:mod:`td2048.spec`).
    tracked : bool
        The variant for multi-thread training, which flags the weight regions it changes.
    wide : bool
        For boards of 5-bit cells (2584, and 2048 past two 32768 tiles).
    state_values : bool
        For values of states (``--method state``) rather than afterstates.
    tc : bool
        Temporal coherence updates (the accumulators in place of ``dirty``; tracked: the pair
        (accumulators, a flag byte per chunk of weights)).
    records : bool
        With ``tc`` and not ``tracked``: ``w`` is TC's records, each weight beside its accumulators
        (:mod:`td2048.kernels.records`), and ``dirty`` is unused.
    expected : bool
        Learning by expected targets (``--target expected``): each update's target is the mean over every new
        tile of the best move's value, not the sampled next move's.
    short : bool
        For 16-bit weights (whole steps of ``td2048.spec.WEIGHT_STEP``; TD on afterstate values only).
    shared : bool
        For threads that write one table: with 16-bit weights on a network with gaps between its tables, an
        update writes back only the weights it changes (``dirty[1]``: the thread's spare weight,
        :meth:`td2048.spec.NetworkSpec.spare_weights`); elsewhere the same kernels.

    Returns
    -------
    module
        The generated module: ``run_block``, ``finish_from``, ``search_block``, ``value``, ... for this network.

    Raises
    ------
    OSError
        When no directory for the generated modules is writable.
    """
    records = records and tc and not tracked
    variant = (spec, tracked, wide, state_values, tc, records, expected, short, shared, fast_pext(), fast_gather(),
               fast_vector_indices())
    if variant in _by_variant:  # generating the source to hash it takes milliseconds: callers ask per move
        return _by_variant[variant]
    source = generate_source(spec, tracked, wide, state_values, tc, records, expected, pext=variant[-3],
                             gather=variant[-2], short=short, shared=shared, vector=variant[-1])
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    if digest in _loaded:
        _by_variant[variant] = _loaded[digest]
        return _loaded[digest]
    module = load_generated(f"td2048_kernels_{digest}", source)
    _loaded[digest] = module
    _by_variant[variant] = module
    return module


def load_generated(name: str, source: str) -> ModuleType:
    """Write a generated module's source into the cache directory (atomically, where it differs) and import it
    under ``name``, so that Numba's ``cache=True`` keeps its compiled code beside it.

    Parameters
    ----------
    name : str
        The module's name, unique to its source (a hash of it).
    source : str
        Its Python source.

    Returns
    -------
    module
    """
    path = _writable_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module
