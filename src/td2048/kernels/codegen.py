"""Source of a network's kernel module: its constants and feature functions, the templates, the shared kernels.

Each network gets a module of its own (:mod:`td2048.kernels` writes it to the cache and imports it): a header of
the network's constants, the board's helpers (:mod:`td2048.kernels.templates`), its feature functions
(:mod:`td2048.kernels.features`: each tuple read with constant shifts and masks), its stage and symmetry
functions, then the kernels every network shares (targets, tables, episodes, distillation, search, endgames).
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from td2048.games.game2048 import vertical_offset
from td2048.games.shape import BoardShape
from td2048.games.wide import wide_vertical_offset
from td2048.kernels.features import (
    expectation_function,
    feature_functions,
    gathers,
    index_code,
    symmetry_expressions,
    symmetry_setup,
    vectors,
)
from td2048.kernels.params import POSITIONS
from td2048.kernels.records import RECORD
from td2048.kernels.templates import TEMPLATE_MARKER
from td2048.spec import WEIGHT_LIMIT, WEIGHT_STEP, NetworkSpec

_PACKAGE = Path(__file__).resolve().parent.parent
_TEMPLATES = _PACKAGE / "kernels" / "templates"
# Numba compiles what these modules define into the generated kernels (inlined functions,
# global constants), and its cache only checks the generated file itself: so the generated
# source carries a fingerprint of them, and any change to them gives a new module.
_COMPILED_INTO_KERNELS = ("config.py", "rng.py", "games/bitboard.py", "games/game2048.py", "games/wide.py",
                          "games/keys.py", "intrinsics.py", "kernels/merge.py", "kernels/params.py",
                          "kernels/codegen.py", "kernels/features.py", "kernels/targets.py", "kernels/tables.py",
                          "kernels/episode.py", "kernels/distill.py", "kernels/search.py", "kernels/endgame.py",
                          "kernels/templates/narrow_board.py", "kernels/templates/wide_board.py",
                          "kernels/templates/no_expectation.py", "kernels/templates/downgrade.py",
                          "kernels/templates/network_calls.py", "kernels/templates/one_stage.py")


@functools.cache


def _fingerprint() -> str:
    import numba

    digest = hashlib.sha256(numba.__version__.encode())
    for name in _COMPILED_INTO_KERNELS:
        digest.update((_PACKAGE / name).read_bytes())
    return digest.hexdigest()[:16]


# the kernels every network shares, appended in this order to its header, each from its marker line on
_SHARED_KERNELS = (("targets.py", "# ---- target and update kernels (shared by every network) ----"),
                   ("tables.py", "# ---- table kernels (shared by every network) ----"),
                   ("episode.py", "# ---- episode kernels (shared by every network) ----"),
                   ("distill.py", "# ---- distillation kernels (shared by every network) ----"),
                   ("search.py", "# ---- search kernels (shared by every network) ----"),
                   ("endgame.py", "# ---- endgame kernels (shared by every network) ----"))


def template_text(name: str) -> str:
    """The text that a template of :mod:`td2048.kernels.templates` gives the generated module.

    Parameters
    ----------
    name : str
        The template's module name: ``narrow_board``, ``wide_board``, ``no_expectation``, ``downgrade``,
        ``network_calls``, ``one_stage`` or ``one_tuple_filler``.

    Returns
    -------
    str
        The template's lines after its marker line, without the file's last newline.
    """
    text = (_TEMPLATES / f"{name}.py").read_text()
    start = text.index("\n", text.index(TEMPLATE_MARKER)) + 1
    return text[start:].rstrip("\n")


IN_FLIGHT_FEATURES = 40  # two greedy games at a time up to this many features a board (the speed page's figures)


def games_in_flight(spec: NetworkSpec) -> int:
    """Greedy games a thread plays at a time (``greedy_block``): 2 on networks of at most IN_FLIGHT_FEATURES
    features a board, where each game's weights come while the other game computes; 1 on larger ones, where two
    games' weights crowd each other out of the caches and play slower than one."""
    return 2 if spec.n_features <= IN_FLIGHT_FEATURES else 1


def _canonical_function(spec: NetworkSpec) -> str:
    """Source of ``canonical(b)``: the least of b's boards under the network's symmetries (the
    isomorphisms it sums over), by (low word, high word). Boards that map onto each other have
    the same V and the same search values, so the transposition table keys them as one."""
    lines = ["@njit(inline='always')", "def canonical(b):", "    best = b", "    best_lo, best_hi = board_words(b)"]
    if spec.isomorphisms > 1:
        lines += symmetry_setup(spec.board)
    for expr in symmetry_expressions(spec.board)[1:spec.isomorphisms]:
        lines += [f"    x = {expr}", "    lo, hi = board_words(x)",
                  "    if lo < best_lo or (lo == best_lo and hi < best_hi):",
                  "        best, best_lo, best_hi = x, lo, hi"]
    lines.append("    return best")
    return "\n".join(lines)


def _stage_functions(spec: NetworkSpec, tracked: bool, tc: bool = False, records: bool = False) -> str:
    """Source of ``stage_of(b)`` and ``enter_stage(w, dirty, b)`` (multistage networks).

    A board's stage is the number of thresholds at or below its scale, the OR of 1 << code over
    its cells (TDL2048+'s rule: a threshold of one tile is passed once a tile at least that large
    is on the board; 16384+8192 once the scale reaches 24576). Stage k reads the k-th copy of
    the tables. ``enter_stage``: the first time training plays into stage k, the stage's tables
    start as a copy of stage k-1's (weight promotion, Jaskowski 2018), and its marker is set."""
    if not spec.stages:
        return template_text("one_stage")
    single = all(m & (m - 1) == 0 for m in spec.stages)
    if single:  # thresholds of one tile: the largest code decides
        tests = " + ".join(f"np.int64(top >= {m.bit_length() - 1})" for m in spec.stages)
        body = f"    top = max_code(b)\n    return {tests}"
    else:
        tests = " + ".join(f"np.int64(scale >= {m})" for m in spec.stages)
        body = f"""    scale = 0
    for c in range(16):
        scale |= 1 << cell_code(b, c)
    return {tests}"""
    mark = """            for region in range(lo >> DIRTY_SHIFT, ((STAGE_MARKERS + N_STAGES) >> DIRTY_SHIFT) + 1):
                dirty[region] = U8(255)""" if tracked else ""
    if tracked and tc:  # (accumulators, a flag byte per chunk)
        mark = """            for chunk in range(lo >> CHUNK_SHIFT, ((STAGE_MARKERS + N_STAGES) >> CHUNK_SHIFT) + 1):
                dirty[1][chunk] = U8(1)"""
    # element by element: a slice assigned from a slice compiles Numba's shape-mismatch error (seconds)
    copy = """for i in range(lo, lo + STAGE_WEIGHTS):
                w[i] = w[i - STAGE_WEIGHTS]"""
    scale = ""
    if records:  # the weights alone (the new stage's accumulators keep their start)
        copy = """for i in range(RECORD * lo, RECORD * (lo + STAGE_WEIGHTS), RECORD):
                w[i] = w[i - RECORD * STAGE_WEIGHTS]"""
        scale = "RECORD * "
    return f"""@njit(inline='always')


def stage_of(b):
{body}


@njit


def enter_stage(w, dirty, b):
    s = stage_of(b)
    for k in range(1, s + 1):
        if w[{scale}(STAGE_MARKERS + k)] == 0.0:
            w[{scale}(STAGE_MARKERS + k)] = 1.0
            lo = k * STAGE_WEIGHTS
            {copy}
{mark}"""


def generate_source(spec: NetworkSpec, tracked: bool = False, wide: bool = False, state_values: bool = False,
                    tc: bool = False, records: bool = False, expected: bool = False, pext: bool = False,
                    gather: bool = False, short: bool = False, shared: bool = False, vector: bool = False,
                    in_flight: int | None = None) -> str:
    """Complete module source: network-specific header, then the shared episode, distillation and search kernels.

    The header's fixed parts (the board's helpers, ``downgraded``, the expectation functions of
    afterstate networks) are the templates' text (:mod:`td2048.kernels.templates`).

    ``wide``: boards of 5-bit cells (:mod:`td2048.games.wide`), else one 64-bit word.
    ``tracked`` kernels also flag the weight regions they change, for merging the copies of
    multi-thread training (:mod:`td2048.kernels.merge`); single-thread kernels carry no such code.
    ``state_values``: V is learned on states (after the new tile), and moves are chosen by
    r + E[V] over the new tile (``expected_value``); else V is on afterstates.
    ``tc``: updates by temporal coherence; the kernels' ``dirty`` argument is then the
    accumulators, or in ``tracked`` TC kernels the pair (accumulators, a flag byte per chunk of
    CHUNK weights): a Ray worker's threads share one table, and a sync lists only the flagged chunks
    (td2048.kernels.exchange). ``records`` (TC, not tracked): ``w`` is TC's records instead, each
    weight beside its two accumulators (td2048.kernels.records), and ``dirty`` is unused.
    ``expected``: learning moves V toward expected targets, the mean over every new tile of the best
    move's value (``expected_target`` in td2048.kernels.episode), instead of the sampled next move's.
    ``pext``: tuples of several runs are read with one ``pext`` each (:func:`index_expression`), for a CPU
    that has it fast (:func:`td2048.intrinsics.fast_pext`).
    ``gather``: a row's weights are read with one vector gather per tuple (networks of 4 or 8 isomorphisms),
    for a CPU that gathers fast (:func:`td2048.intrinsics.fast_gather`); the same values bit for bit.
    ``vector``: feature indices are computed in vector registers (:func:`vectors`: 4-bit cells, 16**n tables, 4 or 8
    isomorphisms), for a CPU where that is fast (:func:`td2048.intrinsics.fast_vector_indices`); the same rows.
    ``in_flight``: greedy games played at a time on a thread (1 or 2; None: :func:`games_in_flight`); the same games.
    ``short``: 16-bit weights, whole numbers of ``td2048.spec.WEIGHT_STEP`` (TD on afterstate values: not with
    TC, records, tracking or state values).
    ``shared``: for threads that write one table (16-bit weights on a network with gaps between its tables: else
    the same source); an update writes back only the weights it changes (see _short_update).
    """
    records = records and tc and not tracked
    if short and (tc or records or tracked or state_values):
        raise ValueError("16-bit weights are for TD on afterstate values, without TC, records or tracking")
    gather = gather and not short  # (gathers of 16-bit weights: not written)
    shared = shared and short and spec.stagger > 0
    # The header names only what the code depends on, so that networks that compile to the same code
    # share one module: not the network's name ("2x4" is "0123,4567"), nor its game (the row table is
    # an argument), and on 5-bit cells a clamp at 15 is the 16**n tables'.
    cells = " ".join("".join(f"{c:x}" for c in t) for t in spec.frame_tuples)
    top = f", codes clamped at {spec.values_per_cell - 1}" if wide or spec.clamp is not None else ""
    variant = (", 5-bit cells" if wide else "") + top \
        + (", tracking changed regions" if tracked else "") + (", state values" if state_values else "") \
        + (f", {spec.n_stages} stages {list(spec.stages)}" if spec.stages else "") + (", TC updates" if tc else "") \
        + (" on records" if records else "") + (", expected targets" if expected else "") \
        + (", indices in vectors" if vectors(spec, wide, vector) else ", tuples read by pext"
           if pext and "pext(" in "".join(index_code(spec, wide, pext)[1]) else "") \
        + (", weights gathered" if gathers(spec, gather) else "") \
        + (", 16-bit weights" if short else "") + (", threads on one table" if shared else "")
    board = "" if spec.board.full else f" on the {spec.board} board (cells of the 4x4 frame)"
    what = f"tuples {cells}{board}, {spec.isomorphisms} isomorphisms{variant}"
    header = f'''"""td2048 kernels for networks of {what}.

Generated by td2048.kernels.codegen; do not edit (changes to td2048 write a new file).
td2048 sources compiled in: {_fingerprint()}
"""
# ruff: noqa
import numpy as np

from td2048.config import njit
from td2048.games.keys import canon4, canon5, indexed_position
from td2048.intrinsics import gathered_value, pext, symmetric_indices
from td2048.kernels.merge import CHUNK_SHIFT, DIRTY_SHIFT, NO_TRACKING, prefetch_far, prefetch_read
from td2048.kernels.params import {", ".join(POSITIONS)}
from td2048.rng import below, uniform
{template_text("wide_board" if wide else "narrow_board")}

U8 = np.uint8
N_TUPLES = {len(spec.tuples)}
N_ISO = {spec.isomorphisms}
N_FEATURES = {spec.n_features}
WIDE = {wide}
STATE_VALUES = {state_values}
EXPECTED_TARGET = {expected}
GAMES_IN_FLIGHT = {games_in_flight(spec) if in_flight is None else in_flight}
TRACKED = {tracked}
TC = {tc}
RECORD = {RECORD}
STAGED = {bool(spec.stages)}
N_STAGES = {spec.n_stages}
STAGE_WEIGHTS = {spec.stage_weights}
STAGE_MARKERS = {spec.stage_markers}
WEIGHT_STEP = {WEIGHT_STEP}
WEIGHT_LIMIT = {WEIGHT_LIMIT}
{_shape_constants(spec.board, wide)}


{feature_functions(spec, tracked, wide, tc, records, pext, gather, short, shared, state_values, vector)}


{_stage_functions(spec, tracked, tc, records)}


{template_text("network_calls")}


{expectation_function(spec, records) if state_values else template_text("no_expectation")}


{_canonical_function(spec)}


{template_text("downgrade")}


'''
    return _constants_as_globals(header + "\n\n".join(_shared_text(name, marker) for name, marker in _SHARED_KERNELS))


def _shared_text(name: str, marker: str) -> str:
    """The text of a shared kernel source of td2048.kernels from its marker line on (its imports above the
    marker only name, for a linter, what the generated header defines)."""
    text = (_PACKAGE / "kernels" / name).read_text()
    return text[text.index(marker):]


def _shape_constants(board: BoardShape, wide: bool) -> str:
    """The board's shape as the kernels see it: where new tiles land, and where the columns' table starts."""
    vertical = wide_vertical_offset(board) if wide else vertical_offset(board)
    return f"CELLS = U64({hex(board.cells_mask)})\nVERTICAL = {vertical}"


def _constants_as_globals(source: str) -> str:
    """Each literal ``U64(...)`` of the module becomes a global constant defined once at its top.

    Numba takes a global NumPy scalar as a compile-time constant, while every ``U64(...)`` call
    is typed again at each place an inlined function lands: with hundreds of them in the index
    code, writing them as globals takes a large share off the compile time of every network."""
    names: dict[str, str] = {}

    def name(match: re.Match) -> str:
        value = int(match.group(1), 0)
        names.setdefault(f"U64_{value:x}", match.group(1))
        return f"U64_{value:x}"

    marker = "\nU8 = np.uint8\n"
    head, _, rest = source.partition(marker)
    rest = re.sub(r"\bU64\((0x[0-9a-fA-F]+|[0-9]+)\)", name, rest)
    constants = "".join(f"{n} = U64({v})\n" for n, v in names.items())
    return head + marker + constants + rest
