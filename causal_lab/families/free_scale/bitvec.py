"""Bit vectors of the free-scale protocol (spec §2.1, §3.6, §5.4) as rows of ``uint64`` bitmaps.

Positions are the super peer's sequence numbers, 1, 2, ...; position ``x`` is bit ``x % 64`` of
word ``x // 64``.  A node's vector is one row of a 2-D bitmap wide enough for every position of
the run (a few hundred words), so every read and write is one memory access.  What the paper's
compaction keeps (and the byte accounting charges) is tracked beside the row:

* a *receive-type* vector (``RV`` at internal peers, ``VTx[SP]`` at external peers) only gains
  bits, and the super peer numbers consecutively: it is a run of ones then a ragged tail.  We keep
  ``first0`` (its first cleared position) and ``last1`` (its last set position); bit 0 is stored
  set, since "a bit at position 0 is assumed to be always set" (the FIFO test ``RV[Last]`` with
  ``Last = 0`` must hold);
* a *dependency-type* vector (``DV``, the bit-vector entry of ``CI``, the super peer's ``I``)
  has each bit set once and cleared later: we keep ``lo`` and ``hi``, its first and last set
  positions (0 and 0 when empty).  Position 0 is never stored: ``DV[Last] := 0`` or
  ``CI[SP][Last] := 1`` with ``Last = 0`` are no-ops (spec §2.1, A13).

A vector carried by a message is a slice of a shared word pool: ``(offset, first word, words)``,
plus its ``lo``/``hi`` for the byte count.  Byte sizes are spec §5.4: a dependency-type vector is a
4-byte offset plus its packed span from first to last set bit (nothing when empty); a
receive-type vector is the offset plus the span from its first cleared to its last set bit.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from causal_lab.engine.jit import njit

ONE = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
OFFSET_BYTES = 4  # the offset of a compacted vector (spec §5.4)


def words_for(positions: int) -> int:
    """Words of a bitmap row holding positions 0..positions."""
    return positions // 64 + 1


@njit(inline="always")
def _bit(x):
    return ONE << np.uint64(x & 63)


@njit(inline="always")
def get(bm, r, x):
    return (bm[r, x >> 6] & _bit(x)) != 0


@njit(inline="always")
def dep_bytes(lo, hi):
    """Bytes of a dependency-type vector whose set bits span lo..hi (lo = 0: empty)."""
    if lo == 0:
        return 0
    return OFFSET_BYTES + (hi - lo + 8) // 8


@njit(inline="always")
def recv_bytes(first0, last1):
    """Bytes of a receive-type vector: the offset, then first cleared .. last set bit."""
    span = last1 - first0 + 1
    return OFFSET_BYTES + (max(span, 0) + 7) // 8


@njit(inline="always")
def first_set(bm, r, lo, hi):
    """Lowest set position in lo..hi of row r, or 0 if none."""
    if lo > hi:
        return 0
    w = lo >> 6
    word = bm[r, w] & (ALL << np.uint64(lo & 63))
    last_w = hi >> 6
    while True:
        if word != 0:
            x = (w << 6) + np.int64(trailing_zeros(word))
            return x if x <= hi else 0
        w += 1
        if w > last_w:
            return 0
        word = bm[r, w]


@njit(inline="always")
def last_set(bm, r, lo, hi):
    """Highest set position in lo..hi of row r, or 0 if none."""
    if lo > hi:
        return 0
    w = hi >> 6
    word = bm[r, w] & (ALL >> np.uint64(63 - (hi & 63)))
    first_w = lo >> 6
    while True:
        if word != 0:
            x = (w << 6) + 63 - np.int64(leading_zeros(word))
            return x if x >= lo else 0
        w -= 1
        if w < first_w:
            return 0
        word = bm[r, w]


@njit(inline="always")
def first_clear(bm, r, x):
    """Lowest cleared position >= x of row r (the row must have a cleared bit above x)."""
    w = x >> 6
    word = ~bm[r, w] & (ALL << np.uint64(x & 63))
    while word == 0:
        w += 1
        word = ~bm[r, w]
    return (w << 6) + np.int64(trailing_zeros(word))


# ------------------------------------------------------------------------------------------
# receive-type vectors: (row, first0[r], last1[r])
# ------------------------------------------------------------------------------------------


@njit
def recv_init(bm, first0, r):
    """Empty receive-type vector: bit 0 set, first cleared position 1."""
    bm[r, 0] |= ONE
    first0[r] = 1


@njit(inline="always")
def recv_put(bm, first0, last1, r, x):
    """Set position x; returns True if it was not set."""
    b = _bit(x)
    w = x >> 6
    if bm[r, w] & b:
        return False
    bm[r, w] |= b
    if x > last1[r]:
        last1[r] = x
    if x == first0[r]:
        first0[r] = first_clear(bm, r, x + 1)
    return True


# ------------------------------------------------------------------------------------------
# dependency-type vectors: (row, lo[r], hi[r])
# ------------------------------------------------------------------------------------------


@njit(inline="always")
def dep_put(bm, lo, hi, r, x):
    """Set position x (position 0: no-op)."""
    if x <= 0:
        return
    bm[r, x >> 6] |= _bit(x)
    if lo[r] == 0 or x < lo[r]:
        lo[r] = x
    if x > hi[r]:
        hi[r] = x


@njit(inline="always")
def _refit(bm, lo, hi, r):
    """Recompute lo/hi after bits inside the old span were cleared."""
    a = first_set(bm, r, lo[r], hi[r])
    if a == 0:
        lo[r] = 0
        hi[r] = 0
    else:
        hi[r] = last_set(bm, r, a, hi[r])
        lo[r] = a


@njit(inline="always")
def dep_drop(bm, lo, hi, r, x):
    """Clear position x (position 0 or a cleared bit: no-op)."""
    if x <= 0 or not get(bm, r, x):
        return
    bm[r, x >> 6] &= ~_bit(x)
    if x == lo[r] or x == hi[r]:
        _refit(bm, lo, hi, r)


@njit(inline="always")
def dep_andnot(bm, lo, hi, r, pool, off, w0, nw):
    """Row r := row r & ~v for the pooled vector v = (off, w0, nw)."""
    if lo[r] == 0 or nw == 0:
        return
    a = max(w0, lo[r] >> 6)
    b = min(w0 + nw - 1, hi[r] >> 6)
    changed = False
    for w in range(a, b + 1):
        v = pool[off + w - w0]
        if bm[r, w] & v:
            bm[r, w] &= ~v
            changed = True
    if changed:
        _refit(bm, lo, hi, r)


@njit(inline="always")
def dep_clear(bm, lo, hi, r):
    """Empty the vector (zero the words of its span)."""
    if lo[r] == 0:
        return
    for w in range(lo[r] >> 6, (hi[r] >> 6) + 1):
        bm[r, w] = np.uint64(0)
    lo[r] = 0
    hi[r] = 0


@njit(inline="always")
def pack(bm, lo, hi, r, pool, top):
    """Copy the span of row r into ``pool`` at ``top``; returns (first word, words).  The pool
    must hold ``top + words`` words (``span_words``)."""
    if lo[r] == 0:
        return 0, 0
    w0 = lo[r] >> 6
    nw = (hi[r] >> 6) - w0 + 1
    for k in range(nw):
        pool[top + k] = bm[r, w0 + k]
    return w0, nw


@njit(inline="always")
def span_words(lo, hi):
    return 0 if lo == 0 else (hi >> 6) - (lo >> 6) + 1


@njit(inline="always")
def unpack_or(bm, lo, hi, r, pool, off, w0, nw, vlo, vhi):
    """Row r |= pooled vector (off, w0, nw) whose set bits span vlo..vhi."""
    if nw == 0:
        return
    for k in range(nw):
        bm[r, w0 + k] |= pool[off + k]
    if lo[r] == 0 or vlo < lo[r]:
        lo[r] = vlo
    if vhi > hi[r]:
        hi[r] = vhi


@njit(inline="always")
def first_missing(pool, off, w0, nw, bm, r, start):
    """Lowest position set in the pooled vector but cleared in row r, scanning from word
    ``start`` of the vector (words before it are known to be covered); returns
    (position or 0, word index to resume from)."""
    for k in range(start, nw):
        miss = pool[off + k] & ~bm[r, w0 + k]
        if miss:
            return ((w0 + k) << 6) + np.int64(trailing_zeros(miss)), k
    return 0, nw


@njit(inline="always")
def last_missing(pool, off, w0, nw, bm, r, start):
    """Highest position set in the pooled vector but cleared in row r, among words ``start``
    and after; 0 if none."""
    for k in range(nw - 1, start - 1, -1):
        miss = pool[off + k] & ~bm[r, w0 + k]
        if miss:
            return ((w0 + k) << 6) + 63 - np.int64(leading_zeros(miss))
    return 0


@njit(inline="always")
def pooled_positions(pool, off, w0, nw, out):
    """The set positions of a pooled vector, ascending, into ``out``; returns their count."""
    n = 0
    for k in range(nw):
        word = pool[off + k]
        while word:
            out[n] = ((w0 + k) << 6) + np.int64(trailing_zeros(word))
            n += 1
            word &= word - ONE
    return n


@njit(inline="always")
def missing_positions(pool, off, w0, nw, bm, r, out):
    """The positions set in a pooled vector but cleared in row r, ascending, into ``out``;
    returns their count.  One word test skips 64 positions the row already holds: an external
    peer merging the super peer's ``I`` (Listing 10, ~75 positions per message at N = 900)
    already knows almost all of them."""
    n = 0
    for k in range(nw):
        word = pool[off + k] & ~bm[r, w0 + k]
        while word:
            out[n] = ((w0 + k) << 6) + np.int64(trailing_zeros(word))
            n += 1
            word &= word - ONE
    return n
