"""Source of a network's feature functions: each tuple read with constant shifts and masks.

For the classic 4x6 network the first tuple ``012345`` reads ``x & 0xffffff`` and the third
``012456`` reads ``(x & 0xfff) | ((x >> 4) & 0xfff000)``: the runs of consecutive cells of
:func:`td2048.spec.tuple_runs`, one shift and one mask each (or one ``pext``, or all of a board's indices in
vector registers). From the indices, the functions that value a board and update its weights (float32, 16-bit,
TC), and with state values the expectation over the new tile. :mod:`td2048.kernels.codegen` puts them in each
network's generated module.
"""

from __future__ import annotations

from td2048.games.shape import FULL, BoardShape
from td2048.kernels.records import RECORD
from td2048.spec import NetworkSpec, tuple_runs

# Networks of at least this many bytes of weights (4x6 and larger) prefetch them into L2 and not L1
# (prefetcht1): a move asks for up to 4 x 32 lines (4x6; 4 x 64 on 8x6), which in L1 push out what the move
# itself works on. Cache-resident networks prefetch into L1.
FAR_PREFETCH_BYTES = 64 << 20


# the symmetric boards of a rectangle, in the order of td2048.games.bitboard.symmetric_boards


_RECTANGLE_EXPRESSIONS = ("b", "mf", "m", "f")  # identity, half turn, mirror, flip


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


def gathers(spec: NetworkSpec, gather: bool) -> bool:
    """Whether a network's kernels read its weights by vector gathers: asked for (``gather``), and 4 or 8
    symmetric boards to gather over."""
    return gather and spec.isomorphisms >= 4


def feature_functions(spec: NetworkSpec, tracked: bool, wide: bool, tc: bool = False, records: bool = False,
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
                  '    see td2048.kernels.features.feature_column)' + (
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
    """update_of's body for 16-bit weights (see feature_functions): whole steps, each weight's rounded at random.

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


def expectation_function(spec: NetworkSpec, records: bool = False) -> str:
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
