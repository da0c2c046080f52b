"""Helpers for the growable lists that compiled kernels fill during a run.

Kernels append to ``numba.typed.List`` (amortised O(1), no size known in advance).  Turning
such a list into a numpy array from Python iterates element by element through the
interpreter (seconds for 10^6 items), so kernels convert their outputs here, in compiled code.
"""

import numba
import numpy as np


@numba.njit(cache=True)
def to_array(items, like):
    """A numpy array with the contents of typed list ``items`` and the dtype of array ``like``."""
    out = np.empty(len(items), like.dtype)
    for k in range(len(items)):
        out[k] = items[k]
    return out
