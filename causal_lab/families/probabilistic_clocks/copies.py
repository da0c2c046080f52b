"""The network copies of a direct broadcast (spec §5.1), shared by the protocol kernel and the
exact-causality evaluator of Figure 5, so that both see the very same arrivals.

A broadcast b by process j at time t sends one copy to every other process r, which arrives at
t + δ(b, r), δ the network's counter-based draw for (b, r) (``engine.network.propagation``,
clipped at 0): a pure function of the replication's seed, b and r, so every protocol variant of
one replication replays the same delays (spec §5.4).  Delays are rounded to the nanosecond,
which lets ``sorted_copies`` sort (delay, receiver) pairs packed in one int64 (8x faster than an
argsort).

Copies in flight are handled per broadcast: its N - 1 copies sorted by arrival, and a binary
heap ("arrival heap") holding, for each broadcast in flight, the arrival time of its next copy
and a cursor.  Delivering the next copy replaces the heap's root by the following one: one
sift-down per copy on a heap of about λ x 0.2 s entries, instead of N - 1 entries per broadcast
in a general event queue.  Ties are broken by broadcast number.
"""

from __future__ import annotations

import numpy as np

from causal_lab.engine import network
from causal_lab.engine.jit import njit

RECEIVER_BITS = 16  # receivers are packed below the delay: N < 65536


@njit
def sorted_copies(net, delays, scripted, b, sender, now, keys, to_node, to_time):
    """The copies of broadcast b by ``sender`` at ``now``, by arrival: receivers into
    ``to_node`` and arrival times into ``to_time`` (N - 1 each); ``scripted``: the delays are
    ``delays[b, r]`` (scenario tests) instead of the network's draws."""
    x = 0
    for r in range(len(keys) + 1):
        if r == sender:
            continue
        d = delays[b, r] if scripted else network.propagation(net, b, r)
        keys[x] = (np.int64(round(d * 1e9)) << RECEIVER_BITS) | r
        x += 1
    keys.sort()
    for x in range(len(keys)):
        to_node[x] = keys[x] & ((1 << RECEIVER_BITS) - 1)
        to_time[x] = now + (keys[x] >> RECEIVER_BITS) / 1e9


@njit
def earlier(t1, b1, t2, b2):
    return t1 < t2 or (t1 == t2 and b1 < b2)


@njit
def heap_push(ht, hb, hc, hn, t, b, cursor):
    """Add (t, b, cursor); the arrays must have room for hn[0] + 1 entries."""
    pos = hn[0]
    hn[0] = pos + 1
    while pos > 0:
        parent = (pos - 1) >> 1
        if earlier(ht[parent], hb[parent], t, b):
            break
        ht[pos], hb[pos], hc[pos] = ht[parent], hb[parent], hc[parent]
        pos = parent
    ht[pos], hb[pos], hc[pos] = t, b, cursor


@njit
def heap_replace_root(ht, hb, hc, hn, t, b, cursor):
    """Replace the earliest entry by (t, b, cursor)."""
    n = hn[0]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        if child + 1 < n and earlier(ht[child + 1], hb[child + 1], ht[child], hb[child]):
            child += 1
        if earlier(t, b, ht[child], hb[child]):
            break
        ht[pos], hb[pos], hc[pos] = ht[child], hb[child], hc[child]
        pos = child
    ht[pos], hb[pos], hc[pos] = t, b, cursor


@njit
def heap_drop_root(ht, hb, hc, hn):
    """Remove the earliest entry (its broadcast has no copy left)."""
    last = hn[0] - 1
    hn[0] = last
    if last > 0:
        heap_replace_root(ht, hb, hc, hn, ht[last], hb[last], hc[last])
