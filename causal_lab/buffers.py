"""Growable arrays for the compiled kernels.

Kernels fill tables whose final size is not known in advance (packets, log entries, waiting
lists).  They keep them in numpy arrays with a fill level and double the capacity when full:
amortised O(1) appends like a list, but each read or write is a plain memory access, whereas a
``numba.typed.List`` access is a call into C.
"""

import numba
import numpy as np


@numba.njit(cache=True)
def grown(a, need):
    """``a`` itself if it holds at least ``need`` items, else a copy at least twice as large."""
    if need <= len(a):
        return a
    b = np.empty(max(need, 2 * len(a)), a.dtype)
    b[:len(a)] = a
    return b
