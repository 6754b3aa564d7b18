"""Software prefetch for compiled loops (Numba has none): LLVM's ``llvm.prefetch`` on an array element.

A loop that visits scattered cache lines waits on memory for each one in turn; asking for the
lines a few iterations ahead lets those waits overlap (see td2048.kernels.merge, where it
halves the time of a merge).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _prefetch(write: int):
    @intrinsic
    def prefetch(typingctx, array, index):
        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            address = builder.gep(data, [args[1]])
            i32 = ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32]), "llvm.prefetch.p0")
            # write or read; locality 3: keep in all cache levels; 1: a data (not instruction) cache
            builder.call(function, [address, ir.Constant(i32, write), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return types.void(array, index), codegen

    return prefetch


prefetch_read = _prefetch(0)  # array[index]'s line will be read soon
prefetch_write = _prefetch(1)  # array[index]'s line will be written soon
