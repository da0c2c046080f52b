"""Buffered messages and their wake-up lists (spec §3.5): no buffer is ever rescanned.

A message that fails its delivery condition is *parked* under one unmet requirement, with
``need`` (the value that requirement waits for) and ``resume`` (how far the condition was
already checked: requirements met once stay met, so a re-check starts at the first unmet one).
The kernel picks the requirement likely to be met last (``kernel.internal_receive``,
``kernel.external_receive``): a message is woken when that one is met and delivered then if
the others are too, else parked again.  Which one it picks never changes *when* a message is
delivered (the instant its last requirement is met), only how often it is re-checked, and the
order of the messages one delivery releases at the same instant.  Spec §3.5 recommends the
first unmet requirement (its [R] wake-up index); the paper's rule is only the fix-point after
every delivery, which either choice implements.
Lists are addressed by an integer ``head`` chosen by the kernel:

* an *integer entry* list (an external peer's ``VTx[i]``, the super peer's ``LR[k].in``, an IDR
  peer's ``VT[k]``) holds messages waiting for that entry to reach ``need``; ``wake_upto`` moves
  every record with ``need <= value`` to the ready stack when the entry grows;
* a *position* list (an internal peer's ``RV``, an external peer's ``VTx[SP]``) is a ring slot
  ``position % ring``; ``wake_at`` moves the records waiting for exactly that position.

The kernel pops the ready stack (``pop_ready``), re-evaluates each message from its ``resume``
point and delivers it or parks it again under its next unmet requirement, until the stack is
empty: a delivery that unblocks others runs to a fix-point, as the paper's "check the buffer
after every delivery" does.

Every delivery asks whether its list is empty, but most lists are: at N = 900 the free-scale
kernel's heads take about 9 MB (a ring of 1024 slots per peer and role), so reading the head
itself would be a cache miss on almost every delivery.  A bitmap of the non-empty lists
(``occupied``, one bit per head, about 140 KB) answers instead, and the head is only read when
something waits on it.

A state using this module has the fields ``recs`` (a growable table, columns ``R_*``),
``heads`` (int64, -1 = empty list), ``occupied`` (uint64 bitmap: bit ``head`` set iff that list
is non-empty), ``ready`` (int64 stack), ``parked`` (int64[roles, 2]: how many messages each role
holds now, and the most it held) and ``tops`` with the fill levels ``T_RECS``, ``T_FREE_RECS``
and ``T_READY`` passed in by the kernel.
"""

from __future__ import annotations

import numpy as np

from causal_lab.engine import memory, state
from causal_lab.engine.jit import njit

ONE = np.uint64(1)

R_WIRE, R_ROLE, R_NODE, R_NEED, R_RESUME, R_NEXT = range(6)
COLUMNS = 6


def new_fields(heads: int, roles: int) -> dict:
    """Records and heads are int32 (every id, need and resume of a run is far below 2^31: its
    event log of one row per arrival would not fit in memory first): at N = 900 the heads take
    4.5 MB instead of 9 and the live records (about 6 x 10^4) 1.4 MB instead of 2.8, and a
    park's load of its list head was the hottest instruction of ``kernel.external_receive``."""
    return dict(recs=state.table(COLUMNS, 1024, np.int32), heads=np.full(heads, -1, np.int32),
                occupied=np.zeros(heads // 64 + 1, np.uint64),
                ready=np.empty(1024, np.int64), parked=np.zeros((roles, 2), np.int64))


@njit(inline="always")
def _bit(head):
    return ONE << np.uint64(head & 63)


@njit(inline="always")
def _waiting(st, head):
    """Whether list ``head`` is non-empty (one bit of ``occupied``, not the head)."""
    return (st.occupied[head >> 6] & _bit(head)) != 0


@njit(inline="always")
def park(st, t_recs, t_free, head, wire, role, node, need, resume):
    """Buffer ``wire`` at ``node`` under list ``head``."""
    st.recs, r = state.take(st.recs, st.tops, t_recs, t_free, R_NEXT)
    recs = st.recs
    recs[r, R_WIRE] = wire
    recs[r, R_ROLE] = role
    recs[r, R_NODE] = node
    recs[r, R_NEED] = need
    recs[r, R_RESUME] = resume
    recs[r, R_NEXT] = st.heads[head] if _waiting(st, head) else -1  # most lists are empty: no load
    st.heads[head] = r
    st.occupied[head >> 6] |= _bit(head)
    parked = st.parked
    parked[role, 0] += 1
    if parked[role, 0] > parked[role, 1]:
        parked[role, 1] = parked[role, 0]


@njit(inline="always")
def _push_ready(st, t_ready, r):
    k = st.tops[t_ready]
    if k == len(st.ready):
        st.ready = state.grown(st.ready, k + 1)
    st.ready[k] = r
    st.tops[t_ready] = k + 1


@njit
def _wake(st, t_ready, head, value, exact):
    recs = st.recs
    prev = -1
    r = st.heads[head]
    while r != -1:
        nxt = recs[r, R_NEXT]
        need = recs[r, R_NEED]
        if need == value or (not exact and need < value):
            if prev == -1:
                st.heads[head] = nxt
            else:
                recs[prev, R_NEXT] = nxt
            _push_ready(st, t_ready, r)
        else:
            prev = r
        r = nxt
    if st.heads[head] == -1:
        st.occupied[head >> 6] &= ~_bit(head)


@njit(inline="always")
def wake_upto(st, t_ready, head, value):
    """An integer entry grew to ``value``: ready every record of ``head`` with need <= value."""
    if _waiting(st, head):
        _wake(st, t_ready, head, value, False)


@njit(inline="always")
def wake_at(st, t_ready, head, position):
    """``position`` was set: ready the records of its ring slot that wait for exactly it."""
    if _waiting(st, head):
        _wake(st, t_ready, head, position, True)


@njit(inline="always")
def prefetch(st, head):
    """Start loading the first record of list ``head``, which the wake-up at the end of this
    delivery will read: parked long ago, it has left the caches, and that load was most of
    ``_wake``'s time."""
    if _waiting(st, head):
        memory.prefetch(st.recs, st.heads[head] * COLUMNS)


@njit
def pop_ready(st, t_ready, t_free):
    """The next ready record as (wire, role, node, resume), its row given back; role -1: none."""
    k = st.tops[t_ready]
    if k == 0:
        return -1, -1, -1, -1
    k -= 1
    st.tops[t_ready] = k
    r = st.ready[k]
    recs = st.recs
    wire, role, node, resume = recs[r, R_WIRE], recs[r, R_ROLE], recs[r, R_NODE], recs[r, R_RESUME]
    state.release(recs, st.tops, t_free, R_NEXT, r)
    st.parked[role, 0] -= 1
    return wire, role, node, resume
