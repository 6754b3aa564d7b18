"""Machine instructions the kernels ask LLVM for by name, and whether this machine runs them fast.

``pext(x, mask)`` (BMI2's parallel bit extract) gathers the bits of ``x`` under ``mask`` into the low bits of
the result, in order: one instruction reads a tuple whose cells lie in several runs (``012456``:
``pext(x, 0x0fff0fff)``), where shifts and masks take two or three per run. The generated kernels use it only
where :func:`fast_pext` says so (:mod:`td2048.kernels.codegen` writes either form; both give the same
indices).
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


@intrinsic
def pext(typingctx, x, mask):
    """``x``'s bits under ``mask``, packed into the low bits (x86 ``pext``; uint64 in and out).

    Compiles only for a CPU with BMI2: callers check :func:`fast_pext` when they write the code."""
    if not (isinstance(x, types.Integer) and isinstance(mask, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]),
                                                  "llvm.x86.bmi.pext.64")
        return builder.call(function, [args[0], args[1]])

    return types.uint64(types.uint64, types.uint64), codegen


@functools.cache
def has_pext() -> bool:
    """Whether the CPU that Numba compiles for has BMI2's ``pext`` (fast or not): the host's CPU, unless
    ``NUMBA_CPU_NAME`` names another, for which no guess is made (False).

    Returns
    -------
    bool
    """
    import llvmlite.binding as llvm
    from numba.core import config

    if config.CPU_NAME not in (None, "host"):
        return False
    try:
        return bool(llvm.get_host_cpu_features().get("bmi2", False))
    except RuntimeError:  # llvmlite cannot read this CPU's features
        return False


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
    import llvmlite.binding as llvm

    if not has_pext():
        return False
    choice = os.environ.get("TD2048_PEXT", "")
    if choice in ("0", "1"):
        return choice == "1"
    return llvm.get_host_cpu_name() not in _SLOW_PEXT_CPUS
