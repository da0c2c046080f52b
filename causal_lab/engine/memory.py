"""Memory helpers for kernels whose tables outgrow the caches.

At paper scale a kernel's per-node-pair tables hold tens of millions of entries (N = 4096: 16.8 M
per table), and each event of a broadcast touches the rows of a different receiver: most of an
event's time is then spent waiting for cache lines, not computing.  Two tools help:

* ``prefetch(a, k)`` asks the CPU to start loading the line of ``a``'s k-th element (a hint, no
  effect on results): a kernel calls it for the *next* event's rows while it handles the current
  one, so the loads overlap.
* ``zeros(shape, dtype, huge_pages)`` chooses the page size of a large zeroed table: 4 KiB pages
  when a run touches few of its entries (only those pages are ever zeroed), 2 MiB pages when it
  touches most (fewer page faults and TLB misses).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

try:  # numpy's switch for madvise(MADV_HUGEPAGE) on its large allocations (private, numpy >= 1.20)
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # pragma: no cover - another numpy layout: keep its default pages
    def _set_madvise_hugepage(enabled):
        return enabled


@intrinsic
def prefetch(typingctx, array, index):
    """Hint the CPU to load the cache line of element ``index`` (in memory order) of the
    C-contiguous ``array`` for reading.  Never faults, even out of bounds: no check needed."""
    if not isinstance(array, numba.types.Array) or not isinstance(index, numba.types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        offset = builder.mul(context.cast(builder, args[1], signature.args[1], numba.types.intp),
                             ary.itemsize)
        address = builder.add(builder.ptrtoint(ary.data, cgutils.intp_t), offset)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]), "llvm.prefetch.p0")
        # read, high temporal locality, data cache
        builder.call(fn, [builder.inttoptr(address, byte_ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return numba.types.void(array, index), codegen


def zeros(shape, dtype, huge_pages: bool) -> np.ndarray:
    """A zeroed array.  ``huge_pages=False``: the OS maps its memory on first touch, 4 KiB at a
    time, so a run that touches one entry per row of a table zeroes 4 KiB per row instead of the
    whole table (numpy asks for 2 MiB huge pages on large arrays: at N = 4096 that zeroed 67 MB
    per table, most of the CPU time of a run with one publication).  ``True``: numpy's huge
    pages, for runs that touch most of the table anyway."""
    previous = _set_madvise_hugepage(huge_pages)
    try:
        return np.zeros(shape, dtype)
    finally:
        _set_madvise_hugepage(previous)
