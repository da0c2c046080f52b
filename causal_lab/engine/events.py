"""The discrete-event queue shared by every protocol kernel.

Like SimPy's core, the engine is nothing but a heap of timestamped events popped in
(time, insertion order) order; a protocol kernel owns the loop and dispatches on the event
kind.  Events are plain tuples of numbers ``(time, seq, kind, a, b)`` so that the heap lives
inside compiled code: ``kind`` says what happens and ``a``, ``b`` are integer ids (a node, a
packet, a schedule index...).  ``seq`` breaks ties first-in first-out, which makes runs
deterministic for a given seed.

Use from a compiled kernel (``causal_lab.engine.jit.njit``)::

    q = new_queue()
    schedule(q, 0.0, BROADCAST, node, 0)
    while not empty(q):
        now, kind, a, b = pop(q)
        ...
"""

from __future__ import annotations

import heapq
from collections import namedtuple

import numba
import numpy as np

from causal_lab.engine.jit import njit

EventQueue = namedtuple("EventQueue", "heap seq")


@njit
def new_queue():
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()  # the dummy item only fixes the element type of the list
    return EventQueue(heap, np.zeros(1, np.int64))


@njit
def schedule(q, time, kind, a, b):
    heapq.heappush(q.heap, (float(time), q.seq[0], np.int64(kind), np.int64(a), np.int64(b)))
    q.seq[0] += 1


@njit
def pop(q):
    time, _, kind, a, b = heapq.heappop(q.heap)
    return time, kind, a, b


@njit
def peek(q):
    """The next event's kind and payload ``(kind, a, b)``, left in the queue: a kernel may start
    loading what that event will read (``causal_lab.engine.memory.prefetch``).  The queue must
    not be empty."""
    _, _, kind, a, b = q.heap[0]
    return kind, a, b


@njit
def empty(q):
    return len(q.heap) == 0


@njit
def pending(q):
    return len(q.heap)


@njit
def ring_benchmark(n_nodes, in_flight, hops):
    """The bare scheduling loop of ``make bench``: tokens hop around a ring of nodes.

    Returns the number of events processed; the delays are a cheap deterministic function of
    time so that the benchmark measures the queue and nothing else.
    """
    q = new_queue()
    for k in range(in_flight):
        schedule(q, 0.01 * k, 0, k % n_nodes, 0)
    done = 0
    while not empty(q):
        now, kind, node, _ = pop(q)
        done += 1
        if done + pending(q) < hops:
            schedule(q, now + 1.0 + 0.5 * np.sin(now), kind, (node + 1) % n_nodes, 0)
    return done
