"""The independent causality oracle: ground-truth happened-before, checked on every run.

It shares no code with any protocol.  Its only input is the run's *event log*: the broadcasts
and deliveries in the order they happened (which respects every process's local order).  From
the log alone it rebuilds the true causal past of every message, the way Lamport defines it:
a broadcast by p depends on everything p broadcast or delivered before (spec
probabilistic_clocks §4.1).

Definitions (probabilistic_clocks §4.2, vcube_ps §2.10):

* an *ordering error* is a delivery of m at q while some message of m's causal past has not been
  delivered at q yet (``error_strict``; when every message is eventually delivered everywhere,
  this is exactly "a causal predecessor that q will deliver was delivered after m");
* a *duplicate* is a second delivery of the same message at the same process;
* a *missing* delivery is a (message, process) pair the process was entitled to deliver but
  never did (liveness).  By default every process is entitled to every message.

How it scales (2000 processes x 10^5 messages, 10^8 deliveries) without O(N) work per
delivery (probabilistic_clocks §4.3):

* ``prefix[q, a]``: how many messages of source a process q has delivered contiguously;
* ``lag[q]``: the sources whose broadcasts q has not all delivered yet.  Only those can hold an
  undelivered predecessor, so the error test of a delivery looks at ``lag[q]`` only;
* ``know[q]``: q's true knowledge vector.  In an error-free delivery the message's past is
  already inside ``prefix[q]``, so only one entry changes; a full O(N) merge happens only on
  errors;
* a message's vector clock is kept only while some later log entry still refers to it.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
from numba import types
from numba.typed import Dict

BROADCAST = 0
DELIVER = 1
TRACK_LIMIT = 50_000_000  # (message, process) pairs above which delivered_by is not kept


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
    undelivered_example: tuple  # up to 5 (message, process) pairs
    error_example: tuple  # up to 5 (message, process) pairs

    @property
    def ok(self) -> bool:
        return self.errors == 0 and self.duplicates == 0 and self.missing == 0

    def assert_ok(self) -> None:
        """Raise unless the run is causally ordered, duplicate-free and complete."""
        if not self.ok:
            raise AssertionError(f"causality oracle: {self}")


def check(n_procs: int, log_kind, log_node, log_msg, entitled=None) -> Report:
    """Check an event log.

    ``log_kind[k]`` is BROADCAST or DELIVER, ``log_node[k]`` the process and ``log_msg[k]`` the
    message id (any non-negative integers, each broadcast exactly once).  A broadcast counts as
    the source's own delivery.  ``entitled`` optionally gives, per message id, a boolean mask of
    the processes that must deliver it (default: all).
    """
    kind = np.asarray(log_kind, np.int8)
    node = np.asarray(log_node, np.int64)
    msg = np.asarray(log_msg, np.int64)
    if not (len(kind) == len(node) == len(msg)):
        raise ValueError("log arrays differ in length")
    if len(msg) and (node.min() < 0 or node.max() >= n_procs or msg.min() < 0):
        raise ValueError("log refers to a process outside 0..n_procs-1 or a negative message id")
    n_msgs = int(msg.max()) + 1 if len(msg) else 0
    is_b = kind == BROADCAST
    if np.bincount(msg[is_b], minlength=n_msgs).max(initial=0) > 1:
        raise ValueError("a message id is broadcast twice")
    last_use = np.zeros(n_msgs, np.int64)
    last_use[msg] = np.arange(len(msg))  # fancy assignment keeps the last occurrence
    errors, err_msg, dup, dcount, delivered_by, err_ex = _scan(
        n_procs, n_msgs, kind, node, msg, last_use, _max_live(is_b, msg, last_use)
    )
    if entitled is None:
        missing = int(n_procs * n_msgs - dcount.sum())
        undelivered = _undelivered_examples(dcount, delivered_by, n_procs, None)
    else:
        ent = np.asarray(entitled, bool)
        if ent.shape != (n_msgs, n_procs) or delivered_by.shape != ent.shape:
            raise ValueError("entitled must be a (messages, processes) mask of a trackable size")
        missing = int(ent.sum() - (ent & delivered_by).sum())
        undelivered = _undelivered_examples(dcount, delivered_by, n_procs, ent)
    return Report(
        processes=n_procs,
        messages=n_msgs,
        deliveries=int(dcount.sum()),
        errors=int(errors),
        messages_with_error=int(err_msg.sum()),
        duplicates=int(dup),
        missing=missing,
        undelivered_example=undelivered,
        error_example=tuple(map(tuple, err_ex.tolist())),
    )


def _max_live(is_b, msg, last_use) -> int:
    """How many vector clocks must be held at once (broadcast seen, last use not yet passed)."""
    delta = np.zeros(len(msg) + 1, np.int64)
    delta[np.flatnonzero(is_b)] += 1
    delta[last_use[msg[is_b]] + 1] -= 1
    return max(1, int(np.cumsum(delta).max(initial=1)))


def _undelivered_examples(dcount, delivered_by, n_procs, entitled):
    if entitled is None:
        short = np.flatnonzero(dcount < n_procs)[:5]
        if delivered_by.shape[0] != len(dcount):  # too large to track per pair: process unknown
            return tuple((int(m), -1) for m in short)
        return tuple((int(m), int(np.flatnonzero(~delivered_by[m])[0])) for m in short)
    gaps = np.argwhere(entitled & ~delivered_by)[:5]
    return tuple(map(tuple, gaps.tolist()))


@numba.njit(cache=True)
def _scan(n, n_msgs, kind, node, msg, last_use, pool_rows):
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
    lag_list = np.zeros((n, n), np.int32)
    lag_len = np.zeros(n, np.int64)
    lag_pos = np.full((n, n), -1, np.int32)
    pool = np.zeros((pool_rows, n), np.int32)
    free_rows = list(range(pool_rows - 1, -1, -1))
    row = np.full(n_msgs, -1, np.int64)
    ahead = Dict.empty(key_type=types.int64, value_type=types.int8)  # delivered past a gap
    dcount = np.zeros(n_msgs, np.int64)
    # who delivered what, only to name examples and to apply an entitlement mask
    track = n_msgs * n <= TRACK_LIMIT
    delivered_by = np.zeros((n_msgs if track else 1, n if track else 1), np.bool_)
    err_msg = np.zeros(n_msgs, np.bool_)
    err_ex = np.zeros((0, 2), np.int64)
    errors = 0
    dup = 0
    for k in range(len(kind)):
        q = node[k]
        m = msg[k]
        if kind[k] == BROADCAST:
            a = q
            nb[a] += 1
            c = nb[a]
            src[m] = a
            seq[m] = c
            by_seq[offset[a] + c - 1] = m
            know[a, a] = c
            prefix[a, a] = c
            r = free_rows.pop()
            row[m] = r
            pool[r, :] = know[a, :]
            for other in range(n):
                if other != a and lag_pos[other, a] < 0:
                    lag_pos[other, a] = lag_len[other]
                    lag_list[other, lag_len[other]] = a
                    lag_len[other] += 1
            dcount[m] += 1
            if track:
                delivered_by[m, a] = True
        else:
            a = src[m]
            if a < 0:
                raise ValueError("a message is delivered before it is broadcast")
            c = seq[m]
            if c <= prefix[q, a] or (q * n_msgs + m) in ahead:
                dup += 1
            else:
                vc = pool[row[m]]
                gap = prefix[q, a] < c - 1
                if not gap:
                    for t in range(lag_len[q]):
                        b = lag_list[q, t]
                        if b != a and prefix[q, b] < vc[b]:
                            gap = True
                            break
                if gap:
                    errors += 1
                    err_msg[m] = True
                    if err_ex.shape[0] < 5:
                        e = np.empty((err_ex.shape[0] + 1, 2), np.int64)
                        e[:-1] = err_ex
                        e[-1, 0] = m
                        e[-1, 1] = q
                        err_ex = e
                    for b in range(n):
                        if vc[b] > know[q, b]:
                            know[q, b] = vc[b]
                if c > know[q, a]:
                    know[q, a] = c
                if c == prefix[q, a] + 1:
                    prefix[q, a] = c
                    while prefix[q, a] < nb[a]:
                        key = q * n_msgs + by_seq[offset[a] + prefix[q, a]]
                        if key not in ahead:
                            break
                        del ahead[key]
                        prefix[q, a] += 1
                else:
                    ahead[q * n_msgs + m] = 1
                if prefix[q, a] == nb[a] and lag_pos[q, a] >= 0:
                    t = lag_pos[q, a]
                    last = lag_list[q, lag_len[q] - 1]
                    lag_list[q, t] = last
                    lag_pos[q, last] = t
                    lag_pos[q, a] = -1
                    lag_len[q] -= 1
                dcount[m] += 1
                if track:
                    delivered_by[m, q] = True
        if last_use[m] == k and row[m] >= 0:
            free_rows.append(row[m])
            row[m] = -1
    return errors, err_msg, dup, dcount, delivered_by, err_ex
