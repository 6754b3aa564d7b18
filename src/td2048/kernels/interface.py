"""The names that each network's generated module writes for the shared kernels, declared for the reader.

The kernel sources :mod:`td2048.kernels.episode`, :mod:`td2048.kernels.distill` and
:mod:`td2048.kernels.search` are copied, from their marker on, into a module that
:func:`td2048.kernels.codegen.generate_source` writes per network, below a header that defines the
names they use. Above its marker each source imports those names, so that a linter and an editor
resolve them; nothing above a marker is copied. The board's helpers (``move``, ``spawn_tile``,
``load_board``, ...) are those of :mod:`td2048.kernels.templates.narrow_board`, and
``downgraded`` is :mod:`td2048.kernels.templates.downgrade`'s; this module declares the rest, which
differ from network to network.

The constants here hold the values of the classic 4x6 network's plain kernels (4x4 board, 4-bit
cells, afterstate values, TD(0), one thread), as an example; the functions say what the generated
module's function of that name does, and raise :class:`NotImplementedError`: they are no kernels.
"""

from td2048.games.bitboard import U64

N_TUPLES = 4
"""The network's tuples."""
N_ISO = 8
"""The isomorphisms each tuple is read on: 1, 4 or 8 symmetric boards."""
N_FEATURES = 32
"""Feature indices of a board: N_TUPLES x N_ISO, the length of a row of feature indices."""
WIDE = False
"""Whether boards have 5-bit cells (a pair of words; :mod:`td2048.kernels.templates.wide_board`)."""
STATE_VALUES = False
"""Whether V values states (after the new tile, ``--method state``), not afterstates."""
EXPECTED_TARGET = False
"""Whether learning moves V toward expected targets (``--target expected``)."""
GAMES_IN_FLIGHT = 2
"""Greedy games played at a time on one thread (1 or 2; :func:`td2048.kernels.codegen.games_in_flight`)."""
TRACKED = False
"""Whether updates flag the weight regions they change (multi-thread training; :mod:`td2048.kernels.merge`)."""
TC = False
"""Whether updates are temporal coherence's (the ``dirty`` argument then holds the accumulators)."""
STAGED = False
"""Whether the network is multistage (:attr:`td2048.spec.NetworkSpec.stages`)."""
N_STAGES = 1
"""The network's stages (1 when it has none)."""
STAGE_WEIGHTS = 67387392
"""Weights of one stage's tables."""
STAGE_MARKERS = 67387392
"""Where the stages' markers start in the weights (1.0 once a stage is entered; see ``enter_stage``)."""
CELLS = U64(0x1111111111111111)
"""The board's cells in the frame, one bit per 4-bit cell (as ``empty_mask`` gives them): where new tiles land."""
VERTICAL = 0
"""Where the table of the columns' moves starts in the row table: 0 on a square board."""


def _generated(name: str) -> NotImplementedError:
    return NotImplementedError(f"{name} is written per network by td2048.kernels.codegen (see td2048.kernels)")


def feature_indices(b, out, r):
    """Write the flat weight index of every feature of board ``b`` into row ``r`` of ``out``.

    The network's N_TUPLES tuples on each of its N_ISO symmetric boards, tuple by tuple, each tuple's indices on
    the symmetric boards side by side (each read with constant shifts and masks, or pext; on multistage
    networks, in the board's stage).
    """
    raise _generated("feature_indices")


def asked_indices(w, b, x, r):
    """As :func:`feature_indices`, and ask for the cache line of each weight of ``w`` as soon as its index is
    known, without waiting for it (one pass: the row is not read back to ask)."""
    raise _generated("asked_indices")


def prefetch_aux(aux, x, r):
    """TC kernels: ask for the lines of the accumulators that an update of row ``r`` writes (else nothing)."""
    raise _generated("prefetch_aux")


def value_of(w, x, r):
    """V of the board whose feature indices are row ``r`` of ``x``: the sum of their weights (read by vector
    gathers where the CPU gathers fast; the same value as plain_value_of, bit for bit)."""
    raise _generated("value_of")


def plain_value_of(w, x, r):
    """value_of by plain loads: for weights that a store may still be writing (see best_candidate)."""
    raise _generated("plain_value_of")


def update_of(w, dirty, x, r, target, alpha_split):
    """Move V of the board in row ``r`` of ``x`` toward ``target``: each weight by alpha_split x the error.

    Returns V after the update. ``dirty``: the flags of changed regions (tracked kernels), TC's
    accumulators (TC kernels), or both (tracked TC kernels).
    """
    raise _generated("update_of")


def stage_of(b):
    """The stage of board ``b``: the number of the network's stage thresholds that it has passed (0 unstaged)."""
    raise _generated("stage_of")


def enter_stage(w, dirty, b):
    """The first time play reaches a stage, its tables start as a copy of the stage before (weight promotion)."""
    raise _generated("enter_stage")


def value(w, b):
    """V(b), the feature indices computed on the spot (for tests and tools)."""
    raise _generated("value")


def index_row(b, x, r):
    """``feature_indices``, not inlined: for callers off the hot path."""
    raise _generated("index_row")


def value_row(w, x, r):
    """``value_of``, not inlined."""
    raise _generated("value_row")


def update_row(w, dirty, x, r, target, alpha_split):
    """``update_of``, not inlined."""
    raise _generated("update_row")


def td_update(w, dirty, b, target, alpha_split):
    """Move V(b) toward ``target`` (``update_of``); returns V(b) after the update."""
    raise _generated("td_update")


def expected_value_of(w, b, x, r):
    """State values: E[V] over the new tile on afterstate ``b``, whose feature indices are row ``r`` of ``x``.

    Afterstate networks take 0.0 (:mod:`td2048.kernels.templates.no_expectation`) and never call it.
    """
    raise _generated("expected_value_of")


def expected_value(w, b):
    """``expected_value_of`` with the feature indices computed on the spot."""
    raise _generated("expected_value")


def canonical(b):
    """The least of b's boards under the network's isomorphisms: the transposition table's key of ``b``."""
    raise _generated("canonical")
