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

A third, ``keep_freed_memory()``, is for processes that run one replication after another (the
sweeps' Spark workers): the next run reuses the pages of the last instead of faulting in new ones.
"""

from __future__ import annotations

import ctypes

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


_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Make this process's ``malloc`` keep the memory it frees instead of giving it back to the OS.

    glibc serves large blocks (a run's tables, event log and oracle arrays: up to a few GB) with
    ``mmap`` and returns them with ``munmap``, so every run of a replication sweep faulted its
    memory in anew, and on this virtual machine the kernel's zeroing of those fresh pages
    (``clear_page_erms``) was 14 % of the CPU time of a DCS replication (perf, notebook 52's run).
    With ``mmap`` off and no trimming, freed blocks stay in the heap and the next run reuses
    them.  Measured, two runs in one process: DCS against probabilistic clocks (notebook 52's
    replication) 46.3 / 46.0 -> 43.0 / 39.7 CPU-s; free-scale bench case, 2nd and 3rd runs,
    13.9 / 12.3 -> 10.5 / 11.4 s (oracle 3.6 / 3.9 -> 3.2 / 3.2 s); same results, peak memory
    1181 -> 1290 MB.  The process keeps its peak memory until it exits.  Returns False where the
    C library has no ``mallopt`` (not glibc), which changes nothing else."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:  # pragma: no cover - not glibc
        return False
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
