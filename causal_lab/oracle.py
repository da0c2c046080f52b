"""The independent causality oracle: ground-truth happened-before, checked on every run.

It shares no code with any protocol.  Its only input is the run's *event log*: the broadcasts
and deliveries in the order they happened (which respects every process's local order).  From
the log alone it rebuilds the true causal past of every message, the way Lamport defines it:
a broadcast by p depends on everything p broadcast or delivered before (spec
probabilistic_clocks §4.1).

Definitions (probabilistic_clocks §4.2, vcube_ps §2.9-§2.10, thesis §5.4.1):

* an *ordering error* is a delivery of m at q while some message of m's causal past has not been
  delivered at q yet (``error_strict``; when every message is eventually delivered everywhere,
  this is exactly "a causal predecessor that q will deliver was delivered after m");
* a *late* delivery is a delivery of m at q after q already delivered (or broadcast) a message
  m' with m -> m'.  This is the publish/subscribe guarantee of the thesis ("if a node publishes
  m' after delivering m, no node delivers m after m'"): a process that joined after m or left
  before m' never delivers m, which is an ordering error but not a violation, so under churn
  ``late`` is the criterion and ``errors`` over-counts.  "->" is Lamport's transitive relation
  (vcube_ps §2.10 invariant 3), also through an intermediate message the publisher of m' never
  delivered itself;
* ``late_immediate`` counts the late deliveries of the thesis's wording only: m' broadcast by a
  process that had itself delivered m.  It is a subset of ``late``, computed separately because
  it needs one bit set per message (affordable for churn runs, not for seed 000's logs);
* a *duplicate* is a second delivery of the same message at the same process;
* a *missing* delivery is a (message, process) pair the process was entitled to deliver but
  never did (liveness).  By default every process is entitled to every message.

``check_by_topic`` applies all of this per topic: causal order is required only among the
messages of one topic (thesis §5.4), so a "wrong" order across topics is not counted.

How it scales (2000 processes x 10^5 messages, 10^8 deliveries; 4096 processes under churn)
without O(N) work per delivery (probabilistic_clocks §4.3):

* ``seen``: one bit per (message, process), for duplicates, for filling gaps and for liveness;
* ``prefix[q, a]``: how many messages of source a process q has delivered contiguously;
* ``lag[q]``: the sources whose broadcasts q has not all delivered yet.  Only those can hold an
  undelivered predecessor, so the error test of a delivery looks at ``lag[q]`` only.  Each
  entry carries its ``prefix[q, a]``, so that the test reads q's list front to back instead of
  one scattered entry of ``prefix`` per lagging source (the list is short, ``prefix[q]`` is N
  entries long); and ``lag_at[a, q]``, the place of a in q's list, is stored per source, so
  that a broadcast, which puts its source in every other process's list, reads one row;
* q's true knowledge vector K[q] (the causal past of everything q delivered or broadcast) is
  ``know[q]`` joined with the vector clocks of the few messages in ``pending[q]``.  In an
  error-free delivery the message's past is already inside ``prefix[q]``, so only one entry of
  ``know[q]`` changes.  After an ordering error the message joins ``pending[q]`` instead of being
  merged entry by entry: a late joiner's deliveries are nearly all ordering errors, and an O(N)
  merge for each of them would dominate the run.  ``pending[q]`` stays a small antichain (a
  message whose past contains a pending one replaces it) and is merged into ``know[q]`` when q
  broadcasts (its message's vector clock is K[q]) or when it reaches ``PENDING_LIMIT``;
* m = (a, c), the c-th broadcast of a, is late at q iff K[q][a] >= c before the delivery:
  ``know[q, a]`` plus one entry per pending message.  A late delivery leaves K[q] unchanged,
  since m's whole past is already in it;
* a message's vector clock is kept only while a later log entry refers to it or it is pending.

Per-delivery ground truth (``per_delivery=True``): the report then also holds, for every log
entry, whether that delivery was an ordering error and whether it was late
(``Report.delivery_error``, ``Report.delivery_late``, boolean arrays aligned with the log).  A
protocol that guesses causality (probabilistic clocks, error detectors) is scored against these
flags, never against its own opinion of what it did.

The log kinds ``BROADCAST`` and ``DELIVER`` are defined here, and every kernel logs with them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab.engine import memory
from causal_lab.engine.jit import njit

BROADCAST = 0
DELIVER = 1
FLAG_ERROR = 1  # per-delivery flags of _scan
FLAG_LATE = 2
PENDING_LIMIT = 16  # vector clocks held per process before they are merged into know[q]
LOOK_AHEAD = 16  # log entries between a delivery's prefetch and its replay (``_prefetch``)
EXAMPLES = 5


@dataclasses.dataclass(frozen=True)
class Report:
    """What the oracle found in one run."""

    processes: int
    messages: int
    deliveries: int
    errors: int  # deliveries out of causal order (error_strict)
    messages_with_error: int
    duplicates: int
    missing: int  # entitled (message, process) pairs never delivered
    late: int  # deliveries of m after something m precedes (the pub/sub violation, §5.4.1)
    undelivered_example: tuple  # up to 5 (message, process) pairs
    error_example: tuple  # up to 5 (message, process) pairs
    late_example: tuple  # up to 5 (message, process) pairs
    # with per_delivery=True: bool per log entry, aligned with the log (None otherwise)
    delivery_error: np.ndarray | None = dataclasses.field(default=None, repr=False)
    delivery_late: np.ndarray | None = dataclasses.field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """Static runs, where everyone delivers everything: no ordering error at all."""
        return self.errors == 0 and self.duplicates == 0 and self.missing == 0

    @property
    def ok_pubsub(self) -> bool:
        """Runs with churn: skipping messages is allowed, delivering one too late is not.

        ``missing`` only means something here if the caller passed the ``entitled`` mask.
        """
        return self.late == 0 and self.duplicates == 0 and self.missing == 0

    def assert_ok(self, pubsub: bool = False) -> None:
        """Raise unless the run is ordered (strictly, or in the pub/sub sense), duplicate-free
        and complete."""
        if not (self.ok_pubsub if pubsub else self.ok):
            raise AssertionError(f"causality oracle: {self}")


def check(n_procs: int, log_kind, log_node, log_msg, entitled=None,
          per_delivery: bool = False) -> Report:
    """Check an event log.

    ``log_kind[k]`` is BROADCAST or DELIVER, ``log_node[k]`` the process and ``log_msg[k]`` the
    message id (any non-negative integers, each broadcast exactly once).  A broadcast counts as
    the source's own delivery.  ``entitled`` optionally gives, per message id, a boolean mask of
    the processes that must deliver it (default: all).  ``per_delivery`` adds the flags of every
    log entry to the report.
    """
    kind, node, msg = _log_arrays(n_procs, log_kind, log_node, log_msg)
    n_msgs = int(msg.max()) + 1 if len(msg) else 0
    ent = _entitled(entitled, n_msgs, n_procs)
    part = _check_part(kind, node, msg, n_msgs, np.arange(n_msgs), None, n_procs, ent)
    return _report(n_procs, n_msgs, [part], part["flags"] if per_delivery else None)


def check_by_topic(n_procs: int, log_kind, log_node, log_msg, msg_topic, entitled=None,
                   per_delivery: bool = False) -> Report:
    """Check an event log in which causal order is required only within each topic.

    ``msg_topic[m]`` is the topic (any non-negative integer) of message id m; every logged id
    must be below ``len(msg_topic)``.  The log is split by topic, each part is checked alone
    with its messages and processes renumbered, and the counts are summed; examples use the
    global ids.  ``entitled`` is an optional (messages, processes) mask in global ids; without
    it every process owes every message, non-subscribers included, so ``missing`` then counts
    those too.  ``per_delivery`` adds the flags of every log entry, in the log's own order.
    """
    kind, node, msg = _log_arrays(n_procs, log_kind, log_node, log_msg)
    n_msgs = len(msg_topic)
    ent = _entitled(entitled, n_msgs, n_procs)
    parts, flags = [], np.zeros(len(kind), np.int8)
    for ids, procs, t_kind, t_node, t_msg, where in _topics(n_procs, kind, node, msg, msg_topic):
        parts.append(_check_part(t_kind, t_node, t_msg, len(ids), ids, procs, n_procs,
                                 None if ent is None else ent[ids]))
        flags[where] = parts[-1]["flags"]
    return _report(n_procs, n_msgs, parts, flags if per_delivery else None)


def late_immediate(n_procs: int, log_kind, log_node, log_msg, msg_topic) -> int:
    """Late deliveries under the thesis's own wording (§5.4.1), per topic: q delivers m after m',
    where the publisher of m' had delivered (or broadcast) m before broadcasting m'.

    ``late`` in ``check_by_topic`` also counts chains m -> x -> m', in particular through a
    message x that q never receives; this count keeps the immediate pairs only, so a protocol
    can be judged by the guarantee its authors state.  Cost: one bit set per message and per
    process, O(deliveries x messages of the topic / 64): meant for churn runs (a few 10^4
    messages), not for the 10^5-message logs of seed 000.
    """
    kind, node, msg = _log_arrays(n_procs, log_kind, log_node, log_msg)
    return sum(int(_late_immediate(len(procs) if procs is not None else n_procs, len(ids),
                                   t_kind, t_node, t_msg))
               for ids, procs, t_kind, t_node, t_msg, _ in _topics(n_procs, kind, node, msg, msg_topic))


def _topics(n_procs, kind, node, msg, msg_topic):
    """Per topic: (global message ids, global process ids or None for all, the topic's log
    with its messages numbered 0..len(ids)-1 and its processes 0..len(procs)-1, and the
    positions of its entries in the whole log)."""
    topic = np.asarray(msg_topic, np.int64)
    n_msgs = len(topic)
    if len(msg) and msg.max() >= n_msgs:
        raise ValueError("log refers to a message id without a topic")
    if n_msgs and topic.min() < 0:
        raise ValueError("negative topic")
    _, topic_idx = np.unique(topic, return_inverse=True)
    by_topic = np.argsort(topic_idx, kind="stable")  # message ids grouped by topic, ascending
    first = np.searchsorted(topic_idx[by_topic], np.arange(topic_idx.max(initial=-1) + 2))
    local = np.empty(n_msgs, np.int64)
    local[by_topic] = np.arange(n_msgs) - first[topic_idx[by_topic]]
    start, t_kind, t_node, t_msg, t_where = _split(kind, node, msg, topic_idx, local, len(first) - 1)
    for t in range(len(first) - 1):
        ids = by_topic[first[t]:first[t + 1]]
        lo, hi = start[t], start[t + 1]
        node_t = t_node[lo:hi]
        procs = np.flatnonzero(np.bincount(node_t, minlength=n_procs))
        if len(procs) == n_procs:
            procs = None
        else:  # renumber: the O(N^2) state then covers the topic's processes only
            renumber = np.full(n_procs, -1, np.int32)
            renumber[procs] = np.arange(len(procs), dtype=np.int32)
            node_t = renumber[node_t]
        yield ids, procs, t_kind[lo:hi], node_t, t_msg[lo:hi], t_where[lo:hi]


def _log_arrays(n_procs, log_kind, log_node, log_msg):
    kind = np.asarray(log_kind, np.int8)
    node = np.asarray(log_node, np.int64)
    msg = np.asarray(log_msg, np.int64)
    if not (len(kind) == len(node) == len(msg)):
        raise ValueError("log arrays differ in length")
    if len(msg) and (node.min() < 0 or node.max() >= n_procs or msg.min() < 0):
        raise ValueError("log refers to a process outside 0..n_procs-1 or a negative message id")
    is_b = kind == BROADCAST
    if np.bincount(msg[is_b]).max(initial=0) > 1:
        raise ValueError("a message id is broadcast twice")
    return kind, node, msg


def _entitled(entitled, n_msgs, n_procs):
    if entitled is None:
        return None
    ent = np.asarray(entitled, bool)
    if ent.shape != (n_msgs, n_procs):
        raise ValueError("entitled must be a (messages, processes) mask")
    return ent


def _check_part(kind, node, msg, n_msgs, ids, procs, n_procs, ent):
    """Scan one log whose messages are 0..n_msgs-1 and processes 0..len(procs)-1.

    ``ids`` and ``procs`` (None: all ``n_procs``, unchanged) map them back to global ids;
    ``ent`` is the part's entitlement mask over the ``n_procs`` global processes.  Returns the
    counts and the examples in global ids.
    """
    n = n_procs if procs is None else len(procs)
    last_use, live = _lifetimes(kind, msg, n_msgs)
    errors, err_msg, dup, late, dcount, seen, err_ex, late_ex, flags = _scan(
        n, n_msgs, kind, node, msg, last_use, live, PENDING_LIMIT)
    procs = np.arange(n_procs) if procs is None else procs

    def delivered(rows):
        """Who delivered those messages, as a (len(rows), n_procs) mask."""
        bits = np.unpackbits(seen[rows], axis=1, count=n, bitorder="little").astype(bool)
        if n == n_procs:
            return bits
        full = np.zeros((len(rows), n_procs), bool)
        full[:, procs] = bits
        return full

    if ent is None:
        missing = n_procs * n_msgs - int(dcount.sum())
        short = np.flatnonzero(dcount < n_procs)[:EXAMPLES]
        undelivered = [(ids[m], np.flatnonzero(~d)[0]) for m, d in zip(short, delivered(short))]
    else:
        gaps = ent & ~delivered(np.arange(n_msgs))
        missing = int(gaps.sum())
        rows = np.flatnonzero(gaps.any(axis=1))[:EXAMPLES]
        undelivered = [(ids[m], q) for m in rows for q in np.flatnonzero(gaps[m])]
    return {
        "deliveries": int(dcount.sum()), "errors": int(errors),
        "messages_with_error": int(err_msg.sum()), "duplicates": int(dup), "missing": missing,
        "late": int(late),
        "undelivered_example": undelivered,
        "error_example": [(ids[m], procs[q]) for m, q in err_ex],
        "late_example": [(ids[m], procs[q]) for m, q in late_ex],
        "flags": flags,
    }


def _report(n_procs, n_msgs, parts, flags=None) -> Report:
    counts = ("deliveries", "errors", "messages_with_error", "duplicates", "missing", "late")
    examples = ("undelivered_example", "error_example", "late_example")
    return Report(processes=n_procs, messages=n_msgs,
                  **{k: sum(p[k] for p in parts) for k in counts},
                  **{k: tuple((int(m), int(q)) for p in parts for m, q in p[k])[:EXAMPLES]
                     for k in examples},
                  delivery_error=None if flags is None else (flags & FLAG_ERROR) != 0,
                  delivery_late=None if flags is None else (flags & FLAG_LATE) != 0)


@njit
def _lifetimes(kind, msg, n_msgs):
    """Last log index of every message, and how many vector clocks the log alone keeps alive at
    once (broadcast seen, last use not yet passed)."""
    last_use = np.zeros(n_msgs, np.int64)
    for k in range(len(msg)):
        last_use[msg[k]] = k
    live = 0
    most = 1
    for k in range(len(msg)):
        if kind[k] == BROADCAST:
            live += 1
            most = max(most, live)
        if last_use[msg[k]] == k:
            live -= 1
    return last_use, most


@njit
def _split(kind, node, msg, topic_idx, local, n_topics):
    """Group the log by topic (a stable counting sort), with per-topic message ids."""
    start = np.zeros(n_topics + 1, np.int64)
    for k in range(len(msg)):
        start[topic_idx[msg[k]] + 1] += 1
    start = np.cumsum(start)
    pos = start[:-1].copy()
    t_kind = np.empty(len(msg), np.int8)
    t_node = np.empty(len(msg), np.int32)
    t_msg = np.empty(len(msg), np.int32)
    t_where = np.empty(len(msg), np.int64)
    for k in range(len(msg)):
        m = msg[k]
        t = topic_idx[m]
        i = pos[t]
        pos[t] += 1
        t_kind[i] = kind[k]
        t_node[i] = node[k]
        t_msg[i] = local[m]
        t_where[i] = k
    return start, t_kind, t_node, t_msg, t_where


@njit
def _late_immediate(n, n_msgs, kind, node, msg):
    """``late_immediate`` on one topic's renumbered log.  ``before[m']``: what the publisher of
    m' had delivered when it broadcast m'; ``owed[q]``: the union of ``before`` over everything
    q delivered or broadcast, i.e. the messages q may no longer deliver."""
    words = (n_msgs + 63) // 64
    done = np.zeros((n, words), np.uint64)
    before = np.zeros((n_msgs, words), np.uint64)
    owed = np.zeros((n, words), np.uint64)
    late = 0
    for k in range(len(msg)):
        q, m = node[k], msg[k]
        w, bit = m // 64, np.uint64(1) << np.uint64(m % 64)
        if kind[k] == BROADCAST:
            before[m, :] = done[q, :]
        elif owed[q, w] & bit and not done[q, w] & bit:
            late += 1
        done[q, w] |= bit
        for j in range(words):
            owed[q, j] |= before[m, j]
    return late


@njit
def _release(p, pend_refs, row, last_use, k, free_rows):
    """One pending reference to p is gone: free its vector clock if nothing needs it any more."""
    pend_refs[p] -= 1
    if pend_refs[p] == 0 and last_use[p] < k:
        free_rows.append(row[p])
        row[p] = -1


@njit
def _flush(q, know, pend, pend_len, pend_refs, pool, row, last_use, k, free_rows):
    """Merge q's pending vector clocks into know[q] (which then equals K[q])."""
    for i in range(pend_len[q]):
        p = pend[q, i]
        vc = pool[row[p]]
        for b in range(know.shape[1]):
            if vc[b] > know[q, b]:
                know[q, b] = vc[b]
        _release(p, pend_refs, row, last_use, k, free_rows)
    pend_len[q] = 0


@njit
def _ahead(prefix, vc, a):
    """Whether vc[b] > prefix[b] for a source b != a, ``prefix`` being process q's row: some
    message of m's causal past (vector clock ``vc``) from another source than m's own ``a`` is
    not delivered yet at q.

    ``_scan`` checks the sources of ``lag[q]`` only, since any other b is delivered up to its
    last broadcast, which bounds vc[b].  When many lag (every node publishing at once:
    thousands at every delivery), this branch-free pass over the whole rows, which the compiler
    vectorises and which reads the same cache lines, gives the same answer several times
    faster."""
    ahead = 0
    for b in range(len(prefix)):
        ahead += prefix[b] < vc[b]
    return ahead > (prefix[a] < vc[a])


@njit(inline="always")
def _prefetch(k, kind, node, msg, src, seen, know, prefix, lag, lag_at):
    """Start loading what the delivery at log index ``k`` will read, LOOK_AHEAD entries before
    it is replayed: its bit of ``seen`` and the entries (q, a) of ``know``, ``prefix`` and
    ``lag_at`` and the head of q's ``lag`` list.  At N = 4096 those tables are 64 MB each and
    a delivery's entries are far apart, so the replay waited for them one after the other.  The
    log is known in advance, so the loads can start early; a hint only, no effect on results
    (an entry whose message is not broadcast yet is skipped).  Measured on saved logs, CPU-s of
    ``check_by_topic`` (best of 3), alternating with the loop without it, same counts and
    per-delivery flags: a VCube-PS churn log (N = 4096, N_s = 4000, t_med = 1 min, 8 simulated
    minutes, 2.7 M entries) 0.61-0.85 s against 0.79-1.23 s, 3 of 3 faster; a static one (N =
    1024, every node publishing once) 0.28-0.35 s against 0.33-0.37, 2 of 3; the free-scale
    bench log (N = 900, whose tables fit in the caches) unchanged.  Look-aheads of 8 and 32
    entries did as well as 16."""
    if k >= len(kind) or kind[k] == BROADCAST:
        return
    q, a = node[k], src[msg[k]]
    if a < 0:
        return
    n = know.shape[0]
    memory.prefetch(seen, msg[k] * seen.shape[1] + (q >> 3))
    memory.prefetch(know, q * n + a)
    memory.prefetch(prefix, q * n + a)
    memory.prefetch(lag_at, a * n + q)
    memory.prefetch(lag, q * n * 2)


@njit
def _scan(n, n_msgs, kind, node, msg, last_use, pool_rows, pending_limit):
    """Replay the log once; the counts, the ``seen`` bits and the first examples."""
    src = np.full(n_msgs, -1, np.int64)
    seq = np.zeros(n_msgs, np.int64)
    by_seq = np.full(n_msgs, -1, np.int64)  # message id of (source, seq), via a per-source offset
    offset = np.zeros(n + 1, np.int64)
    # first pass: number each source's broadcasts, so (a, c) -> message id is an array lookup
    count = np.zeros(n, np.int64)
    for k in range(len(kind)):
        if kind[k] == BROADCAST:
            count[node[k]] += 1
    for a in range(n):
        offset[a + 1] = offset[a] + count[a]
    nb = np.zeros(n, np.int64)  # broadcasts so far per source
    prefix = np.zeros((n, n), np.int32)
    know = np.zeros((n, n), np.int32)
    lag = np.zeros((n, n, 2), np.int32)  # q's list: (source a, prefix[q, a]) per entry
    lag_len = np.zeros(n, np.int64)
    lag_at = np.full((n, n), -1, np.int32)  # [a, q]: the place of a in q's list, -1: not in it
    pool = np.zeros((pool_rows, n), np.int32)
    free_rows = list(range(pool_rows - 1, -1, -1))
    row = np.full(n_msgs, -1, np.int64)
    pend = np.zeros((n, pending_limit), np.int64)
    pend_len = np.zeros(n, np.int64)
    pend_refs = np.zeros(n_msgs, np.int64)
    seen = np.zeros((n_msgs, (n + 7) // 8), np.uint8)
    dcount = np.zeros(n_msgs, np.int64)
    err_msg = np.zeros(n_msgs, np.bool_)
    err_ex = np.zeros((EXAMPLES, 2), np.int64)
    late_ex = np.zeros((EXAMPLES, 2), np.int64)
    flags = np.zeros(len(kind), np.int8)
    errors = 0
    late = 0
    dup = 0
    for k in range(len(kind)):
        _prefetch(k + LOOK_AHEAD, kind, node, msg, src, seen, know, prefix, lag, lag_at)
        q = node[k]
        m = msg[k]
        bit = np.uint8(1 << (q & 7))
        if kind[k] == BROADCAST:
            a = q
            nb[a] += 1
            c = nb[a]
            src[m] = a
            seq[m] = c
            by_seq[offset[a] + c - 1] = m
            _flush(a, know, pend, pend_len, pend_refs, pool, row, last_use, k, free_rows)
            know[a, a] = c
            prefix[a, a] = c
            if len(free_rows) == 0:  # pending messages outlive their last log entry
                rows = pool.shape[0]
                grown = np.zeros((2 * rows, n), np.int32)
                grown[:rows] = pool
                pool = grown
                for r in range(2 * rows - 1, rows - 1, -1):
                    free_rows.append(r)
            r = free_rows.pop()
            row[m] = r
            pool[r, :] = know[a, :]
            joins = lag_at[a]
            for other in range(n):  # a process not lagging on a had delivered a's first c - 1
                if other != a and joins[other] < 0:
                    t = lag_len[other]
                    joins[other] = t
                    lag[other, t, 0] = a
                    lag[other, t, 1] = c - 1
                    lag_len[other] = t + 1
            dcount[m] += 1
            seen[m, a >> 3] |= bit
        else:
            a = src[m]
            if a < 0:
                raise ValueError("a message is delivered before it is broadcast")
            if (seen[m, q >> 3] & bit) != 0:
                dup += 1
            else:
                seen[m, q >> 3] |= bit
                dcount[m] += 1
                c = seq[m]
                vc = pool[row[m]]
                is_late = know[q, a] >= c
                i = 0
                while not is_late and i < pend_len[q]:
                    is_late = pool[row[pend[q, i]], a] >= c
                    i += 1
                gap = prefix[q, a] < c - 1
                if not gap:
                    if 8 * lag_len[q] >= n:  # many lagging sources: one vectorised pass
                        gap = _ahead(prefix[q], vc, a)
                    else:
                        mine = lag[q]
                        for t in range(lag_len[q]):
                            b = mine[t, 0]
                            if b != a and mine[t, 1] < vc[b]:
                                gap = True
                                break
                if gap:
                    if errors < EXAMPLES:
                        err_ex[errors, 0] = m
                        err_ex[errors, 1] = q
                    errors += 1
                    err_msg[m] = True
                    flags[k] |= FLAG_ERROR
                if is_late:
                    if late < EXAMPLES:
                        late_ex[late, 0] = m
                        late_ex[late, 1] = q
                    late += 1
                    flags[k] |= FLAG_LATE
                elif gap:
                    # m becomes pending at q; pending messages in m's past are covered by m
                    j = 0
                    for i in range(pend_len[q]):
                        p = pend[q, i]
                        if vc[src[p]] >= seq[p]:
                            _release(p, pend_refs, row, last_use, k, free_rows)
                        else:
                            pend[q, j] = p
                            j += 1
                    pend_len[q] = j
                    if j == pending_limit:
                        _flush(q, know, pend, pend_len, pend_refs, pool, row, last_use, k, free_rows)
                    pend[q, pend_len[q]] = m
                    pend_len[q] += 1
                    pend_refs[m] += 1
                else:
                    know[q, a] = c
                if c == prefix[q, a] + 1:  # a's prefix at q grows (q lags on a: c <= nb[a])
                    c_pre = c
                    while c_pre < nb[a] and (seen[by_seq[offset[a] + c_pre], q >> 3] & bit) != 0:
                        c_pre += 1
                    prefix[q, a] = c_pre
                    t = lag_at[a, q]
                    if c_pre < nb[a]:
                        lag[q, t, 1] = c_pre
                    else:  # q is up to date on a: a leaves its list (the last entry fills the gap)
                        last = lag_len[q] - 1
                        moved = lag[q, last, 0]
                        lag[q, t, 0] = moved
                        lag[q, t, 1] = lag[q, last, 1]
                        lag_at[moved, q] = t
                        lag_at[a, q] = -1
                        lag_len[q] = last
        if last_use[m] == k and row[m] >= 0 and pend_refs[m] == 0:
            free_rows.append(row[m])
            row[m] = -1
    return (errors, err_msg, dup, late, dcount, seen,
            err_ex[:min(errors, EXAMPLES)], late_ex[:min(late, EXAMPLES)], flags)
