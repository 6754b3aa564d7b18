"""Machine instructions the kernels ask LLVM for by name, and whether this machine runs them fast.

``pext(x, mask)`` (BMI2's parallel bit extract) gathers the bits of ``x`` under ``mask`` into the low bits of
the result, in order: one instruction reads a tuple whose cells lie in several runs (``012456``:
``pext(x, 0x0fff0fff)``), where shifts and masks take two or three per run. The generated kernels use it only
where :func:`fast_pext` says so (:mod:`td2048.kernels.codegen` writes either form; both give the same
indices).

``pdep(x, mask)`` (its inverse) deposits the low bits of ``x`` at the set bits of ``mask``: ``pdep(1 << k, m)`` is
the k-th lowest set bit of ``m``, where a new tile lands (:func:`td2048.games.bitboard.nth_flag_shift`).

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
