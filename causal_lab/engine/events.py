"""The discrete-event queue shared by every protocol kernel.

Like SimPy's core, the engine is nothing but a heap of timestamped events popped in
(time, insertion order) order; a protocol kernel owns the loop and dispatches on the event
kind.  An event is five numbers ``(time, seq, kind, a, b)``: ``kind`` says what happens and
``a``, ``b`` are integer ids (a node, a packet, a schedule index...).  ``seq`` breaks ties
first-in first-out, which makes runs deterministic for a given seed: (time, seq) is a strict
total order, so events leave the queue in the same order whatever the heap's shape.

Use from a compiled kernel (``causal_lab.engine.jit.njit``)::

    q = new_queue()
    schedule(q, 0.0, BROADCAST, node, 0)
    while not empty(q):
        now, kind, a, b = pop(q)
        ...

A workload known in advance (every publication of a run) is given to ``feed`` instead of being
scheduled event by event: it leaves the queue in the same order, but only its next event sits
in the heap.

Layout, and why.  Profiles of the heavy kernels put a quarter of a VCube-PS churn run in the
queue when it was numba's ``heapq`` on a list of tuples, a pop and a push per event, each a pass
through the heap.  Most handlers schedule at least one event (a copy forwarded, an ACK, a
block's next copy), so here ``pop`` takes the head but leaves its slot empty (the *hole*), and
the next ``schedule`` puts its event there and sifts it down: one pass for the pair.  Only when
``pop`` finds the hole still open does it close it first, as a plain pop would.  The heap is
4-ary (half the levels of a binary one) on one ``int64`` table, one row of five words per event,
the time stored as the bits of its float (for non-negative doubles the integer order of the bits
is the order of the numbers); the sift goes top-down with the best child's key in registers.
Measured against the heapq (paired runs, CPU time): the ring benchmark with 20,000 events in
flight 30-40 % more events per second; VCube-PS and SRPT-S with every node of 1024 publishing
7 % and 16 % less CPU, SRPT-S under churn 12 % less, VCube-PS under churn and the free-scale
kernel (whose blocks already kept its heap small) unchanged.  Tried and dropped: a bottom-up
sift (slower: it reloads the keys it compares), and 16-byte keys with the payload in a side
table (the payload's row is then a cache miss of its own at every pop).  Also dropped: a
calendar in front of the heap (a ring of 1024 buckets 0.5 time units wide, unsorted lists, the
heap holding only the current bucket's few dozen events), which left the run counters of
VCube-PS and SRPT-S churn runs (N = 4096, N_s = 1000, 10 %/min) the same (hashed) but the runs
no faster: SRPT-S, 2 simulated minutes, best of 4 alternating runs 2.18 CPU-s against 2.20 with
the heap alone; 4 minutes, 3 pairs, 4.7-5.7 against 3.8-4.7 (VCube-PS: 2.9-4.3 against 2.5-4.3).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.experimental import structref
from numba.extending import intrinsic

from causal_lab.engine import state
from causal_lab.engine.jit import njit

TIME, SEQ, KIND, A, B = range(5)
ARITY = 4  # children per heap node

# rows[:n] is the heap; hole = 1: rows[0] was popped and awaits the next event scheduled;
# fed[fed_pos:] the fed events not in the heap yet, rows (key, seq, b) in pop order, and their
# number fed_n, which pop reads without touching the array (``feed``)
EventQueueType, EventQueue = state.define(
    "EventQueue", ("rows", "n", "seq", "hole", "fed", "fed_n", "fed_pos", "fed_kind"), __name__)
_QUEUE = EventQueueType([("rows", numba.types.int64[:, ::1]), ("n", numba.types.int64),
                         ("seq", numba.types.int64), ("hole", numba.types.int64),
                         ("fed", numba.types.int64[:, ::1]), ("fed_n", numba.types.int64),
                         ("fed_pos", numba.types.int64),
                         ("fed_kind", numba.types.int64)])


@intrinsic
def _bits(typingctx, x):
    """The IEEE-754 bits of a float64 as an int64 (no conversion)."""
    if not isinstance(x, numba.types.Float):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], numba.types.float64)
        return builder.bitcast(value, ir.IntType(64))
    return numba.types.int64(x), codegen


@intrinsic
def _time(typingctx, bits):
    """The float64 whose bits are ``bits`` (the inverse of ``_bits``)."""
    if not isinstance(bits, numba.types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return numba.types.float64(bits), codegen


@njit
def new_queue(capacity=1024):
    q = structref.new(_QUEUE)
    q.rows = np.empty((max(1, capacity), 5), np.int64)
    q.n = 0
    q.seq = 0
    q.hole = 0
    q.fed = np.empty((0, 3), np.int64)
    q.fed_n = 0
    q.fed_pos = 0
    q.fed_kind = 0
    return q


@njit(inline="always")
def _before(rows, i, t, s):
    """Whether heap row ``i`` comes before the event keyed (t, s)."""
    return rows[i, TIME] < t or (rows[i, TIME] == t and rows[i, SEQ] < s)


@njit(inline="always")
def _put(rows, i, t, s, kind, a, b):
    rows[i, TIME] = t
    rows[i, SEQ] = s
    rows[i, KIND] = kind
    rows[i, A] = a
    rows[i, B] = b


@njit(inline="always")
def _move(rows, dst, src):
    for c in range(5):
        rows[dst, c] = rows[src, c]


@njit
def _sift_down(rows, n, t, s, kind, a, b):
    """Place the event (t, s, kind, a, b) in the hole at the root of ``rows[:n]``."""
    pos = 0
    while True:
        first = ARITY * pos + 1
        if first >= n:
            break
        best = first
        bt, bs = rows[first, TIME], rows[first, SEQ]
        for c in range(first + 1, min(first + ARITY, n)):
            ct = rows[c, TIME]
            if ct < bt or (ct == bt and rows[c, SEQ] < bs):
                best, bt, bs = c, ct, rows[c, SEQ]
        if t < bt or (t == bt and s < bs):
            break
        _move(rows, pos, best)
        pos = best
    _put(rows, pos, t, s, kind, a, b)


@njit
def _key(time):
    """The heap key of a time: its bits (``+ 0.0`` turns -0.0 into 0.0, whose bits are 0)."""
    if not time >= 0.0:
        raise ValueError("events: an event time must be a number >= 0")
    return _bits(time + 0.0)


@njit
def schedule(q, time, kind, a, b):
    s = q.seq
    q.seq = s + 1
    _insert(q, _key(float(time)), s, np.int64(kind), np.int64(a), np.int64(b))


@njit
def _insert(q, t, s, kind, a, b):
    """Put the event keyed (t, s) into the hole, or at the end of the heap and sift it up."""
    rows = q.rows
    if q.hole:
        q.hole = 0
        _sift_down(rows, q.n, t, s, kind, a, b)
        return
    pos = q.n
    if pos == rows.shape[0]:
        rows = state.grown_rows(rows, pos + 1)
        q.rows = rows
    q.n = pos + 1
    while pos > 0:
        parent = (pos - 1) // ARITY
        if _before(rows, parent, t, s):
            break
        _move(rows, pos, parent)
        pos = parent
    _put(rows, pos, t, s, kind, a, b)


@njit
def feed(q, times, kind, b):
    """Schedule the events ``(times[k], kind, k, b[k])`` for every k, into a new queue: they
    leave it in the order (and with the sequence numbers k) that ``schedule`` called for each k
    in turn would give them, but only the next of them is in the heap at any time, the next one
    after it entering when it leaves (``pop``).

    Why: a kernel's workload (every publication and churn operation of a run, known in advance)
    scheduled up front keeps all of it in the heap, far-future events under every sift.  What
    that cost, in paired runs: 2-11 % of a DCS balancing run's CPU; within noise for VCube-PS,
    SRPT-S and the VCube broadcast, whose heaps are dominated by the 2-6 thousand copies in
    flight."""
    if q.n != 0 or q.seq != 0:
        raise ValueError("events.feed: the queue must be new")
    count = len(times)
    keys = np.empty(count, np.int64)
    for k in range(count):
        keys[k] = _key(float(times[k]))
    order = np.argsort(keys, kind="mergesort")  # stable: equal times keep k's order
    fed = np.empty((count, 3), np.int64)
    for r in range(count):
        k = order[r]
        fed[r, 0] = keys[k]
        fed[r, 1] = k
        fed[r, 2] = b[k]
    q.fed = fed
    q.fed_n = count
    q.fed_pos = 0
    q.fed_kind = kind
    q.seq = count
    _next_fed(q)


@njit
def _next_fed(q):
    """Move the next fed event, if any is left, into the heap."""
    r = q.fed_pos
    if r < q.fed_n:
        q.fed_pos = r + 1
        fed = q.fed
        _insert(q, fed[r, 0], fed[r, 1], q.fed_kind, fed[r, 1], fed[r, 2])


@njit
def _close(q, rows):
    """Fill the hole with the heap's last event, as a plain pop does."""
    n = q.n - 1
    q.n = n
    q.hole = 0
    if n > 0:
        _sift_down(rows, n, rows[n, TIME], rows[n, SEQ], rows[n, KIND], rows[n, A], rows[n, B])


@njit
def pop(q):
    """Remove the next event and return its ``(time, kind, a, b)``.  The queue must not be
    empty."""
    rows = q.rows
    if q.hole:
        _close(q, rows)
    q.hole = 1
    t, kind, a, b = rows[0, TIME], rows[0, KIND], rows[0, A], rows[0, B]
    if rows[0, SEQ] < q.fed_n:  # a fed event (``feed``): the next one takes the hole
        _next_fed(q)
    return _time(t), kind, a, b


@njit
def _next(q):
    """The row of the next event: the root, or with the hole open the earliest of its children
    (every pending event is below one of them)."""
    if not q.hole:
        return 0
    rows = q.rows
    best = 1
    for c in range(2, min(ARITY + 1, q.n)):
        if _before(rows, c, rows[best, TIME], rows[best, SEQ]):
            best = c
    return best


@njit
def peek(q):
    """The next event's kind and payload ``(kind, a, b)``, left in the queue: a kernel may start
    loading what that event will read (``causal_lab.engine.memory.prefetch``).  The queue must
    not be empty."""
    rows, i = q.rows, _next(q)
    return rows[i, KIND], rows[i, A], rows[i, B]


@njit
def next_time(q):
    """The next event's time.  The queue must not be empty."""
    return _time(q.rows[_next(q), TIME])


@njit
def runners_up(q):
    """How many events ``runner_up`` can show (0 to ``ARITY``)."""
    return max(0, min(ARITY, q.n - 1))


@njit
def runner_up(q, j):
    """``(kind, a, b)`` of one of the heap root's children (j < ``runners_up(q)``): they hold the
    event after next (or, with the hole open, the next one), unless an earlier event is
    scheduled meanwhile.  A hint for prefetching further ahead."""
    rows = q.rows
    return rows[1 + j, KIND], rows[1 + j, A], rows[1 + j, B]


@njit
def empty(q):
    return q.n == q.hole


@njit
def pending(q):
    """Events still to leave the queue, fed ones not in the heap yet included."""
    return q.n - q.hole + q.fed_n - q.fed_pos


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
