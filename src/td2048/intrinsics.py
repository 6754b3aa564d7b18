"""Machine instructions the kernels ask LLVM for by name, and whether this machine runs them fast.

``pext(x, mask)`` (BMI2's parallel bit extract) gathers the bits of ``x`` under ``mask`` into the low bits of
the result, in order: one instruction reads a tuple whose cells lie in several runs (``012456``:
``pext(x, 0x0fff0fff)``), where shifts and masks take two or three per run. The generated kernels use it only
where :func:`fast_pext` says so (:mod:`td2048.kernels.codegen` writes either form; both give the same
indices).

``pdep(x, mask)`` (its inverse) deposits the low bits of ``x`` at the set bits of ``mask``: ``pdep(1 << k, m)`` is
the k-th lowest set bit of ``m``, where a new tile lands (:func:`td2048.games.bitboard.nth_flag_shift`).

``symmetric_indices(...)`` computes a board's feature indices on its symmetric boards in vector registers: the
board's 16 codes spread into 16 bytes, each symmetric board one byte shuffle of them (``vpshufb``), and each
tuple's indices on every board a few vector shifts and masks, stored into the row with one vector store. The
generated kernels use it where :func:`fast_vector_indices` says so (the same rows as the scalar code).

``gathered_value(n_tuples, lanes)`` sums a row of feature weights with one vector gather per tuple (AVX2's and
AVX-512's ``vgather``): the row holds each tuple's indices on the ``lanes`` symmetric boards side by side, so
one gather reads a tuple's weights on every board, and the boards' sums are added in the same order as the
plain code adds them (the same value, bit for bit). The kernels use it where :func:`fast_gather` says so.
"""

from __future__ import annotations

import functools
import os

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# CPUs with BMI2 whose pext is microcode (AMD Zen 1 and 2: tens of cycles, slower than shifts and masks)
_SLOW_PEXT_CPUS = ("znver1", "znver2", "bdver4", "excavator")
# CPUs (LLVM's names) where feature indices computed in vectors were measured to beat the scalar code (the speed
# page has the figures); elsewhere the scalar code, the safe guess
_FAST_VECTOR_INDEX_CPUS = ("rocketlake",)
# CPUs (LLVM's names) whose gathers were measured to beat scalar loads in the kernels (the speed page has the
# figures); elsewhere scalar loads, which won on the other CPU measured
_FAST_GATHER_CPUS = ("emeraldrapids",)


def _bmi2_intrinsic(name: str):
    """An intrinsic ``(x, mask) -> uint64`` of BMI2's instruction ``name`` (``pext`` or ``pdep``; uint64 in and out).

    Compiles only for a CPU with BMI2: callers check :func:`fast_pext` (the two run alike) when they compile."""
    def instruction(typingctx, x, mask):
        if not (isinstance(x, types.Integer) and isinstance(mask, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]),
                                                      f"llvm.x86.bmi.{name}.64")
            return builder.call(function, [args[0], args[1]])

        return types.uint64(types.uint64, types.uint64), codegen

    instruction.__name__ = name
    return intrinsic(instruction)


# x's bits under mask, packed into the low bits, in order
pext = _bmi2_intrinsic("pext")
# the low bits of x deposited, in order, at the set bits of mask
pdep = _bmi2_intrinsic("pdep")


def _has_feature(name: str) -> bool:
    """Whether the CPU that Numba compiles for has the feature: the host's CPU, unless ``NUMBA_CPU_NAME``
    names another, for which no guess is made (False)."""
    import llvmlite.binding as llvm
    from numba.core import config

    if config.CPU_NAME not in (None, "host"):
        return False
    try:
        return bool(llvm.get_host_cpu_features().get(name, False))
    except RuntimeError:  # llvmlite cannot read this CPU's features
        return False


def _use(variable: str, available: bool, fast_on) -> bool:
    """Whether the kernels use an instruction the CPU has (``available``): ``$variable`` 0 or 1 decides, else
    ``fast_on(the host CPU's LLVM name)``."""
    import llvmlite.binding as llvm

    if not available:
        return False
    choice = os.environ.get(variable, "")
    if choice in ("0", "1"):
        return choice == "1"
    return fast_on(llvm.get_host_cpu_name())


@functools.cache
def has_pext() -> bool:
    """Whether the CPU that Numba compiles for has BMI2's ``pext`` (fast or not): the host's CPU, unless
    ``NUMBA_CPU_NAME`` names another, for which no guess is made (False).

    Returns
    -------
    bool
    """
    return _has_feature("bmi2")


@functools.cache
def has_avx2() -> bool:
    """Whether the CPU that Numba compiles for has AVX2, and so vector gathers (fast or not): the host's CPU,
    unless ``NUMBA_CPU_NAME`` names another, for which no guess is made (False).

    Returns
    -------
    bool
    """
    return _has_feature("avx2")


@functools.cache
def fast_pext() -> bool:
    """Whether the kernels read tuples with ``pext`` on this machine.

    True where the CPU has it (:func:`has_pext`) and runs it in hardware (not AMD's Zen 1 and 2, which run it in
    microcode). ``TD2048_PEXT=0`` turns it off (``1``: on wherever the CPU has it), for comparing the two forms
    on one machine.

    Returns
    -------
    bool
    """
    return _use("TD2048_PEXT", has_pext(), lambda cpu: cpu not in _SLOW_PEXT_CPUS)


@functools.cache
def gathered_value(n_tuples: int, lanes: int, narrow: bool = False):
    """An intrinsic ``(w, x, r) -> float64``: the sum of the weights ``w[x[r, f]]`` of a row whose ``lanes``
    symmetric boards' indices of tuple t sit at ``x[r, t * lanes : (t + 1) * lanes]``.

    Each board's sum is its tuples' weights added in tuple order, in the weights' own type (``narrow``; else in
    float64), and the boards' sums are added in float64, in board order: what ``np.float64(w[a] + w[b] + ...)``
    (else ``np.float64(w[a]) + w[b] + ...``) per board, then ``s0 + s1 + ...``, gives, bit for bit.
    One gather per tuple reads its weights on every board. Compiles only for a CPU with AVX2 (callers check
    :func:`fast_gather`); ``w`` a C-contiguous float array, ``x`` a C-contiguous uint64 matrix.

    Parameters
    ----------
    n_tuples : int
        Tuples in a row.
    lanes : int
        Symmetric boards in a row (the vector's width).
    narrow : bool
        Float weights: each board's sum in their type (float32), not in float64.
    """
    @intrinsic
    def gathered(typingctx, w, x, r):
        if not (isinstance(w, types.Array) and isinstance(x, types.Array) and w.layout == "C"
                and x.layout == "C" and x.ndim == 2 and isinstance(w.dtype, types.Float)):
            return None

        def codegen(context, builder, signature, args):
            i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
            weights = context.make_array(signature.args[0])(context, builder, args[0])
            rows = context.make_array(signature.args[1])(context, builder, args[1])
            element = context.get_value_type(signature.args[0].dtype)
            vector, wide = ir.VectorType(element, lanes), ir.VectorType(f64, lanes)
            indices, pointers = ir.VectorType(i64, lanes), ir.VectorType(weights.data.type, lanes)
            gather = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(vector, [pointers, i32, ir.VectorType(ir.IntType(1), lanes), vector]),
                f"llvm.masked.gather.v{lanes}{'f32' if isinstance(element, ir.FloatType) else 'f64'}.v{lanes}p0")
            every = ir.Constant(ir.VectorType(ir.IntType(1), lanes), [ir.Constant(ir.IntType(1), 1)] * lanes)
            size = context.get_abi_sizeof(element)
            base = builder.insert_element(ir.Constant(indices, ir.Undefined), builder.ptrtoint(weights.data, i64),
                                          ir.Constant(i32, 0))
            base = builder.shuffle_vector(base, ir.Constant(indices, ir.Undefined),
                                          ir.Constant(ir.VectorType(i32, lanes), [0] * lanes))
            row = builder.mul(context.cast(builder, args[2], signature.args[2], types.int64),
                              ir.Constant(i64, n_tuples * lanes))
            total = None
            for t in range(n_tuples):
                place = builder.gep(rows.data, [builder.add(row, ir.Constant(i64, t * lanes))])
                index = builder.load(builder.bitcast(place, indices.as_pointer()), align=8)
                address = builder.add(base, builder.mul(index, ir.Constant(indices, [ir.Constant(i64, size)] * lanes)))
                values = builder.call(gather, [builder.inttoptr(address, pointers), ir.Constant(i32, size), every,
                                               ir.Constant(vector, ir.Undefined)])
                if isinstance(element, ir.FloatType) and not narrow:
                    values = builder.fpext(values, wide)
                total = values if total is None else builder.fadd(total, values)
            if isinstance(element, ir.FloatType) and narrow:  # each board's float32 sum, then float64
                total = builder.fpext(total, wide)
            value = builder.extract_element(total, ir.Constant(i32, 0))
            for k in range(1, lanes):
                value = builder.fadd(value, builder.extract_element(total, ir.Constant(i32, k)))
            return value

        return types.float64(w, x, r), codegen

    return gathered


@functools.cache
def fast_gather() -> bool:
    """Whether the kernels read a row's weights with vector gathers (:func:`gathered_value`) on this machine.

    True where the CPU that Numba compiles for is the host's, has AVX2, and is one whose gathers were measured
    to beat scalar loads (Intel's Emerald Rapids); on the others measured (an Intel Xeon that LLVM names
    ``rocketlake``) scalar loads won, and on the rest they are the safe guess. ``TD2048_GATHER=1`` turns it on
    wherever the CPU has AVX2 (``0``: off), for comparing the two forms on one machine.

    Returns
    -------
    bool
    """
    return _use("TD2048_GATHER", has_avx2(), lambda cpu: cpu in _FAST_GATHER_CPUS)


@functools.cache
def fast_vector_indices() -> bool:
    """Whether the kernels compute feature indices in vector registers (:func:`symmetric_indices`) on this machine.

    True where the CPU that Numba compiles for is the host's, has AVX2, and is one where they were measured to
    beat the scalar code (an Intel Xeon that LLVM names ``rocketlake``); elsewhere the scalar code, unmeasured
    there. ``TD2048_VECTOR_INDICES=1`` turns them on wherever the CPU has AVX2 (``0``: off), for comparing the two
    forms on one machine.

    Returns
    -------
    bool
    """
    return _use("TD2048_VECTOR_INDICES", has_avx2(), lambda cpu: cpu in _FAST_VECTOR_INDEX_CPUS)


@functools.cache
def symmetric_indices(sources: tuple[tuple[int, ...], ...], runs: tuple[tuple[tuple[int, int, int], ...], ...],
                      offsets: tuple[int, ...], scale: int = 1, locality: int = -1):
    """An intrinsic ``(w, b, x, r, base) -> none``: the feature indices of board b on its symmetric boards, computed
    in vectors, written into row r of x tuple-major (tuple t's index on symmetric board k at ``x[r, t * n + k]``),
    and with ``locality`` 2 or 3 each index's line of ``w`` asked for (``llvm.prefetch``: into L2, or every level).

    Symmetric board k holds in cell c the code of b's cell ``sources[k][c]`` (-1: an empty cell). Tuple t's index on
    a board is ``scale * (base + offsets[t] + sum of ((board >> shift) & mask) << place)`` over its ``runs[t]``
    (:func:`td2048.spec.tuple_runs`): what the scalar code writes, bit for bit. The board's 16 codes are spread into
    a 16-byte vector, each symmetric board is one byte shuffle of it (the n boards side by side, ``vpshufb`` on
    AVX-512, two or four shuffles on AVX2), packed back into 64-bit lanes, and each tuple's n indices are one
    shift and mask per run of its cells; the n indices of a tuple are one vector store. 4-bit cells only; ``x`` a
    C-contiguous uint64 matrix, ``w`` any C-contiguous array (unread when ``locality`` is -1).

    Parameters
    ----------
    sources : tuple of tuple of int
        Per symmetric board, per frame cell (16), the cell of b whose code it holds, or -1.
    runs : tuple of tuple of (int, int, int)
        Per tuple, its runs of consecutive cells: (bit shift in the board, mask, bit place in the index).
    offsets : tuple of int
        Per tuple, its table's first index.
    scale : int
        A factor on every index (TC's records: the record's size in floats).
    locality : int
        -1: no prefetch; 2: each weight's line asked for into L2 (``prefetcht1``); 3: into L1.
    """
    n = len(sources)

    @intrinsic
    def indices(typingctx, w, b, x, r, base):
        if not (isinstance(w, types.Array) and isinstance(x, types.Array) and isinstance(b, types.Integer)
                and isinstance(base, types.Integer) and x.ndim == 2 and x.layout == "C"):
            return None

        def codegen(context, builder, signature, args):
            i8, i16, i32, i64 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
            v16, lanes = ir.VectorType(i8, 16), ir.VectorType(i64, n)

            def splat(value):
                return ir.Constant(lanes, [ir.Constant(i64, value)] * n)

            word = builder.insert_element(ir.Constant(ir.VectorType(i64, 2), None), args[1], ir.Constant(i32, 0))
            packed = builder.bitcast(word, v16)  # byte j: cells 2j (low nibble) and 2j + 1 (high)
            low = builder.and_(packed, ir.Constant(v16, [0x0F] * 16))
            high = builder.lshr(packed, ir.Constant(v16, [4] * 16))
            codes = builder.shuffle_vector(low, high, ir.Constant(ir.VectorType(i32, 16),
                                                                  [i for j in range(8) for i in (j, 16 + j)]))
            empty = ir.Constant(v16, [0] * 16)

            def cells(parity):  # the codes of every symmetric board's even (or odd) cells, board after board
                picks = [16 if sources[k][2 * j + parity] < 0 else sources[k][2 * j + parity]
                         for k in range(n) for j in range(8)]
                return builder.shuffle_vector(codes, empty, ir.Constant(ir.VectorType(i32, 8 * n), picks))

            odd = ir.VectorType(i16, 4 * n)  # codes < 16: a 16-bit shift moves each into its byte's high nibble
            odd = builder.bitcast(builder.shl(builder.bitcast(cells(1), odd), ir.Constant(odd, [4] * (4 * n))),
                                  ir.VectorType(i8, 8 * n))
            boards = builder.bitcast(builder.or_(cells(0), odd), lanes)
            first = builder.insert_element(ir.Constant(lanes, None), context.cast(builder, args[4], signature.args[4],
                                                                                 types.uint64), ir.Constant(i32, 0))
            bases = builder.shuffle_vector(first, ir.Constant(lanes, None), ir.Constant(ir.VectorType(i32, n), [0] * n))
            weights = context.make_array(signature.args[0])(context, builder, args[0])
            rows = context.make_array(signature.args[2])(context, builder, args[2])
            row = builder.mul(context.cast(builder, args[3], signature.args[3], types.int64),
                              ir.Constant(i64, len(runs) * n))
            if locality >= 0:
                prefetch = cgutils.get_or_insert_function(
                    builder.module, ir.FunctionType(ir.VoidType(), [weights.data.type, i32, i32, i32]),
                    "llvm.prefetch.p0")
            for t, tuple_runs in enumerate(runs):
                index = None
                for shift, mask, place in tuple_runs:
                    moved = shift - place
                    part = builder.lshr(boards, splat(moved)) if moved > 0 else \
                        builder.shl(boards, splat(-moved)) if moved < 0 else boards
                    part = builder.and_(part, splat(mask << place))
                    index = part if index is None else builder.or_(index, part)
                index = builder.add(builder.add(index, splat(offsets[t])), bases)
                if scale != 1:
                    index = builder.mul(index, splat(scale))
                at = builder.gep(rows.data, [builder.add(row, ir.Constant(i64, t * n))])
                builder.store(index, builder.bitcast(at, lanes.as_pointer()), align=8)
                if locality >= 0:
                    for k in range(n):
                        line = builder.gep(weights.data, [builder.extract_element(index, ir.Constant(i32, k))])
                        builder.call(prefetch, [line, ir.Constant(i32, 0), ir.Constant(i32, locality),
                                                ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return types.none(w, b, x, r, base), codegen

    return indices
