"""Source of a network's value and update kernels: each tuple read with constant shifts and masks.

For the classic 4x6 network the first tuple ``012345`` reads ``x & 0xffffff`` and the third
``012456`` reads ``(x & 0xfff) | ((x >> 4) & 0xfff000)``: the runs of consecutive cells of
:func:`td2048.spec.tuple_runs`, one shift and one mask each.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from td2048.games.game2048 import vertical_offset
from td2048.games.shape import FULL, BoardShape
from td2048.games.wide import wide_vertical_offset
from td2048.kernels.params import POSITIONS
from td2048.kernels.records import RECORD
from td2048.kernels.templates import TEMPLATE_MARKER
from td2048.spec import WEIGHT_LIMIT, WEIGHT_STEP, NetworkSpec, tuple_runs

_PACKAGE = Path(__file__).resolve().parent.parent
_TEMPLATES = _PACKAGE / "kernels" / "templates"
# Numba compiles what these modules define into the generated kernels (inlined functions,
# global constants), and its cache only checks the generated file itself: so the generated
# source carries a fingerprint of them, and any change to them gives a new module.
_COMPILED_INTO_KERNELS = ("config.py", "rng.py", "games/bitboard.py", "games/game2048.py", "games/wide.py",
                          "games/keys.py", "intrinsics.py", "kernels/merge.py", "kernels/params.py",
                          "kernels/codegen.py", "kernels/targets.py", "kernels/tables.py", "kernels/episode.py",
                          "kernels/distill.py", "kernels/search.py", "kernels/endgame.py",
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


# Networks of at least this many bytes of weights (4x6 and larger) prefetch them into L2 and not L1
# (prefetcht1): a move asks for up to 4 x 32 lines (4x6; 4 x 64 on 8x6), which in L1 push out what the move
# itself works on. Cache-resident networks prefetch into L1.
FAR_PREFETCH_BYTES = 64 << 20

# the kernels every network shares, appended in this order to its header, each from its marker line on
_SHARED_KERNELS = (("targets.py", "# ---- target and update kernels (shared by every network) ----"),
                   ("tables.py", "# ---- table kernels (shared by every network) ----"),
                   ("episode.py", "# ---- episode kernels (shared by every network) ----"),
                   ("distill.py", "# ---- distillation kernels (shared by every network) ----"),
                   ("search.py", "# ---- search kernels (shared by every network) ----"),
                   ("endgame.py", "# ---- endgame kernels (shared by every network) ----"))

# the symmetric boards of a rectangle, in the order of td2048.games.bitboard.symmetric_boards
_RECTANGLE_EXPRESSIONS = ("b", "mf", "m", "f")  # identity, half turn, mirror, flip


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


def _down(expr: str, cells: int) -> str:
    """``expr`` shifted back by ``cells`` cells (``cells_down``), or as it is for 0."""
    return expr if cells == 0 else f"cells_down({expr}, {cells})"


def symmetry_expressions(board: BoardShape) -> tuple[str, ...]:
    """The symmetric boards of ``b`` in the order of ``board.symmetries``, from ``m``, ``f``, ``mf``, and on square
    boards ``t`` and ``tf`` (:func:`symmetry_setup`)."""
    if not board.square:
        return _RECTANGLE_EXPRESSIONS
    rows = 4 - board.rows
    # transpose(f), mf, transpose(m), m, f, transpose(b), transpose(mf); one transpose, the others from it
    return ("b", "tf", "mf", _down("flip(t)", 4 * rows), "m", "f", "t", _down("flip(tf)", 4 * rows))


def symmetry_setup(board: BoardShape) -> list[str]:
    """Lines that make ``m``, ``f`` and ``mf``: b mirrored, flipped, and both, on the board's own cells; on square
    boards also ``t``, b transposed, and ``tf``, the transpose of ``f`` (mirrored ``t``).

    The frame's mirror and flip move a smaller board out of the top-left corner; shifting it back
    (``cells_down``) by the missing columns or rows makes them the board's own. The transposes of the flipped and
    mirrored boards are ``t`` mirrored and flipped: one transpose (13 operations) and mirrors and flips (5 to 8)
    instead of four transposes."""
    columns, rows = 4 - board.cols, 4 - board.rows
    lines = [f"    m = {_down('mirror(b)', columns)}", f"    f = {_down('flip(b)', 4 * rows)}",
             f"    mf = {_down('mirror(f)', columns)}"]
    if board.square:
        lines += ["    t = transpose(b)", f"    tf = {_down('mirror(t)', columns)}"]
    return lines


def index_expression(cells, offset: int, board: str = "x", pext: bool = False) -> str:
    """Python expression of the flat weight index of a tuple on ``board`` (a uint64).

    A run of cells read from bit ``shift`` and placed at bit ``place`` of the index is
    ``((x >> shift) & mask) << place``, written as one shift and one mask:
    ``(x >> (shift - place)) & (mask << place)``. With ``pext``, a tuple of several runs whose cells
    ascend is one ``pext(x, mask)`` instead (:mod:`td2048.intrinsics`), the same index.
    """
    runs = tuple_runs(cells)
    if pext and len(runs) > 1 and list(cells) == sorted(cells):
        mask = sum(0xF << (4 * c) for c in cells)
        index = f"pext({board}, U64({hex(mask)}))"
        return f"U64({offset}) + {index}" if offset else index
    terms = []
    for shift, mask, place in runs:
        moved = shift - place
        source = board if moved == 0 else f"({board} >> U64({moved}))" if moved > 0 else \
            f"({board} << U64({-moved}))"
        terms.append(f"({source} & U64({hex(mask << place)}))")
    index = " | ".join(terms)
    return f"U64({offset}) + ({index})" if offset else f"({index})"


def _cell_code(cell: int, wide: bool) -> str:
    nibble = f"((lo >> U64({4 * cell})) & U64(0xf))"
    return f"({nibble} | (((hi >> U64({cell})) & U64(1)) << U64(4)))" if wide else nibble


def index_code(spec: NetworkSpec, wide: bool, pext: bool = False) -> tuple[list[str], list[str]]:
    """(lines that read the board ``x``, one flat-index expression per tuple).

    4-bit boards with 16**n tables read each tuple with shifts and masks, or ``pext`` (:func:`index_expression`).
    Wide boards (two words) and clamped networks read each used cell's code once, clamp it at K,
    and combine: index = offset + sum of min(code_i, K) * (K+1)**i.
    """
    if not wide and spec.clamp is None:
        offsets = spec.table_offsets
        return ["    lo = x"], [index_expression(c, o, "lo", pext)
                               for c, o in zip(spec.frame_tuples, offsets, strict=True)]
    top = spec.values_per_cell - 1  # K: 15 for unclamped 16**n tables on wide boards
    lines = ["    lo = x[0]", "    hi = x[1]"] if wide else ["    lo = x"]
    for cell in sorted({c for t in spec.frame_tuples for c in t}):
        lines.append(f"    k{cell} = min({_cell_code(cell, wide)}, U64({top}))")
    indices = []
    for cells, offset in zip(spec.frame_tuples, spec.table_offsets, strict=True):
        terms = [f"k{c}" if i == 0 else f"k{c} * U64({spec.values_per_cell ** i})" for i, c in enumerate(cells)]
        indices.append(f"U64({offset}) + " + " + ".join(terms) if offset else " + ".join(terms))
    return lines, indices


def feature_column(spec: NetworkSpec, k: int, t: int) -> int:
    """Where the index of tuple t on symmetric board k sits in a row of feature indices: tuple-major, each
    tuple's indices on the symmetric boards side by side (one vector gather reads them)."""
    return t * spec.isomorphisms + k


def vectors(spec: NetworkSpec, wide: bool, vector: bool) -> bool:
    """Whether a network's kernels compute its feature indices in vector registers: asked for (``vector``), 4 or 8
    symmetric boards, 4-bit cells and 16**n tables (:func:`td2048.intrinsics.symmetric_indices`)."""
    return vector and spec.isomorphisms >= 4 and not wide and spec.clamp is None


def symmetric_sources(board: BoardShape, n_iso: int) -> tuple[tuple[int, ...], ...]:
    """``[k][c]``: the cell of a board whose code frame cell c of its k-th symmetric board holds (-1: none, a cell
    off the board), for the first ``n_iso`` symmetric boards in the kernels' order."""
    sources = []
    for lands in symmetric_cells(board)[:n_iso]:
        source = [-1] * 16
        for c in board.frame_cells:
            source[lands[c]] = c
        sources.append(tuple(source))
    return tuple(sources)


IN_FLIGHT_FEATURES = 40  # two greedy games at a time up to this many features a board (the speed page's figures)


def games_in_flight(spec: NetworkSpec) -> int:
    """Greedy games a thread plays at a time (``greedy_block``): 2 on networks of at most IN_FLIGHT_FEATURES
    features a board, where each game's weights come while the other game computes; 1 on larger ones, where two
    games' weights crowd each other out of the caches and play slower than one."""
    return 2 if spec.n_features <= IN_FLIGHT_FEATURES else 1


def gathers(spec: NetworkSpec, gather: bool) -> bool:
    """Whether a network's kernels read its weights by vector gathers: asked for (``gather``), and 4 or 8
    symmetric boards to gather over."""
    return gather and spec.isomorphisms >= 4


def _feature_functions(spec: NetworkSpec, tracked: bool, wide: bool, tc: bool = False, records: bool = False,
                       pext: bool = False, gather: bool = False, short: bool = False, shared: bool = False,
                       state_values: bool = False, vector: bool = False) -> str:
    """Source of the functions on a board's feature indices: a row ``x`` of N_FEATURES flat indices.

    A move writes each candidate afterstate's indices once into a row of a scratch array
    (``feature_indices``: 8 symmetric boards, each tuple one shift and mask per run of cells), and
    asks for each weight's cache line as soon as its index is known (``asked_indices``: the same code
    with a prefetch after each index, from the register: a second pass that read the row back to ask
    cost as many loads again), reads its value from them
    (``value_of``) and, for the move it makes, updates the weights from the same row
    (``update_of``). The sums go in a fixed order, isomorphism by isomorphism, so results are
    the same bit for bit however a value is reached. (Rows of an array, not tuples: Numba
    compiles 32-wide tuples passed between inlined functions several times slower.)

    Float32 weights are added in float32 within a symmetric board, tuple by tuple, and the boards'
    sums in float64: a conversion a board rather than a weight (TDL2048+ adds in float32 throughout).
    Except with ``state_values``, whose expectation over new tiles adds each tile's changes to the
    afterstate's sum (expected_value_of), the same as evaluating each board whole only where the sums
    are exact, and with ``tc``, whose recipe was measured with float64 sums: there every weight is
    added in float64.

    These four are the largest functions of a network's kernels, and are inlined by LLVM
    (``forceinline``: compiled once, each call site then inlined as machine code) rather than by
    Numba (``inline='always'``: the function's IR copied into each caller, whose type inference
    then takes seconds per site): a network's kernels compile in about half the time, and run as
    fast (the benchmark pages have the figures).

    ``short``: 16-bit weights (``int16``, each a whole number of WEIGHT_STEP): a value is the exact integer
    sum of its weights times the step, and an update adds to each weight ``alpha_split * (target - V) /
    WEIGHT_STEP`` steps rounded down or up at random in proportion (so that an update of a fraction of a
    step still moves the weights by that much on average), each weight held
    within +-WEIGHT_LIMIT steps. An update draws one uniform number (``dirty`` is then the thread's random
    state, ``uint64[1]`` or more, one LCG step an update: td2048.rng.rounding_states); weight f rounds by
    it plus f times the golden ratio, mod 1 (rounding_offset). ``shared`` (threads on one table): a weight that an
    update leaves as it was is not written back (its store goes to the thread's spare weight, ``dirty[1]``).
    """
    n_tuples, n_iso = len(spec.tuples), spec.isomorphisms
    narrow = not (short or state_values or tc)  # float32 weights summed in float32 within a board (see above)
    def scaled(index: str) -> str:  # a weight's place in the array: its record's first float
        return f"U64({RECORD}) * ({index})" if records else index

    groups = [[feature_column(spec, k, t) for t in range(n_tuples)] for k in range(n_iso)]
    prefetch = "prefetch_far" if spec.nbytes >= FAR_PREFETCH_BYTES else "prefetch_read"
    lines = []
    if vectors(spec, wide, vector):  # the same rows, computed in vector registers (td2048.intrinsics)
        arguments = (symmetric_sources(spec.board, n_iso), tuple(tuple(tuple_runs(c)) for c in spec.frame_tuples),
                     tuple(spec.table_offsets), RECORD if records else 1)
        locality = 2 if prefetch == "prefetch_far" else 3  # as prefetch_far and prefetch_read ask
        lines += [f"SYMMETRIC_INDICES = symmetric_indices{(*arguments, -1)!r}",
                  f"ASKED_SYMMETRIC_INDICES = symmetric_indices{(*arguments, locality)!r}", "", ""]
    for asked in (False, True):  # feature_indices, and asked_indices: the same indices, each line asked for
        lines += ["@njit(forceinline=True)", "def asked_indices(w, b, out, r):" if asked else
                  "def feature_indices(b, out, r):",
                  '    """Write the flat weight index of every feature of b into row r of out (tuple-major:',
                  '    see td2048.kernels.codegen.feature_column)' + (
                      ', and ask for the cache line of each weight of ``w``\n    as soon as its index is known'
                      ' (no second pass reads the row back for it)."""' if asked else '."""')]
        if spec.stages:  # every index of a board goes to its stage's tables
            lines.append("    so = U64(STAGE_WEIGHTS) * U64(stage_of(b))")
        if vectors(spec, wide, vector):
            base = "so" if spec.stages else "U64(0)"
            lines += [f"    ASKED_SYMMETRIC_INDICES(w, b, out, r, {base})" if asked else
                      f"    SYMMETRIC_INDICES(out, b, out, r, {base})", "", ""]
            continue
        if n_iso > 1:
            lines += symmetry_setup(spec.board)
        reads, indices = index_code(spec, wide, pext)
        if spec.stages:
            indices = [f"so + {index}" for index in indices]
        # written out: an inlined call per board compiles slowly
        for k, expr in enumerate(symmetry_expressions(spec.board)[:n_iso]):
            lines += [f"    x = {expr}", *reads]
            for f, index in zip(groups[k], indices, strict=True):
                lines += [f"    i = {scaled(index)}", f"    out[r, {f}] = i", f"    {prefetch}(w, i)"] if asked \
                    else [f"    out[r, {f}] = {scaled(index)}"]
        lines += ["", ""]
    lines += ["@njit(inline='always')", "def prefetch_aux(aux, x, r):",
              '    """TC kernels: ask for the lines of the accumulators an update will write (else nothing; on',
              '    records they share the weight\'s line)."""']
    prefetch_tc = ["    for f in range(N_FEATURES):", f"        {prefetch}(aux, x[r, f] + x[r, f])"]
    if tc and tracked:  # tracked TC kernels: ``aux`` is (accumulators, chunk flags)
        prefetch_tc = ["    acc = aux[0]", prefetch_tc[0], prefetch_tc[1].replace("(aux,", "(acc,")]
    lines += prefetch_tc if tc and not records else ["    return"]
    if gathers(spec, gather):  # one gather a tuple: the same sums in the same order
        lines += ["", "", f"gathered = gathered_value({n_tuples}, {n_iso}{', True' if narrow else ''})"]
    lines += ["", "", "@njit(forceinline=True)", "def plain_value_of(w, x, r):",
              '    """V from the feature indices: the sum of their weights, symmetric board by symmetric board."""']
    load = "np.int64(w[x[r, {}]])" if short else "w[x[r, {}]]"  # 16-bit weights: exact integer sums
    for k, group in enumerate(groups):
        if narrow:  # a board's float32 weights added in float32: one conversion a board
            lines.append(f"    s{k} = np.float64(" + " + ".join(load.format(f) for f in group) + ")")
        else:
            first = load.format(group[0]) if short else f"np.float64({load.format(group[0])})"
            lines.append(f"    s{k} = {first}" + "".join(" + " + load.format(f) for f in group[1:]))
    total = " + ".join(f"s{k}" for k in range(n_iso))
    lines += [f"    return np.float64({total}) * WEIGHT_STEP" if short else f"    return {total}", "", ""]
    lines += ["@njit(forceinline=True)", "def value_of(w, x, r):",
              '    """V from the feature indices, as plain_value_of gives it (with gathers: one per tuple)."""']
    lines += ["    return gathered(w, x, r)" if gathers(spec, gather) else "    return plain_value_of(w, x, r)", "", ""]
    lines += ["@njit(forceinline=True)", "def update_of(w, dirty, x, r, target, alpha_split):",
              '    """Move V toward target: every feature weight gets alpha_split * (target - V).',
              "",
              "    Returns V after the update: the sum of the new weights, each read right after its add",
              "    (the course demo's rule; a weight that two symmetric boards share moves twice).",
              "    ``dirty`` marks the changed chunks in tracked kernels (see td2048.kernels.merge).",
              "    TC kernels: ``dirty`` is the accumulators (E, A per weight) and each weight moves by",
              "    u |E| / A, before E += u and A += |u| (temporal coherence: a weight whose errors keep",
              "    one sign keeps its rate, one whose errors cancel slows down). Tracked TC kernels:",
              "    ``dirty`` is (the accumulators, a byte per chunk of CHUNK weights set when it changes).",
              "    TC kernels on records: ``w`` is the records (weight, E, A; td2048.kernels.records).",
              '    """',
              "    u = np.float32(alpha_split * (target - plain_value_of(w, x, r)))"]
    if short:
        return "\n".join(lines[:-1] + _short_update(groups, shared))
    if tc:
        lines.append("    au = abs(u)")
        if tracked:
            lines += ["    flags = dirty[1]", "    dirty = dirty[0]"]
    for k, group in enumerate(groups):
        lines.append(f"    s{k} = np.float32(0.0)" if narrow else f"    s{k} = 0.0")
        for f in group:
            if records:  # the weight, then E and A in the next two floats: one cache line
                lines += [f"    i = x[r, {f}]", "    w[i] += u * (abs(w[i + U64(1)]) / w[i + U64(2)])",
                          "    w[i + U64(1)] += u", "    w[i + U64(2)] += au", f"    s{k} += w[i]"]
            elif tc:
                lines += [f"    i = x[r, {f}]", "    j = i + i", "    w[i] += u * (abs(dirty[j]) / dirty[j + U64(1)])",
                          "    dirty[j] += u", "    dirty[j + U64(1)] += au", f"    s{k} += w[i]"]
            else:
                lines += [f"    i = x[r, {f}]", "    w[i] += u", f"    s{k} += w[i]"]
        if tracked:  # after the weights: a flag store between them would hold up the next weight's load
            flag = "    dirty[i >> U64(DIRTY_SHIFT)] |= U8(1) << U8((i >> U64(CHUNK_SHIFT)) & U64(7))"
            if tc:  # the threads share these flags: a plain store, which no other thread's store can undo
                flag = "    flags[i >> U64(CHUNK_SHIFT)] = U8(1)"
            for f in group:
                lines += [f"    i = x[r, {f}]", flag]
    lines.append("    return " + " + ".join(f"np.float64(s{k})" if narrow else f"s{k}" for k in range(n_iso)))
    return "\n".join(lines)


def _short_update(groups: list[list[int]], shared: bool = False) -> list[str]:
    """update_of's body for 16-bit weights (see _feature_functions): whole steps, each weight's rounded at random.

    ``shared``: threads write one table. An update of a fraction of a step leaves many of its weights as they were,
    and writing such a weight back would still take its cache line from the other threads' caches: the store of a
    weight that does not change goes instead to the thread's spare weight (``dirty[1]``, an index in the unused
    gap after the first table, a cache line of its own per thread; td2048.rng.rounding_states), and writes 0
    there. Chosen without a branch (a branch per weight mispredicts); one thread keeps the plain store, whose
    address does not wait for the weight's load."""
    lines = ["    q = alpha_split * (target - plain_value_of(w, x, r)) / WEIGHT_STEP",
             "    q = min(max(q, -2.0 * WEIGHT_LIMIT), 2.0 * WEIGHT_LIMIT)",
             "    fixed = np.int64(np.floor(q * 4294967296.0))  # in 2**-32 steps",
             f"    z = dirty[0] * U64({ROUNDING_LCG[0]}) + U64({ROUNDING_LCG[1]})  # the update's random word",
             "    dirty[0] = z",
             *(["    spare = dirty[1]  # the thread's spare weight (see above)"] if shared else []),
             "    u = np.int64(z >> U64(32))  # its high half: uniform in [0, 2**32)"]
    f = 0
    for k, group in enumerate(groups):
        lines.append(f"    s{k} = 0")
        for feature in group:
            # weight f's draw: u + f x (the golden ratio's fraction), mod 1: each uniform, and spread evenly
            lines += [f"    i = x[r, {feature}]", f"    d = (fixed + ((u + {rounding_offset(f)}) & 0xFFFFFFFF)) >> 32"]
            lines += ["    old = np.int64(w[i])", "    v = min(max(old + d, -WEIGHT_LIMIT), WEIGHT_LIMIT)",
                      "    changed = v != old", "    w[i if changed else spare] = v if changed else 0"] if shared \
                else ["    v = min(max(np.int64(w[i]) + d, -WEIGHT_LIMIT), WEIGHT_LIMIT)", "    w[i] = v"]
            lines.append(f"    s{k} += v")
            f += 1
    lines.append("    return np.float64(" + " + ".join(f"s{k}" for k in range(len(groups))) + ") * WEIGHT_STEP")
    return lines


ROUNDING_LCG = (6364136223846793005, 1442695040888963407)  # 16-bit weights' random word: z <- a z + c (mod 2**64)


def rounding_offset(f: int) -> int:
    """Weight f's offset from an update's draw, in 2**-32: f x the golden ratio's fractional part (16-bit weights).
    The draws of an update's weights are then spread evenly over [0, 1), so that their roundings nearly cancel in
    the sum: the value after an update is within a step or so of the exact one."""
    return (f * 0x9E3779B9) % (1 << 32)


def symmetric_cells(board: BoardShape = FULL) -> list[list[int]]:
    """``[k][c]``: where frame cell c of a board lands on its k-th symmetric board (the kernels' order)."""
    return board.frame_symmetries()


def _expectation_function(spec: NetworkSpec, records: bool = False) -> str:
    """Source of ``expected_value(w, b)``: E[V] over the new tile on afterstate b, for state values.

    A new tile on an empty cell c changes only the features whose tuple covers c on some symmetric
    board; there the index grows by the tile's code times the cell's place value. So the
    afterstate's indices are read once (8 symmetric boards), its value summed once, and each
    (cell, tile) candidate costs only the weights that cover the cell: for 4x6, 12 of 32 per cell
    instead of 32 per candidate board, with no symmetric boards built per candidate.
    """
    n_tuples, n_iso = len(spec.tuples), spec.isomorphisms
    top = spec.values_per_cell - 1
    steps = (min(1, top), min(2, top))  # index steps of a new tile of code 1 and code 2 (clamped)
    if records:  # TC's records (weight, E, A): a weight's step is a record's
        steps = (RECORD * steps[0], RECORD * steps[1])
    lines = ["@njit(forceinline=True)", "def expected_value_of(w, b, x, r):",
             '    """E[V(b + new tile)]: the mean over empty cells of 0.9 V(tile 1 there) + 0.1 V(tile 2);',
             '    x: the feature indices of b."""']
    lines += [f"    i{k * n_tuples + t} = x[r, {feature_column(spec, k, t)}]"  # named board-major
              for k in range(n_iso) for t in range(n_tuples)]
    lines.append("    base = np.float64(w[i0])" + "".join(f" + w[i{f}]" for f in range(1, spec.n_features)))
    lines += ["    empty = empty_mask(b) & CELLS", "    n = 0", "    gain = 0.0"]
    maps = symmetric_cells(spec.board)
    for c in spec.board.frame_cells:
        covering = [(k * n_tuples + t, spec.values_per_cell ** cells.index(maps[k][c]))
                    for k in range(n_iso) for t, cells in enumerate(spec.frame_tuples) if maps[k][c] in cells]
        lines.append(f"    if empty & U64({hex(1 << (4 * c))}):  # cell {c}: {len(covering)} features cover it")
        lines.append("        n += 1")
        if not covering:
            continue
        lines += ["        d1 = 0.0", "        d2 = 0.0"]
        for feature, place in covering:
            lines += [f"        o = np.float64(w[i{feature}])",
                      f"        d1 += w[i{feature} + U64({steps[0] * place})] - o",
                      f"        d2 += w[i{feature} + U64({steps[1] * place})] - o"]
        lines.append("        gain += (1.0 - P_SECOND_TILE) * d1 + P_SECOND_TILE * d2")
    lines.append("    return base + gain / n if n > 0 else base")
    lines += ["", "", "@njit", "def expected_value(w, b):", "    x = np.empty((1, N_FEATURES), np.uint64)",
              "    r = np.int64(0)", "    index_row(b, x, r)", "    return expected_value_of(w, b, x, r)"]
    return "\n".join(lines)


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


{_feature_functions(spec, tracked, wide, tc, records, pext, gather, short, shared, state_values, vector)}


{_stage_functions(spec, tracked, tc, records)}


{template_text("network_calls")}


{_expectation_function(spec, records) if state_values else template_text("no_expectation")}


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
