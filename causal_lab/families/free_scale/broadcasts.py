"""A broadcast's copies as one stream of arrivals: the event queue holds each broadcast's next
copy only.

At N = 900 a broadcast has 450 copies and about 2.5 x 10^5 copies are in flight (spec §9); one
heap entry per copy would make every push and pop walk an 18-level heap.  Instead, when a node
sends a wire message to its destinations, every copy's arrival time is computed at once (the
delays are counter-based draws, ``channel``), the copies are sorted by arrival into a *block*,
and only the first is scheduled; taking copy j of a block schedules copy j + 1
(``next_arrival``).  The heap then holds one entry per broadcast in flight (about 10^3), and the
run processes arrivals in exactly the same time order.  A broadcast with a single destination
(an internal peer's message to its super peer) skips the block.

Blocks are rows of ``blk_time`` / ``blk_dest`` (``width`` = the largest fan-out), recycled
through the free stack ``blk_free``.  A kernel state using this module has the fields ``channel``,
``server_free``, ``blk_time``, ``blk_dest``, ``blk_wire``, ``blk_n``, ``blk_free``, ``dests``,
``arrivals``, ``keys`` and ``tops``, with the fill levels ``tops[T_BLOCKS]`` (rows ever used) and
``tops[T_FREE_BLOCKS]`` (rows on the free stack).
"""

from __future__ import annotations

import numpy as np

from causal_lab.engine import events, memory
from causal_lab.engine.jit import njit
from causal_lab.families.free_scale import channel

ARRIVAL_ONE = 0  # event (time, ARRIVAL_ONE, wire, destination)
ARRIVAL_BLOCK = 1  # event (time, ARRIVAL_BLOCK, block, index of the copy)
T_BLOCKS = 0
T_FREE_BLOCKS = 1
FIRST_FREE_TOP = 2  # kernels number their own fill levels from here
INITIAL_BLOCKS = 64


def new_fields(width: int, nodes: int) -> dict:
    """The state fields of this module for fan-outs of at most ``width`` copies."""
    width = max(width, 1)
    return dict(
        server_free=np.zeros(nodes, np.float64),
        blk_time=np.empty((INITIAL_BLOCKS, width), np.float64),
        blk_dest=np.empty((INITIAL_BLOCKS, width), np.int64),
        blk_wire=np.empty(INITIAL_BLOCKS, np.int64), blk_n=np.empty(INITIAL_BLOCKS, np.int64),
        blk_free=np.empty(INITIAL_BLOCKS, np.int64),
        dests=np.empty(width, np.int64), arrivals=np.empty(width, np.float64),
        keys=np.empty(width, np.uint64),
    )


@njit
def _block(st):
    """A free block row (the tables double when none is left)."""
    tops = st.tops
    if tops[T_FREE_BLOCKS] > 0:
        tops[T_FREE_BLOCKS] -= 1
        return st.blk_free[tops[T_FREE_BLOCKS]]
    b = tops[T_BLOCKS]
    if b == st.blk_time.shape[0]:
        rows, width = st.blk_time.shape
        t = np.empty((2 * rows, width), np.float64)
        t[:rows] = st.blk_time
        st.blk_time = t
        d = np.empty((2 * rows, width), np.int64)
        d[:rows] = st.blk_dest
        st.blk_dest = d
        w = np.empty(2 * rows, np.int64)
        w[:rows] = st.blk_wire
        st.blk_wire = w
        n = np.empty(2 * rows, np.int64)
        n[:rows] = st.blk_n
        st.blk_n = n
        f = np.empty(2 * rows, np.int64)
        f[:rows] = st.blk_free
        st.blk_free = f
    tops[T_BLOCKS] = b + 1
    return b


@njit
def _sort_copies(arrivals, dests, count, keys, times_out, dests_out):
    """``arrivals[:count]`` in increasing order into ``times_out`` with ``dests`` alongside
    (equal times in ``dests`` order).  Sorted as integers: a time's bits (non-negative floats
    order as their bits) with its index in the lowest bits, then exact by insertion, since the
    index hides the bits that may tell two close times apart.  ``np.argsort`` (indirect
    comparisons) was 5-6 % of the 900-peer bench case; this took 3-4 % off its CPU time.
    Ties (a clipped delay range gives many) now leave in destination order, argsort's own
    order before: same instants, other interleavings of simultaneous arrivals."""
    shift = np.uint64(1)
    while (np.uint64(1) << shift) < np.uint64(count):
        shift += np.uint64(1)
    mask = (np.uint64(1) << shift) - np.uint64(1)
    for j in range(count):
        keys[j] = (np.uint64(events._bits(arrivals[j])) & ~mask) | np.uint64(j)
    keys[:count].sort()
    for j in range(count):
        k = keys[j] & mask
        t, d = arrivals[k], dests[k]
        i = j
        while i > 0 and times_out[i - 1] > t:  # rare: equal high bits, out of order
            times_out[i] = times_out[i - 1]
            dests_out[i] = dests_out[i - 1]
            i -= 1
        times_out[i] = t
        dests_out[i] = d


@njit
def send(st, q, wire, app, sender, count, now):
    """Send ``wire`` (application message ``app``) from ``sender`` to ``st.dests[:count]``,
    one copy each, in that order through the sender's sending queue."""
    if count == 0:
        return
    c, dests, arrivals = st.channel, st.dests, st.arrivals
    for j in range(count):
        d = dests[j]
        arrivals[j] = (channel.departure(c, st.server_free, sender, now)
                       + channel.propagation(c, app, sender, d))
    if count == 1:
        events.schedule(q, arrivals[0], ARRIVAL_ONE, wire, dests[0])
        return
    b = _block(st)
    blk_time, blk_dest = st.blk_time, st.blk_dest
    _sort_copies(arrivals, dests, count, st.keys, blk_time[b], blk_dest[b])
    st.blk_wire[b] = wire
    st.blk_n[b] = count
    events.schedule(q, blk_time[b, 0], ARRIVAL_BLOCK, b, 0)


@njit
def next_arrival(st, q):
    """Take the next copy off the queue: (time, wire, destination), and schedule the block's
    next copy (into the slot the popped one left: ``events``).  The queue must not be empty."""
    now, kind, a, b = events.pop(q)
    if kind == ARRIVAL_ONE:
        return now, a, b
    if b + 1 < st.blk_n[a]:
        events.schedule(q, st.blk_time[a, b + 1], ARRIVAL_BLOCK, a, b + 1)
    else:
        st.blk_free[st.tops[T_FREE_BLOCKS]] = a
        st.tops[T_FREE_BLOCKS] += 1
    return now, st.blk_wire[a], st.blk_dest[a, b]


@njit(inline="always")
def prefetch(st, q):
    """Start loading what the coming copies will read, while this one is handled: the next
    copy's destination is returned ((wire, destination); -1, -1 for none or a single copy), and
    the block entries of the events that may come after it are fetched (``events.runner_up``).
    At N = 900 about 10^3 blocks interleave, so a block's row has left the L2 cache by the time
    its next copy is due: its load was most of ``next_arrival``'s time."""
    width = st.blk_time.shape[1]
    for j in range(events.runners_up(q)):
        kind, a, b = events.runner_up(q, j)
        if kind == ARRIVAL_BLOCK:
            memory.prefetch(st.blk_dest, a * width + b)
            memory.prefetch(st.blk_time, a * width + b + 1)
    if events.empty(q):
        return -1, -1
    kind, a, b = events.peek(q)
    if kind != ARRIVAL_BLOCK:
        return -1, -1
    return st.blk_wire[a], st.blk_dest[a, b]
