"""Probabilistic causal broadcast with error detectors and dependency requests (seed 004).

Algorithm 1 of seed 004 (Mostéfaoui-Weiss probabilistic clocks, counting semantics, spec §1.5)
with the hooks of Algorithm 2 (REQ / RSP dependency requests, spec §3.2).  Follow one message:

1. ``_broadcast`` (a BROADCAST event at a slot of the workload): p_i adds 1 to its entries f(i),
   the message records the clock ``m.V`` (and ``need_m = m.V − inc_i``, what a receiver must have
   seen) and, for the hash detector, the hash of its dependencies; p_i delivers it
   at once and sends N − 1 copies, each with its own Normal(100 ms, 20 ms) delay (non-FIFO; the
   copies' arrival instants are sorted once and the event queue holds only the next one of each
   broadcast, ``_on_copy``, so the queue stays as small as the number of broadcasts in flight).
   What p_i delivered since its previous broadcast, plus that broadcast, is the new message's
   ``Dep_msg``: the kernel keeps it implicitly, as the stretch of p_i's entries in the event log
   between its two broadcasts (``chain`` links each log entry to the previous one of its process).
2. ``_on_app`` (an APP event at p_r): the message joins p_r's pending list (arrival order), then
   ``_iterate`` scans the list: the first message whose clock condition ``V_r >= need_m`` holds
   goes to ``_attempt``, and the scan restarts after every delivery (iterative delivery).
3. ``_attempt``: the detector (none, Mostéfaoui-Weiss or hash) decides.  No alarm: ``_deliver``
   (clock += inc_j, pool, counts, log).  An alarm: p_r sends REQ to the sender (a real message
   through the delay model).  With ``serial`` recovery (the authors' code) a process has at most
   one request outstanding: a message flagged meanwhile is parked and re-tested when the reply
   comes, and the process skips its broadcast slots while it waits.
4. ``_on_req`` at the sender: it answers RSP with the message's ``Dep_msg`` (spec §3.2).
5. ``_on_rsp`` at p_r: the message waits until every id of ``Dep_msg`` is delivered, then is
   delivered without a second detector run (``_deliver_waiting``).

``shadow`` runs deliver exactly as Algorithm 1 (no detector acts) and record, at every delivery,
what each detector would have said (both Mostéfaoui polarities, both hash modes): Table 1's
"Mostéfaoui" column counts the errors of such a run that the detector does not flag.

Every broadcast and delivery goes to the event log; whether a delivery was out of causal order is
decided by the independent oracle (``causal_lab.oracle``), never by the protocol.  Receptions
(``_on_copy``) and deliveries (``_deliver``) at processes other than the sender also add their
latency since the broadcast to a running sum (``Run.mean_reception_latency``,
``Run.mean_delivery_latency``): two means, not an instant per (message, process).

**The detectors** (run on m from p_j at p_i when m's clock condition first holds, before the
delivery increment, spec §3.3; True = "possible error", send a dependency request).

A detector runs on a message m from p_j at p_i when m's clock condition first holds, before the
delivery increment (spec §3.3), and answers "possible error" (send a dependency request) or not.

**Mostéfaoui-Weiss** (seed 004 §2, spec §3.3).  ``A(i, m) ⇔ ∃ x ∈ f(j): V_i[x] = m.V[x] − 1``.
The paper's text flags m when A holds; that reading flags nearly every delivery and catches
nearly every error, which contradicts Table 1 (5 of 507 caught), so the normative polarity
(spec §3.3, confirmed by the authors' code) flags m when A does *not* hold.  Both are computed.

**Hash detector** (Algorithm 3).  m carries a hash of (part of) its causal past; the receiver
hashes candidate dependency sets built from what it delivered and flags m when none matches.  A
set of messages is represented by the latest sequence number per sender, and hashed additively
with the spec's terms ``G(a, c)`` (Appendix A.6: "the first c messages of a"), so a candidate is
updated in O(1) when one sender's count changes.  The hash width is configurable: comparisons use
the low ``bits`` bits, so narrow hashes make collisions (a match for a wrong set, letting an error
through) observable; the oracle counts such deliveries like any other error.

* ``authors`` mode (spec amendment 1, the authors' ``HashErrorDetectorClockDifference``): the
  sender hashes the latest message per sender among its recent deliveries whose clock
  difference ``Σ_x (m.V[x] − d.V[x])`` is below ``D = k(0.15 λ + 10)``.  The receiver forms
  P = its recent deliveries with ``d.V ≤ m.V`` and the same difference bound, sorted by
  increasing difference, and hashes subsets of P in binary-counter order (all of P; without P0;
  without P1; without P0 and P1; ...) up to ``l = 200`` hashes, then the empty set.  "Recent"
  is the amendment's "last 2 s" as the authors' code keeps it: the messages received at most
  τ = 2 s before the process's last broadcast (``window_start``).
* ``residual`` mode (spec §3.4.2, our variant): the sender hashes its whole causal past (its
  per-sender delivered counts, ``H(cnt)``), and the receiver rebuilds it from its own counts by
  removing messages of its 2-s pool: first those whose clock proves they are not in m's past
  (``e.V ≰ m.V − inc_j``: forced removals), then a depth-first search over the others guided by
  the exact clock surplus ``δ = V_i − (m.V − inc_j)``, which a correct removal set must cancel.

Cost.  With counting clocks ``V = Σ_a cnt[a]·inc_a`` (spec §1.3), every quantity used above is
either a vector comparison between two *messages* (the same at every receiver) or a scalar:
``Σ_x V[x]`` is k times the size of the causal past, so the difference bound is a comparison of
two sums, and a process's pool is scanned newest first and left as soon as the sums it holds are
too small.  Pairwise comparisons ``e.V ≤ m.V`` (authors) and ``e.V ≤ m.V − inc_j`` (residual) are
computed once per pair of messages and cached for every receiver (``compatible``), shortcut by the
sender's own state (whatever p_j delivered before broadcasting m is in m's past, hence ≤).

Two exact shortcuts settle most tests without scanning the pool:

* authors: ``P`` is the set ``C_m`` of messages with ``d.V ≤ m.V`` and the difference bound
  (a property of m, kept per message and extended as new messages appear), intersected with what
  p_i delivered in the last τ.  When p_i has delivered all of ``C_m`` within τ, P = C_m, and the
  first subset's hash (all of P) is ``C_m``'s, computed once per message;
* residual: if nothing of m's past is missing, p_i delivered exactly ``r = (ΣV_i − Σneed_m)/k``
  messages m's sender had not, and when they are p_i's ``r`` latest deliveries, p_i's own past
  before them *is* m's past: its hash, kept per delivery in the pool, is tried first (one more
  candidate subset of ``Deliv_i``, so a match still proves ``past(m) ⊆ Deliv_i`` up to a collision).

All compiled code of a run lives in this one module on purpose: numba's on-disk cache
(``cache=True``) keys a function on its own source file only, so a detector kept in another module
could be edited while the cached kernel goes on running the old version.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from causal_lab import oracle
from causal_lab.engine import events, network, rng, state
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.families.error_detectors.workload import Schedule
from causal_lab.families.probabilistic_clocks import clocks
from causal_lab.families.probabilistic_clocks.clocks import SALT_H, hash_u64_nb

AUTHORS, RESIDUAL = 0, 1
HASH_MODES = {"authors": AUTHORS, "residual": RESIDUAL}
REL_NEED, REL_V = 0, 1  # e.V <= m.V - inc_j (residual), e.V <= m.V (authors)
WINDOW = 512  # pairs (m, e) cached when their broadcast ranks differ by less than this
WORDS = 2 * WINDOW // 64
CM_MAX = 64  # longest C_m kept (longer: the authors' test always scans the pool)
CM_UNKNOWN, CM_TOO_LONG = -1, -2
# residual search: deliveries older than m's broadcast by this much are almost never among the
# messages p_i delivered and m's sender had not, so the search is tried once the pool scan gets
# there (and again over the whole pool if it fails: the margin saves time, never changes a verdict
# except through a hash collision)
EXTRA_MARGIN = 0.25
# why a hash test flagged its message (counters)
FLAG_OWN_PREV, FLAG_NEGATIVE, FLAG_NO_MATCH, FLAG_BUDGET = range(4)
# counters shared with the kernel (indices into st.counters)
(C_EVENTS, C_MSGS, C_SKIPPED, C_REQ, C_RSP, C_RSP_IDS, C_TESTS_AUTH, C_TESTS_RES, C_DFS_NODES,
 C_P_SIZE, C_STOPPED, C_PARKED, C_RETESTS, C_STAMP, C_ARRIVALS, C_FAST_AUTH, C_FAST_RES) = range(17)
C_FLAGS = 17  # 4 reasons of the residual test
C_COLLISIONS = C_FLAGS + 4  # matches of the kept bits only (``_match``)
C_COLLIDED = C_COLLISIONS + 1  # scratch: the current hash test matched through a collision
N_COUNTERS = C_COLLIDED + 1
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
EV_BROADCAST, EV_APP, EV_REQ, EV_RSP = range(4)
NONE, MOSTEFAOUI, HASH = range(3)
DETECTORS = {"none": NONE, "mostefaoui": MOSTEFAOUI, "hash": HASH}
RECOVERY = ("serial", "parallel")
MW_POLARITIES = ("normative", "literal")
# per-delivery verdict bits (Run.flags, aligned with the log)
# (F_COLLISION: the acting hash test accepted the message through a collision of its width)
F_MW_NORMATIVE, F_MW_LITERAL, F_HASH_AUTHORS, F_HASH_RESIDUAL, F_RECOVERED, F_COLLISION = 1, 2, 4, 8, 16, 32
MAX_HASH_BITS = 64
TAU = 2.0  # seconds of deliveries the hash detectors look back at
L_AUTHORS, L_RESIDUAL, DFS_BUDGET = 200, 64, 4096
# a run still busy this long after its last slot did not terminate: 60 s, plus one request
# round trip (0.3 s) per message, because the authors' serial recovery can leave a process with a
# backlog that it requests message by message, long after the broadcasts ended (it does end)
DRAIN_LIMIT, DRAIN_PER_MESSAGE = 60.0, 0.3

# records: a received message waiting at one process (pending, parked or recovering)
R_MSG, R_NODE, R_NEXT, R_PREV, R_ARR, R_DEP0, R_DEP1, R_CUR, R_REQ = range(9)
R_COLUMNS = 9
Q_MSG, Q_NODE, Q_LOGPOS, Q_DELIVERED, Q_DEPS = range(5)  # REQ table: message, requester, log length
PL_MSG, PL_TIME, PL_SUM, PL_RECV = range(4)  # pool columns (PL_RECV: when it was received)
T_LOG, T_REC, T_FREE, T_DEP, T_REQ, T_FLIGHT = range(6)  # tops[...]: fill levels, free lists
# latency accumulators (lat_sum, lat_count): receptions and deliveries at processes other than the
# sender, each instant minus the message's broadcast instant (cross-family benchmark)
L_RECEPTION, L_DELIVERY = range(2)

STATE_FIELDS = (
    # configuration
    "n", "msize", "k", "detector", "shadow", "hash_mode", "mw_literal", "serial", "track_auth",
    "track_res", "tracked", "mask", "l_auth", "l_res", "dfs_budget", "tau", "diff_bound", "t_stop",
    "net", "ctrl", "server_free", "ctrl_sent", "f_ent", "delays", "scripted",
    # broadcasts in flight: their copies' arrival instants (sorted) and receivers, free rows
    "fl_time", "fl_recv", "fl_msg", "fl_free", "fl_buf", "fl_rbuf",
    # processes: clock and its sum, sequence numbers, delivered counts and their hash
    "V", "vsum", "seq", "cnt", "hself", "in_rec", "cur_rec",
    # pool: ring of each process's recent deliveries, one cache line each: message, delivery time
    # (ns), clock sum after it, reception time (columns PL_*); pool_h: the hash of the delivered
    # counts after it; last_bcast: each process's last broadcast (the authors' window)
    "pool", "pool_h", "pool_top", "last_bcast",
    # lists of records per process: pending messages that meet the clock condition (arrival
    # order), parked (serial), waiting for deps; the blocked pending ones, each on the wake list
    # of one entry x with V_i[x] < need_m[x] (``_wake``), and how many there are
    "pend_head", "pend_tail", "park_head", "park_tail", "wait_head", "wait_tail", "node_last",
    "wake_head", "blocked",
    # messages (id = broadcast rank); deliv_pos[i, m]: log index of m's delivery at p_i (-1: not
    # yet), one row per process so that its look-ups of recent messages share cache lines
    "msg_src", "msg_seq", "msg_time", "msg_logpos", "msg_V", "msg_need",
    "msg_sumV", "msg_G", "msg_hauth", "msg_hres", "seq_msg", "deliv_pos",
    # pairwise comparisons cached per message (``compatible``), the authors' C_m
    "cN_known", "cN_val", "cV_known", "cV_val", "cm_list", "cm_len", "cm_upto", "cm_hash",
    # tables: records, their arrival times, Dep_msg ids of replies, REQs, the log
    "rec", "rec_time", "dep_ids", "reqs", "req_time", "log", "chain", "lflags", "tops",
    # counters and hash-test histograms; latency sums (seconds) and their counts (L_*)
    "counters", "hist_auth", "hist_res", "lat_sum", "lat_count",
    # scratch of the detectors
    "delta", "u_list", "u_stamp", "c_stamp", "c_val", "s_stamp", "s_best", "s_list", "s_src", "s_seq",
    "p_sum", "p_pos", "p_src", "p_seq", "p_g", "p_all", "d_next", "d_sender",
)
StateType, State = state.define("State", STATE_FIELDS, __name__)


# ------------------------------------------------------------------------------------------
# The detectors
# ------------------------------------------------------------------------------------------


@njit
def _ns(t):
    """A time in integer nanoseconds (pool entries keep their time in an int64 column)."""
    return np.int64(math.floor(t * 1e9))


@njit
def window_start(st, i):
    """Start (ns) of the authors' window of p_i's delivered messages: those received at most τ
    before p_i's last broadcast.  The authors' node prunes its list only when it broadcasts
    (``NodeWithControl::removeOldMessages``), so a node that skips its slots while recovering
    keeps what it delivered since (spec amendment 1's "last 2 s", read in the authors' code)."""
    if st.last_bcast[i] == -np.inf:
        return np.iinfo(np.int64).min
    return _ns(st.last_bcast[i] - st.tau)


@njit
def past_term(a, c):
    """G(a, c): the hash of "the first c messages of sender a" (0 for c <= 0; spec A.6)."""
    if c <= 0:
        return _ZERO
    return hash_u64_nb(SALT_H, a, c)


@njit
def same_hash(h1, h2, mask):
    """Whether two hashes agree on the bits the configured width keeps."""
    return ((h1 ^ h2) & mask) == _ZERO


@njit
def _match(st, h, target):
    """A candidate's hash against the one m carries, on the kept bits.  A match of the kept bits
    whose full 64-bit values differ is a collision of the configured width (a wrong candidate
    set accepted): counted, and marked on the delivery it lets through (``F_COLLISION``), so the
    oracle can say which errors collisions caused.  (A collision of all 64 bits cannot be seen
    this way; the spec puts its expectation below 10^-10 per experiment, §3.4.2.)"""
    if not same_hash(h, target, st.mask):
        return False
    if h != target:
        st.counters[C_COLLISIONS] += 1
        st.counters[C_COLLIDED] = 1
    return True


@njit
def mostefaoui_agrees(V, i, need, m, f_ent, j):
    """A(i, m): some entry x of the sender has V_i[x] = m.V[x] − 1 (= need_m[x])."""
    for t in range(f_ent.shape[1]):
        x = f_ent[j, t]
        if V[i, x] == need[m, x]:
            return True
    return False


@njit
def _next_stamp(st):
    st.counters[C_STAMP] += 1
    return st.counters[C_STAMP]


@njit
def _latest_per_sender_hash(st, srcs, seqs, n):
    """Hash of a set given as (sender, seq) pairs: the latest message of each sender counts."""
    stamp = _next_stamp(st)
    s_stamp, s_best, s_list = st.s_stamp, st.s_best, st.s_list
    senders = 0
    for t in range(n):
        a, c = srcs[t], seqs[t]
        if s_stamp[a] != stamp:
            s_stamp[a] = stamp
            s_best[a] = c
            s_list[senders] = a
            senders += 1
        elif c > s_best[a]:
            s_best[a] = c
    h = _ZERO
    for t in range(senders):
        a = s_list[t]
        h += past_term(a, s_best[a])
    return h


# ------------------------------------------------------------------------------------------
# e.V <= m.V (- inc_j), once per pair of messages
# ------------------------------------------------------------------------------------------


@njit
def _compute_compatible(st, m, e, rel):
    j = st.msg_src[m]
    seen = st.deliv_pos[j, e]
    if seen >= 0 and seen < st.msg_logpos[m]:
        return True  # p_j delivered e before broadcasting m: e.V <= V_j = m.V - inc_j
    msg_V = st.msg_V
    if rel == REL_NEED:
        if st.msg_sumV[e] > st.msg_sumV[m] - st.k:
            return False
        bound = st.msg_need
    else:
        if st.msg_sumV[e] > st.msg_sumV[m]:
            return False
        bound = st.msg_V
    ok = True
    for x in range(st.msize):
        ok &= msg_V[e, x] <= bound[m, x]
    return ok


@njit
def compatible(st, known, value, m, e, rel):
    """``e.V <= m.V - inc_j`` (REL_NEED) or ``e.V <= m.V`` (REL_V), cached per pair in the
    relation's ``known`` / ``value`` bit tables."""
    d = e - m + WINDOW  # message ids are ranks in broadcast order
    if d < 0 or d >= 2 * WINDOW:
        return _compute_compatible(st, m, e, rel)
    w = d >> 6
    bit = _ONE << np.uint64(d & 63)
    if known[m, w] & bit:
        return (value[m, w] & bit) != _ZERO
    ok = _compute_compatible(st, m, e, rel)
    known[m, w] |= bit
    if ok:
        value[m, w] |= bit
    return ok


# ------------------------------------------------------------------------------------------
# authors' mode
# ------------------------------------------------------------------------------------------


@njit
def authors_sender_hash(st, i, m, now):
    """What p_i attaches to its new message m: the hash of the latest message per sender among
    its window of deliveries (``window_start``) within the clock-difference bound (own ones
    included).  The window then moves to this broadcast, as the authors' node prunes its list."""
    low = st.msg_sumV[m] - st.diff_bound
    oldest = window_start(st, i)
    st.last_bcast[i] = now
    top = st.pool_top[i]
    cap = st.pool.shape[1]
    pool, msg_sumV = st.pool, st.msg_sumV
    msg_src, msg_seq, srcs, seqs = st.msg_src, st.msg_seq, st.p_src, st.p_seq
    n = 0
    for idx in range(top - 1, max(top - cap, 0) - 1, -1):
        slot = idx & (cap - 1)
        if pool[i, slot, PL_SUM] <= low:
            break  # sums after each delivery only grow: older entries are further below
        e = pool[i, slot, PL_MSG]
        if msg_sumV[e] > low and pool[i, slot, PL_RECV] >= oldest:
            srcs[n], seqs[n] = msg_src[e], msg_seq[e]
            n += 1
    return _latest_per_sender_hash(st, srcs, seqs, n)


@njit
def _cm_refresh(st, m):
    """Bring C_m (messages d != m with d.V <= m.V and the difference bound) up to date with
    every message broadcast so far; its hash is the latest-per-sender hash of the set."""
    if st.cm_len[m] == CM_TOO_LONG:
        return
    count = st.counters[C_MSGS]
    low = st.msg_sumV[m] - st.diff_bound
    msg_sumV, cm_list, k = st.msg_sumV, st.cm_list, st.k
    known, value = st.cV_known, st.cV_val
    n = st.cm_len[m]
    changed = False
    if n == CM_UNKNOWN:
        n = 0
        changed = True
        d = m - 1
        while d >= 0 and k * (d + 1) > low:  # sum(d.V) <= k·(d+1): nothing older can qualify
            if msg_sumV[d] > low and compatible(st, known, value, m, d, REL_V):
                if n == CM_MAX:
                    st.cm_len[m] = CM_TOO_LONG
                    return
                cm_list[m, n] = d
                n += 1
            d -= 1
        st.cm_upto[m] = m + 1
    top = msg_sumV[m]
    for d in range(st.cm_upto[m], count):
        if low < msg_sumV[d] <= top and compatible(st, known, value, m, d, REL_V):
            if n == CM_MAX:
                st.cm_len[m] = CM_TOO_LONG
                return
            cm_list[m, n] = d
            n += 1
            changed = True
    st.cm_upto[m] = count
    st.cm_len[m] = n
    if changed:
        srcs, seqs = st.p_src, st.p_seq
        for t in range(n):
            srcs[t], seqs[t] = st.msg_src[cm_list[m, t]], st.msg_seq[cm_list[m, t]]
        st.cm_hash[m] = _latest_per_sender_hash(st, srcs, seqs, n)


@njit
def _authors_fast(st, i, m, now):
    """P = C_m when p_i delivered all of C_m inside its window (sure for a message broadcast after
    the window's start); then its first subset is C_m itself."""
    n = st.cm_len[m]
    if n < 0:
        return False
    oldest = window_start(st, i) / 1e9
    cm_list, deliv_pos, msg_time = st.cm_list, st.deliv_pos, st.msg_time
    for t in range(n):
        d = cm_list[m, t]
        if deliv_pos[i, d] < 0 or msg_time[d] < oldest:
            return False
    return _match(st, st.cm_hash[m], st.msg_hauth[m])


@njit
def _insert_p(st, n, d, key_sum, key_pos):
    """Insert d into P (n members), ordered by increasing clock difference (decreasing sum),
    ties by delivery order at the receiver (the older first, as the authors' insertion does)."""
    p_sum, p_pos, p_src, p_seq, p_g = st.p_sum, st.p_pos, st.p_src, st.p_seq, st.p_g
    pos = n
    while pos > 0 and (p_sum[pos - 1] < key_sum or (p_sum[pos - 1] == key_sum and p_pos[pos - 1] > key_pos)):
        p_sum[pos], p_pos[pos] = p_sum[pos - 1], p_pos[pos - 1]
        p_src[pos], p_seq[pos], p_g[pos] = p_src[pos - 1], p_seq[pos - 1], p_g[pos - 1]
        pos -= 1
    p_sum[pos], p_pos[pos] = key_sum, key_pos
    p_src[pos], p_seq[pos], p_g[pos] = st.msg_src[d], st.msg_seq[d], st.msg_G[d]


@njit
def _gather_p(st, i, m, now):
    """P at p_i, sorted; from C_m when every member's window test is decided by its broadcast
    time, else by scanning p_i's pool.  Returns |P|."""
    oldest = window_start(st, i)
    deliv_pos, msg_sumV = st.deliv_pos, st.msg_sumV
    n = st.cm_len[m]
    if n >= 0:
        size = 0
        for t in range(n):
            d = st.cm_list[m, t]
            pos = deliv_pos[i, d]
            if pos < 0:
                continue
            if st.msg_time[d] < oldest / 1e9:
                size = -1  # delivered, maybe received before the window: ask the pool
                break
            _insert_p(st, size, d, msg_sumV[d], pos)
            size += 1
        if size >= 0:
            return size
    low = msg_sumV[m] - st.diff_bound
    top = st.pool_top[i]
    cap = st.pool.shape[1]
    pool = st.pool
    known, value = st.cV_known, st.cV_val
    size = 0
    for idx in range(top - 1, max(top - cap, 0) - 1, -1):
        slot = idx & (cap - 1)
        if pool[i, slot, PL_SUM] <= low:
            break  # sums after each delivery only grow: older entries are further below
        e = pool[i, slot, PL_MSG]
        if msg_sumV[e] > low and pool[i, slot, PL_RECV] >= oldest and compatible(st, known, value, m, e, REL_V):
            _insert_p(st, size, e, msg_sumV[e], idx)
            size += 1
    return size


@njit
def _subset_hash(st, n, dropped, distinct):
    """Hash of P without the members whose bit is set in ``dropped`` (latest per sender)."""
    if distinct:
        h = st.p_all[0]
        t = 0
        while dropped:
            if dropped & 1:
                h -= st.p_g[t]
            dropped >>= 1
            t += 1
        return h
    kept = 0
    for t in range(n):
        if t < 62 and (dropped >> t) & 1:
            continue
        st.s_src[kept], st.s_seq[kept] = st.p_src[t], st.p_seq[t]
        kept += 1
    return _latest_per_sender_hash(st, st.s_src, st.s_seq, kept)


@njit
def authors_test(st, i, m, now):
    """The authors' receiver test; returns (possible error, hashes computed, |P|)."""
    _cm_refresh(st, m)
    if _authors_fast(st, i, m, now):
        st.counters[C_FAST_AUTH] += 1
        return False, 1, st.cm_len[m]
    n = _gather_p(st, i, m, now)
    stamp = _next_stamp(st)
    distinct = True
    total = _ZERO
    for t in range(n):
        a = st.p_src[t]
        if st.s_stamp[a] == stamp:
            distinct = False
        st.s_stamp[a] = stamp
        total += st.p_g[t]
    st.p_all[0] = total
    target = st.msg_hauth[m]
    subsets = 0 if n == 0 else (1 << n if n < 20 else st.l_auth)
    subsets = min(subsets, st.l_auth)
    tried = 0
    for dropped in range(subsets):
        tried += 1
        if _match(st, _subset_hash(st, n, dropped, distinct), target):
            return False, tried, n
    tried += 1  # then the empty set
    return not _match(st, _ZERO, target), tried, n


# ------------------------------------------------------------------------------------------
# residual mode (spec §3.4.2)
# ------------------------------------------------------------------------------------------


# The helpers below take the state's arrays rather than the state: each read of a field of ``st``
# costs an atomic reference count increment and decrement, which inside the search's loops took
# about a third of a residual-mode run.


@njit
def _candidate(c_stamp, c_val, cnt, i, a, stamp):
    """How many messages of a the candidate past still counts (p_i's count unless lowered)."""
    if c_stamp[a] == stamp:
        return c_val[a]
    return np.int64(cnt[i, a])


@njit
def _fits(delta, f_ent, k, a):
    """inc_a <= δ: removing one message of a keeps the surplus non-negative."""
    for t in range(k):
        if delta[f_ent[a, t]] < 1:
            return False
    return True


@njit
def _shift(delta, f_ent, k, a, by):
    """δ -= by·inc_a; returns the change in the number of non-zero entries and whether one went
    negative."""
    changed = 0
    negative = False
    for t in range(k):
        x = f_ent[a, t]
        old = delta[x]
        new = old - by
        delta[x] = new
        changed += int(new != 0) - int(old != 0)
        negative |= new < 0
    return changed, negative


@njit
def _residual_fast(st, i, m):
    """p_i's past before its r latest deliveries, r = the number of messages p_i delivered and
    m's sender had not if nothing of m's past is missing."""
    r = (st.vsum[i] - st.msg_sumV[m] + st.k) // st.k
    cap = st.pool.shape[1]
    if r >= cap:
        return False
    idx = st.pool_top[i] - 1 - r
    h = st.pool_h[i, idx & (cap - 1)] if idx >= 0 else _ZERO
    return _match(st, h, st.msg_hres[m])


@njit
def residual_test(st, i, m, arrival):
    """Spec §3.4.2; returns (possible error, hashes computed, reason or -1)."""
    j, s = st.msg_src[m], st.msg_seq[m]
    if st.cnt[i, j] != s - 1:
        return True, 0, FLAG_OWN_PREV
    if _residual_fast(st, i, m):
        st.counters[C_FAST_RES] += 1
        return False, 1, -1
    nonzero = 0
    V, need, delta = st.V, st.msg_need, st.delta
    msize = st.msize
    for x in range(msize):
        d = V[i, x] - need[m, x]
        delta[x] = d
        nonzero += int(d != 0)
    h = st.hself[i]
    target = st.msg_hres[m]
    if nonzero == 0:
        return not _match(st, h, target), 2, FLAG_NO_MATCH
    stamp = _next_stamp(st)
    hashes = 2  # the shortcut's candidate, then the one where the surplus vanishes
    top = st.pool_top[i]
    cap = st.pool.shape[1]
    oldest = _ns(arrival - st.tau)
    pool, msg_src, msg_seq = st.pool, st.msg_src, st.msg_seq
    known, value, u_list = st.cN_known, st.cN_val, st.u_list
    c_stamp, c_val, cnt, f_ent, k = st.c_stamp, st.c_val, st.cnt, st.f_ent, st.k
    uncertain = 0
    searched = False
    early = _ns(st.msg_time[m] - EXTRA_MARGIN)
    # (a) newest first: forced removals until the surplus is explained
    for idx in range(top - 1, max(top - cap, 0) - 1, -1):
        slot = idx & (cap - 1)
        if pool[i, slot, PL_TIME] < oldest:
            break
        if not searched and pool[i, slot, PL_TIME] < early:
            # older deliveries are almost surely in m's past: search now; on a miss, go on
            searched = True
            flagged, tried, _ = _search(st, i, m, stamp, uncertain, nonzero, h)
            hashes += tried
            if not flagged:
                return False, hashes, -1
        e = pool[i, slot, PL_MSG]
        a = msg_src[e]
        if a == j:
            continue
        if compatible(st, known, value, m, e, REL_NEED):
            u_list[uncertain] = e  # (the search skips it if an older removal took it)
            uncertain += 1
            continue
        c = msg_seq[e]
        now_counted = _candidate(c_stamp, c_val, cnt, i, a, stamp)
        if c > now_counted:
            continue  # already removed with an older message of a
        changed, negative = _shift(delta, f_ent, k, a, now_counted - c + 1)
        nonzero += changed
        h = h + past_term(a, c - 1) - past_term(a, now_counted)
        c_stamp[a] = stamp
        c_val[a] = c - 1
        if negative:
            return True, hashes - 1, FLAG_NEGATIVE
        if nonzero == 0:
            return not _match(st, h, target), hashes, FLAG_NO_MATCH
    # (b) the surplus is still positive: search removals among the uncertain messages
    flagged, tried, reason = _search(st, i, m, stamp, uncertain, nonzero, h)
    return flagged, hashes - 1 + tried, reason


@njit
def _remove(delta, f_ent, k, c_val, a, c, by):
    """Candidate past: count c − by messages of a instead of c (by = 1 removes, −1 restores);
    returns (change in non-zero surplus entries, change of the hash)."""
    changed, _ = _shift(delta, f_ent, k, a, by)
    c_val[a] = c - by
    return changed, past_term(a, c - by) - past_term(a, c)


@njit
def _search(st, i, m, stamp, uncertain, nonzero, h):
    """Depth-first search over removals of uncertain pool messages (spec §3.4.2 (b)): senders
    ordered by their latest counted pool message, most recent first; a sender may be removed
    several times.  Leaves δ and the candidate counts as it found them unless it matches."""
    target = st.msg_hres[m]
    mark = _next_stamp(st)
    delta, f_ent, k = st.delta, st.f_ent, st.k
    c_stamp, c_val, cnt = st.c_stamp, st.c_val, st.cnt
    u_list, u_stamp, s_stamp, s_list = st.u_list, st.u_stamp, st.s_stamp, st.s_list
    msg_src, msg_seq, seq_msg = st.msg_src, st.msg_seq, st.seq_msg
    d_next, d_sender = st.d_next, st.d_sender
    l_res, dfs_budget = st.l_res, st.dfs_budget
    senders = 0
    for t in range(uncertain):
        e = u_list[t]
        a = msg_src[e]
        counted = _candidate(c_stamp, c_val, cnt, i, a, stamp)
        if msg_seq[e] <= counted and _fits(delta, f_ent, k, a):
            u_stamp[e] = mark  # δ only shrinks: a sender that does not fit now never will
            c_val[a] = counted
            c_stamp[a] = stamp
            if s_stamp[a] != mark:
                s_stamp[a] = mark
                s_list[senders] = a
                senders += 1
    nodes = 1
    hashes = 0
    depth = 0
    d_next[0] = 0
    reason = FLAG_NO_MATCH
    while True:
        t = d_next[depth]
        descended = False
        while t < senders:
            a = s_list[t]
            c = c_val[a]
            if c >= 1 and _fits(delta, f_ent, k, a) and u_stamp[seq_msg[a, c]] == mark:
                changed, dh = _remove(delta, f_ent, k, c_val, a, c, 1)
                nonzero += changed
                h += dh
                nodes += 1
                if nonzero == 0:  # a leaf: nothing else fits
                    hashes += 1
                    if _match(st, h, target):
                        st.counters[C_DFS_NODES] += nodes
                        return False, hashes, -1
                    changed, dh = _remove(delta, f_ent, k, c_val, a, c - 1, -1)
                    nonzero += changed
                    h += dh
                    t += 1
                    if hashes >= l_res or nodes >= dfs_budget:
                        reason = FLAG_BUDGET
                        break
                    continue
                d_next[depth] = t + 1
                d_sender[depth] = a
                depth += 1
                d_next[depth] = t  # the same sender may be removed again
                descended = True
                if nodes >= dfs_budget:
                    reason = FLAG_BUDGET
                break
            t += 1
        if reason == FLAG_BUDGET or (not descended and depth == 0):
            break
        if descended:
            continue
        depth -= 1
        a = d_sender[depth]
        changed, dh = _remove(delta, f_ent, k, c_val, a, c_val[a], -1)
        nonzero += changed
        h += dh
    while depth > 0:  # leave δ and the counts as they were
        depth -= 1
        a = d_sender[depth]
        _remove(delta, f_ent, k, c_val, a, c_val[a], -1)
    st.counters[C_DFS_NODES] += nodes
    return True, hashes, reason


# ------------------------------------------------------------------------------------------
# Broadcast
# ------------------------------------------------------------------------------------------


@njit
def _log(st, kind, node, msg, flags):
    """Append to the event log; returns the entry's index."""
    state.log(st, T_LOG, kind, node, msg)
    pos = st.tops[T_LOG] - 1
    if pos >= len(st.chain):
        st.chain = state.grown(st.chain, pos + 1)
        st.lflags = state.grown(st.lflags, pos + 1)
    st.chain[pos] = st.node_last[node]
    st.lflags[pos] = flags
    st.node_last[node] = pos
    return pos


@njit
def _depart(st, sender, now):
    """When a packet handed to ``sender``'s sending queue at ``now`` leaves (t_pc, t_t)."""
    start = max(now + st.net.t_pc, st.server_free[sender])
    st.server_free[sender] = start + st.net.t_t
    return start + st.net.t_t


@njit
def _account_delivery(st, i, m, now, received):
    """Everything a delivery of m at p_i changes besides the log: pool, counts and their hash."""
    a = st.msg_src[m]
    if st.track_res:
        c = st.cnt[i, a] + 1
        st.cnt[i, a] = c
        st.hself[i] += past_term(a, c) - past_term(a, c - 1)
    if st.track_auth or st.track_res:
        top = st.pool_top[i]
        slot = top & (st.pool.shape[1] - 1)
        pool = st.pool
        pool[i, slot, PL_MSG] = m
        pool[i, slot, PL_TIME] = _ns(now)
        pool[i, slot, PL_SUM] = st.vsum[i]
        pool[i, slot, PL_RECV] = _ns(received)
        if st.track_res:
            st.pool_h[i, slot] = st.hself[i]
        st.pool_top[i] = top + 1


@njit
def _broadcast(st, q, b, i, slot, now):
    if st.serial and st.in_rec[i]:
        st.counters[C_SKIPPED] += 1  # the authors' node skips its slot while recovering
        return
    m = st.counters[C_MSGS]
    st.counters[C_MSGS] = m + 1
    s = st.seq[i] + 1
    st.seq[i] = s
    st.msg_src[m], st.msg_seq[m], st.msg_time[m] = i, s, now
    st.seq_msg[i, s] = m
    V, msg_V, msg_need = st.V, st.msg_V, st.msg_need
    for x in range(st.msize):
        msg_need[m, x] = V[i, x]
    for t in range(st.k):
        V[i, st.f_ent[i, t]] += 1
    for t in range(st.k):
        _wake(st, i, st.f_ent[i, t])
    for x in range(st.msize):
        msg_V[m, x] = V[i, x]
    st.vsum[i] += st.k
    st.msg_sumV[m] = st.vsum[i]
    st.msg_G[m] = past_term(i, s)
    if st.track_auth:
        st.msg_hauth[m] = authors_sender_hash(st, i, m, now)
    if st.track_res:
        st.msg_hres[m] = st.hself[i]  # counts of everything delivered so far, m excluded
    pos = _log(st, oracle.BROADCAST, i, m, 0)
    st.msg_logpos[m] = pos
    if st.tracked:
        st.deliv_pos[i, m] = pos
    _account_delivery(st, i, m, now, now)
    # the N - 1 copies: arrival instants sorted once; the event queue holds the next one only
    f = _flight_slot(st)
    times, receivers = st.fl_time, st.fl_recv
    c = 0
    for r in range(st.n):
        if r == i:
            continue
        if st.scripted and not math.isnan(st.delays[b, r]):
            times[f, c] = now + st.delays[b, r]
        else:
            times[f, c] = _depart(st, i, now) + network.propagation(st.net, i, slot * st.n + r)
        receivers[f, c] = r
        c += 1
    order = np.argsort(times[f, :c])
    st.fl_buf[:c] = times[f, :c]
    st.fl_rbuf[:c] = receivers[f, :c]
    for t in range(c):
        times[f, t] = st.fl_buf[order[t]]
        receivers[f, t] = st.fl_rbuf[order[t]]
    st.fl_msg[f] = m
    if c > 0:
        events.schedule(q, times[f, 0], EV_APP, f, 0)
    else:
        _release_flight(st, f)


@njit
def _flight_slot(st):
    """A free row of the in-flight tables (one row per broadcast whose copies are travelling)."""
    if st.tops[T_FLIGHT] == 0:
        rows = st.fl_time.shape[0]
        times = np.empty((2 * rows, st.fl_time.shape[1]))
        times[:rows] = st.fl_time
        receivers = np.empty((2 * rows, st.fl_recv.shape[1]), np.int32)
        receivers[:rows] = st.fl_recv
        msgs = np.empty(2 * rows, np.int64)
        msgs[:rows] = st.fl_msg
        free = np.empty(2 * rows, np.int64)
        st.fl_time, st.fl_recv, st.fl_msg, st.fl_free = times, receivers, msgs, free
        for f in range(2 * rows - 1, rows - 1, -1):
            _release_flight(st, f)
    st.tops[T_FLIGHT] -= 1
    return st.fl_free[st.tops[T_FLIGHT]]


@njit
def _release_flight(st, f):
    st.fl_free[st.tops[T_FLIGHT]] = f
    st.tops[T_FLIGHT] += 1


@njit
def _on_copy(st, q, f, c, now):
    """The c-th arrival of in-flight broadcast f: schedule the next one, then receive.  This is
    the reception of m at its receiver: each receiver gets one copy, and a reply (RSP) carries
    only ids, so no message reaches a process earlier by another way."""
    m, r = st.fl_msg[f], st.fl_recv[f, c]
    if c + 1 < st.n - 1:
        events.schedule(q, st.fl_time[f, c + 1], EV_APP, f, c + 1)
    else:
        _release_flight(st, f)
    _add_latency(st, L_RECEPTION, m, now)
    _on_app(st, q, m, r, now)


@njit
def _add_latency(st, which, m, now):
    """Add ``now`` minus m's broadcast instant to the latency sum ``which`` (L_RECEPTION or
    L_DELIVERY): the cross-family means without keeping an instant per (message, process)."""
    st.lat_sum[which] += now - st.msg_time[m]
    st.lat_count[which] += 1


# ------------------------------------------------------------------------------------------
# Records and their lists
# ------------------------------------------------------------------------------------------


@njit
def _new_record(st, m, i, arrival):
    st.rec, r = state.take(st.rec, st.tops, T_REC, T_FREE, R_NEXT)
    st.rec_time = state.grown(st.rec_time, r + 1)
    rec = st.rec
    rec[r, R_MSG], rec[r, R_NODE], rec[r, R_NEXT], rec[r, R_PREV] = m, i, -1, -1
    rec[r, R_ARR] = st.counters[C_ARRIVALS]
    st.counters[C_ARRIVALS] += 1
    rec[r, R_REQ] = -1
    st.rec_time[r] = arrival
    return r


@njit
def _push(rec, head, tail, i, r):
    rec[r, R_NEXT] = -1
    rec[r, R_PREV] = tail[i]
    if tail[i] == -1:
        head[i] = r
    else:
        rec[tail[i], R_NEXT] = r
    tail[i] = r


@njit
def _unlink(rec, head, tail, i, r):
    prev, nxt = rec[r, R_PREV], rec[r, R_NEXT]
    if prev == -1:
        head[i] = nxt
    else:
        rec[prev, R_NEXT] = nxt
    if nxt == -1:
        tail[i] = prev
    else:
        rec[nxt, R_PREV] = prev


@njit
def _insert_by_arrival(rec, head, tail, i, r):
    """Put r back into a list kept in arrival order (parked messages re-queued), walking from
    the end whose arrival rank is nearer to r's: a parked message is usually old, and the list
    of a process that fell behind is long."""
    arr = rec[r, R_ARR]
    if head[i] != -1 and arr - rec[head[i], R_ARR] < rec[tail[i], R_ARR] - arr:
        nxt = head[i]
        while nxt != -1 and rec[nxt, R_ARR] < arr:
            nxt = rec[nxt, R_NEXT]
        after = tail[i] if nxt == -1 else rec[nxt, R_PREV]
    else:
        after = tail[i]
        while after != -1 and rec[after, R_ARR] > arr:
            after = rec[after, R_PREV]
        nxt = head[i] if after == -1 else rec[after, R_NEXT]
    rec[r, R_PREV], rec[r, R_NEXT] = after, nxt
    if after == -1:
        head[i] = r
    else:
        rec[after, R_NEXT] = r
    if nxt == -1:
        tail[i] = r
    else:
        rec[nxt, R_PREV] = r


# ------------------------------------------------------------------------------------------
# Reception, detection, delivery
# ------------------------------------------------------------------------------------------


@njit
def _clock_ok(V, i, need, m, msize):
    """Algorithm 1's delivery condition: V_i[x] >= m.V[x] − inc_j[x] for every entry x."""
    ok = True
    for x in range(msize):
        ok &= V[i, x] >= need[m, x]
    return ok


@njit
def _deliver(st, i, m, now, received, flags):
    """Deliver m at p_i, a process other than its sender (the sender's own delivery is its
    broadcast); the latency includes any wait for requested dependencies."""
    pos = _log(st, oracle.DELIVER, i, m, flags)
    _add_latency(st, L_DELIVERY, m, now)
    if st.tracked:
        st.deliv_pos[i, m] = pos
    a = st.msg_src[m]
    for t in range(st.k):
        st.V[i, st.f_ent[a, t]] += 1
    for t in range(st.k):
        _wake(st, i, st.f_ent[a, t])
    st.vsum[i] += st.k
    _account_delivery(st, i, m, now, received)
    return pos


@njit
def _hash_flag(st, i, m, arrival, now, mode):
    """Run one hash test and account for it; True = possible error."""
    st.counters[C_COLLIDED] = 0
    if mode == AUTHORS:
        flagged, hashes, size = authors_test(st, i, m, now)
        st.counters[C_TESTS_AUTH] += 1
        st.counters[C_P_SIZE] += size
        st.hist_auth[min(hashes, len(st.hist_auth) - 1)] += 1
    else:
        flagged, hashes, reason = residual_test(st, i, m, arrival)
        st.counters[C_TESTS_RES] += 1
        st.hist_res[min(hashes, len(st.hist_res) - 1)] += 1
        if flagged:
            st.counters[C_FLAGS + reason] += 1
    return flagged


@njit
def _attempt(st, q, i, m, arrival, now, r):
    """m's clock condition holds at p_i: run the detector, then deliver or request.  ``r`` is
    m's record (-1 when it was never stored: a message deliverable on arrival)."""
    j = st.msg_src[m]
    flags = 0
    flagged = False
    if st.shadow:
        agrees = mostefaoui_agrees(st.V, i, st.msg_need, m, st.f_ent, j)
        flags = F_MW_LITERAL if agrees else F_MW_NORMATIVE
        if st.track_auth and _hash_flag(st, i, m, arrival, now, AUTHORS):
            flags |= F_HASH_AUTHORS
        if st.track_res and _hash_flag(st, i, m, arrival, now, RESIDUAL):
            flags |= F_HASH_RESIDUAL
    elif st.detector == MOSTEFAOUI:
        flagged = mostefaoui_agrees(st.V, i, st.msg_need, m, st.f_ent, j) == st.mw_literal
    elif st.detector == HASH:
        flagged = _hash_flag(st, i, m, arrival, now, st.hash_mode)
        if not flagged and st.counters[C_COLLIDED]:
            flags = F_COLLISION
    if not flagged:
        _deliver(st, i, m, now, arrival, flags)
        if r != -1:
            state.release(st.rec, st.tops, T_FREE, R_NEXT, r)
        return
    if r == -1:
        r = _new_record(st, m, i, arrival)
    if st.serial and st.in_rec[i]:
        _push(st.rec, st.park_head, st.park_tail, i, r)  # re-tested when the reply comes
        st.counters[C_PARKED] += 1
    else:
        _request(st, q, i, r, now)


@njit
def _request(st, q, i, r, now):
    """Send REQ for record r's message to its sender (Algorithm 2 line 11)."""
    st.reqs, k = state.append(st.reqs, st.tops, T_REQ)
    st.req_time = state.grown(st.req_time, k + 1)
    m = st.rec[r, R_MSG]
    st.reqs[k, Q_MSG], st.reqs[k, Q_NODE] = m, i
    st.reqs[k, Q_LOGPOS], st.reqs[k, Q_DELIVERED], st.reqs[k, Q_DEPS] = st.tops[T_LOG], -1, -1
    st.req_time[k] = now
    st.rec[r, R_REQ] = k
    st.counters[C_REQ] += 1
    if st.serial:
        st.in_rec[i] = True
        st.cur_rec[i] = r
    arrival = _depart(st, i, now) + network.propagation(st.ctrl, i, st.ctrl_sent[i])
    st.ctrl_sent[i] += 1
    events.schedule(q, arrival, EV_REQ, r, 0)


@njit
def _on_req(st, q, r, now):
    """At the sender p_j: answer with Dep_msg of the requested message (Algorithm 2 line 14):
    j's previous message and what j delivered between it and this one (walked in the log)."""
    m = st.rec[r, R_MSG]
    j = st.msg_src[m]
    start = st.tops[T_DEP]
    pos = st.chain[st.msg_logpos[m]]
    count = 0
    while pos != -1:
        st.dep_ids = state.grown(st.dep_ids, start + count + 1)
        st.dep_ids[start + count] = st.log[pos, state.LOG_MSG]
        count += 1
        if st.log[pos, state.LOG_KIND] == oracle.BROADCAST:
            break  # j's previous message closes its Dep_msg
        pos = st.chain[pos]
    st.tops[T_DEP] = start + count
    st.rec[r, R_DEP0], st.rec[r, R_DEP1], st.rec[r, R_CUR] = start, start + count, start
    st.counters[C_RSP] += 1
    st.counters[C_RSP_IDS] += count
    st.reqs[st.rec[r, R_REQ], Q_DEPS] = count
    arrival = _depart(st, j, now) + network.propagation(st.ctrl, j, st.ctrl_sent[j])
    st.ctrl_sent[j] += 1
    events.schedule(q, arrival, EV_RSP, r, 0)


@njit
def _on_rsp(st, q, r, now):
    """At the requester: m waits for its returned dependencies (Algorithm 2 line 15)."""
    i = st.rec[r, R_NODE]
    _push(st.rec, st.wait_head, st.wait_tail, i, r)
    if st.serial:
        st.in_rec[i] = False
        st.cur_rec[i] = -1
        while st.park_head[i] != -1:  # parked messages are re-queued and re-tested
            p = st.park_head[i]
            _unlink(st.rec, st.park_head, st.park_tail, i, p)
            _insert_by_arrival(st.rec, st.pend_head, st.pend_tail, i, p)
            st.counters[C_RETESTS] += 1
    _iterate(st, q, i, now)


@njit
def _deliver_waiting(st, i, now):
    """Deliver one recovering message of p_i whose returned dependencies are all delivered."""
    r = st.wait_head[i]
    while r != -1:
        cur, end = st.rec[r, R_CUR], st.rec[r, R_DEP1]
        while cur < end and st.deliv_pos[i, st.dep_ids[cur]] >= 0:
            cur += 1
        st.rec[r, R_CUR] = cur
        if cur == end:
            _unlink(st.rec, st.wait_head, st.wait_tail, i, r)
            pos = _deliver(st, i, st.rec[r, R_MSG], now, st.rec_time[r], F_RECOVERED)
            st.reqs[st.rec[r, R_REQ], Q_DELIVERED] = pos
            state.release(st.rec, st.tops, T_FREE, R_NEXT, r)
            return True
        r = st.rec[r, R_NEXT]
    return False


@njit
def _blocking_entry(V, i, need, m, msize, x):
    """An entry y (tried from x on) with V_i[y] < need_m[y], or -1: m meets the clock condition."""
    for t in range(msize):
        y = x + t if x + t < msize else x + t - msize
        if V[i, y] < need[m, y]:
            return y
    return -1


@njit
def _hold(st, i, r):
    """Pending record r joins p_i's pending list if its message meets the clock condition,
    else the wake list of an entry it waits for."""
    y = _blocking_entry(st.V, i, st.msg_need, st.rec[r, R_MSG], st.msize, 0)
    if y < 0:
        _insert_by_arrival(st.rec, st.pend_head, st.pend_tail, i, r)
    else:
        st.rec[r, R_NEXT] = st.wake_head[i, y]
        st.wake_head[i, y] = r
        st.blocked[i] += 1


@njit
def _wake(st, i, x):
    """V_i[x] has grown: the records waiting on entry x wait on another entry, or join the
    pending list (in arrival order) once their clock condition holds.

    This index replaces a scan of every pending record after every delivery: a process that
    falls behind under serial recovery holds tens of thousands of them, and the scans made long
    runs quadratic in their length.  Clocks only grow, so a record never leaves the pending list
    but by an attempt, and its first record is the first pending message in arrival order whose
    condition holds, as the scan found it."""
    rec, V, need, wake, msize = st.rec, st.V, st.msg_need, st.wake_head, st.msize  # (read once:
    r = wake[i, x]  # no reference counting per record)
    wake[i, x] = -1
    while r != -1:
        after = rec[r, R_NEXT]
        y = _blocking_entry(V, i, need, rec[r, R_MSG], msize, x)
        if y < 0:
            st.blocked[i] -= 1
            _insert_by_arrival(rec, st.pend_head, st.pend_tail, i, r)
        else:
            rec[r, R_NEXT] = wake[i, y]
            wake[i, y] = r
        r = after


@njit
def _idle(st, i):
    """Nothing received waits at p_i (pending, blocked or recovering)."""
    return st.pend_head[i] == -1 and st.blocked[i] == 0 and st.wait_head[i] == -1


@njit
def _iterate(st, q, i, now):
    """Iterative delivery at p_i: recovered messages first (the authors' order), then the first
    pending message whose clock condition holds; repeat until nothing moves.  The pending list
    holds only messages whose condition holds (``_wake``).  Only a delivery changes V_i, so
    after an attempt that requested or parked its message the next pending one is attempted
    without looking at the recovered ones again: they still wait."""
    while True:
        if st.wait_head[i] != -1 and _deliver_waiting(st, i, now):
            continue
        r = st.pend_head[i]
        moved = False
        while r != -1:
            after = st.rec[r, R_NEXT]
            _unlink(st.rec, st.pend_head, st.pend_tail, i, r)
            before = st.vsum[i]
            _attempt(st, q, i, st.rec[r, R_MSG], st.rec_time[r], now, r)
            if st.vsum[i] != before:
                moved = True
                break
            r = after
        if not moved:
            return


@njit
def _on_app(st, q, m, i, now):
    if _idle(st, i) and _clock_ok(st.V, i, st.msg_need, m, st.msize):
        _attempt(st, q, i, m, now, now, -1)  # the common case: nothing waits, m deliverable
        if _idle(st, i):
            return
    else:
        _hold(st, i, _new_record(st, m, i, now))
    _iterate(st, q, i, now)


@njit
def _run(st, times, sources, slots):
    q = events.new_queue()
    if len(times):
        events.schedule(q, times[0], EV_BROADCAST, 0, 0)
    counters = st.counters
    while not events.empty(q):
        now, kind, a, b = events.pop(q)
        if now > st.t_stop:
            counters[C_STOPPED] = 1
            break
        counters[C_EVENTS] += 1
        if kind == EV_APP:
            _on_copy(st, q, a, b, now)
        elif kind == EV_BROADCAST:
            _broadcast(st, q, a, sources[a], slots[a], now)
            if a + 1 < len(times):
                events.schedule(q, times[a + 1], EV_BROADCAST, a + 1, 0)
        elif kind == EV_REQ:
            _on_req(st, q, a, now)
        else:
            _on_rsp(st, q, a, now)


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Run(BaseRun):
    """One run: the event log (with each delivery's detector verdicts in ``flags``), the
    messages, the dependency requests and the detectors' counters.

    Ground truth comes from the oracle (``Run.oracle_report``; ``ground_truth`` for the
    detectors' true and false alarms and the REQ classification)."""

    schedule: Schedule
    options: dict
    flags: np.ndarray  # int8 per log entry: F_* verdict bits of that delivery
    msg_src: np.ndarray  # int64 per message id (broadcast rank)
    msg_seq: np.ndarray
    msg_time: np.ndarray  # broadcast instant
    msg_V: np.ndarray  # int32 [message, M]: the clock each message carried
    clocks: np.ndarray  # int32 [process, M]: the clocks at the end of the run
    req_msg: np.ndarray  # per REQ: the message, the requester, the log length when it was sent
    req_node: np.ndarray
    req_logpos: np.ndarray
    req_delivered: np.ndarray  # log index of the message's delivery at the requester (-1: never)
    req_deps: np.ndarray  # ids the reply carried (|Dep_msg|; -1: no reply)
    req_time: np.ndarray
    counters: dict
    hist_auth: np.ndarray  # hashes computed per test, authors' mode (last bin: more)
    hist_res: np.ndarray  # the same, residual mode
    stopped: bool  # events remained after the time limit: the run did not terminate
    lat_sum: np.ndarray  # float [L_RECEPTION, L_DELIVERY]: sums of latencies (s), see mean_*
    lat_count: np.ndarray  # int64 [L_RECEPTION, L_DELIVERY]: how many latencies each sum holds

    def violations(self, report) -> int:
        """Duplicate deliveries only.  A delivery out of causal order is not a fault of this code
        but the probabilistic protocol's measured error rate (seed 004 counts it; the notebooks
        report it as the paper does), so it is returned by ``known_flaws`` instead."""
        return report.duplicates

    def invariants(self, report) -> list[str]:
        """The oracle (duplicates, messages not delivered everywhere) and termination: every
        run, with or without recovery, must end with everything delivered before the limit."""
        problems = super().invariants(report)
        if self.stopped:
            problems.append("did not terminate: events left after the drain limit")
        c = self.counters
        if c["rsp"] != c["req"] or (self.req_delivered < 0).any():
            problems.append(f"{c['req']} REQ, {c['rsp']} RSP, "
                            f"{int((self.req_delivered < 0).sum())} requested messages never delivered")
        return problems

    def known_flaws(self, report) -> dict[str, int]:
        return {"delivered out of causal order (probabilistic clocks)": report.errors} if report.errors else {}

    @property
    def messages(self) -> int:
        return len(self.msg_src)

    def mean_reception_latency(self) -> float:
        """Mean over (message, receiving process other than its sender) of the arrival of the
        message's copy minus its broadcast, in seconds (NaN: no reception).  REQ / RSP transit is
        not a reception: a reply carries ids only, so the copy is always a message's first arrival."""
        return self._mean_latency(L_RECEPTION)

    def mean_delivery_latency(self) -> float:
        """Mean over the deliveries at processes other than the sender of the delivery instant
        minus the broadcast, in seconds (NaN: no delivery): the wait in the pending list and, for
        a flagged message, for its request, reply and returned dependencies, included."""
        return self._mean_latency(L_DELIVERY)

    def _mean_latency(self, which: int) -> float:
        """NaN when nothing was counted, as the cross-family table marks an unmeasured latency."""
        count = self.lat_count[which]
        return float(self.lat_sum[which] / count) if count else math.nan


def pool_capacity(load: float, tau: float = TAU) -> int:
    """Ring size per process: room for four times the deliveries of a pool horizon (power of 2)."""
    need = max(64, int(4 * load * tau) + 64)
    return 1 << (need - 1).bit_length()


def diff_bound(load: float, k: int) -> int:
    """The authors' clock-difference bound k(0.15 λ + 10) (spec amendment 1)."""
    return int(k * (0.15 * load + 10))


def simulate(
    schedule: Schedule,
    *,
    net: network.Network | None = None,
    seed: np.random.SeedSequence | None = None,
    clock_size: int = 50,
    k: int = 2,
    detector: str = "none",
    shadow: bool = False,
    hash_mode: str = "authors",
    mw_polarity: str = "normative",
    recovery: str = "serial",
    hash_bits: int = 64,
    l_authors: int = L_AUTHORS,
    l_residual: int = L_RESIDUAL,
    tau: float = TAU,
    f: list[tuple[int, ...]] | None = None,
    delays: np.ndarray | None = None,
) -> Run:
    """Run ``schedule`` (kernel contract of ``causal_lab.engine.run``).

    ``detector``: none, mostefaoui or hash, acting through REQ/RSP with ``recovery`` serial (the
    authors' code) or parallel (spec §3.2); ``shadow``: no detector acts, every one is evaluated
    at every delivery.  ``f`` overrides the entry map (default ``entry_map(N, M, k, 0)``) and
    ``delays[slot, receiver]`` scripts APP delays (NaN: the delay model), for scenario tests."""
    n = schedule.n_nodes
    if not 1 <= k <= clock_size:
        raise ValueError(f"need 1 <= k <= clock_size, got k={k}, clock_size={clock_size}")
    if detector not in DETECTORS or hash_mode not in HASH_MODES or recovery not in RECOVERY \
            or mw_polarity not in MW_POLARITIES:
        raise ValueError(f"bad variant {detector!r}, {hash_mode!r}, {recovery!r}, {mw_polarity!r}")
    if not 1 <= hash_bits <= MAX_HASH_BITS or l_authors < 1 or l_residual < 1 or not tau > 0:
        raise ValueError(f"need 1 <= hash_bits <= 64, l >= 1, tau > 0; got {hash_bits}, "
                         f"{l_authors}, {l_residual}, {tau}")
    net = net or network.Network(t_pc=0.0, t_t=0.0, tpp_mean=clocks.DELAY_MEAN,
                                 tpp_sigma=clocks.DELAY_SD, tpp_negative="clip")
    seed = seed if seed is not None else np.random.SeedSequence(0)
    f = f if f is not None else clocks.entry_map(n, clock_size, k, 0)
    f_ent = np.array(f, np.int64).reshape(n, k)
    b = len(schedule.times)
    track_auth = shadow or (detector == "hash" and hash_mode == "authors")
    track_res = shadow or (detector == "hash" and hash_mode == "residual")
    tracked = shadow or detector != "none"  # Deliv_i and the pool are detector bookkeeping
    cap = pool_capacity(schedule.load, tau)
    slots_per_node = int(np.bincount(schedule.sources, minlength=n).max()) if b else 0
    params = net.params(seed)
    ctrl = params._replace(key=rng.stream_key(seed, "ctrl_delay"))
    scripted = delays is not None
    u64, i64, i32 = np.uint64, np.int64, np.int32

    def cache():
        return np.zeros((b, WORDS) if b else (1, WORDS), u64)

    st = State.create(
        n=n, msize=clock_size, k=k, detector=DETECTORS[detector], shadow=bool(shadow),
        hash_mode=HASH_MODES[hash_mode], mw_literal=mw_polarity == "literal",
        serial=recovery == "serial", track_auth=track_auth, track_res=track_res, tracked=tracked,
        mask=u64((1 << hash_bits) - 1), l_auth=l_authors, l_res=l_residual, dfs_budget=DFS_BUDGET,
        tau=float(tau), diff_bound=diff_bound(schedule.load, k),
        t_stop=schedule.end + DRAIN_LIMIT + DRAIN_PER_MESSAGE * b, net=params, ctrl=ctrl,
        server_free=np.zeros(n), ctrl_sent=np.zeros(n, i64), f_ent=f_ent,
        delays=np.asarray(delays, np.float64) if scripted else np.zeros((1, 1)), scripted=scripted,
        fl_time=np.zeros((64, max(n - 1, 1))), fl_recv=np.zeros((64, max(n - 1, 1)), i32),
        fl_msg=np.zeros(64, i64), fl_free=np.arange(64, dtype=i64), fl_buf=np.zeros(max(n - 1, 1)),
        fl_rbuf=np.zeros(max(n - 1, 1), i32),
        V=np.zeros((n, clock_size), i32), vsum=np.zeros(n, i64), seq=np.zeros(n, i64),
        cnt=np.zeros((n, n) if track_res else (1, 1), i32), hself=np.zeros(n, u64),
        in_rec=np.zeros(n, np.bool_), cur_rec=np.full(n, -1, i64),
        pool=np.zeros((n, cap, 4) if tracked else (1, 1, 4), i64), last_bcast=np.full(n, -np.inf),
        pool_h=np.zeros((n, cap) if track_res else (1, 1), u64),
        pool_top=np.zeros(n, i64),
        pend_head=np.full(n, -1, i64), pend_tail=np.full(n, -1, i64),
        park_head=np.full(n, -1, i64), park_tail=np.full(n, -1, i64),
        wait_head=np.full(n, -1, i64), wait_tail=np.full(n, -1, i64), node_last=np.full(n, -1, i64),
        wake_head=np.full((n, clock_size), -1, i64), blocked=np.zeros(n, i64),
        msg_src=np.full(b, -1, i64), msg_seq=np.zeros(b, i64), msg_time=np.zeros(b),
        msg_logpos=np.zeros(b, i64),
        msg_V=np.zeros((b, clock_size), i32), msg_need=np.zeros((b, clock_size), i32),
        msg_sumV=np.zeros(b, i64), msg_G=np.zeros(b, u64), msg_hauth=np.zeros(b, u64),
        msg_hres=np.zeros(b, u64),
        seq_msg=np.full((n, slots_per_node + 2), -1, i64),
        deliv_pos=np.full((n, b) if tracked else (1, 1), -1, i32),
        cN_known=cache() if track_res else np.zeros((1, 1), u64),
        cN_val=cache() if track_res else np.zeros((1, 1), u64),
        cV_known=cache() if track_auth else np.zeros((1, 1), u64),
        cV_val=cache() if track_auth else np.zeros((1, 1), u64),
        cm_list=np.zeros((b if track_auth else 1, CM_MAX), i32),
        cm_len=np.full(b if track_auth else 1, CM_UNKNOWN, i64),
        cm_upto=np.zeros(b if track_auth else 1, i64), cm_hash=np.zeros(b if track_auth else 1, u64),
        rec=state.table(R_COLUMNS, 256), rec_time=np.zeros(256), dep_ids=np.zeros(1024, i64),
        reqs=state.table(5, 256), req_time=np.zeros(256),
        log=state.new_log(b * n + 16), chain=np.zeros(b * n + 16, i32),
        lflags=np.zeros(b * n + 16, np.int8), tops=np.array([0, 0, -1, 0, 0, 64], i64),
        counters=np.zeros(N_COUNTERS, i64), hist_auth=np.zeros(l_authors + 3, i64),
        hist_res=np.zeros(l_residual + 3, i64), lat_sum=np.zeros(2), lat_count=np.zeros(2, i64),
        delta=np.zeros(clock_size, i64), u_list=np.zeros(cap, i64), u_stamp=np.zeros(max(b, 1), i64),
        c_stamp=np.zeros(n, i64), c_val=np.zeros(n, i64), s_stamp=np.zeros(n, i64),
        s_best=np.zeros(n, i64), s_list=np.zeros(max(n, cap), i64), s_src=np.zeros(cap, i64),
        s_seq=np.zeros(cap, i64),
        p_sum=np.zeros(cap, i64), p_pos=np.zeros(cap, i64), p_src=np.zeros(cap, i64), p_seq=np.zeros(cap, i64),
        p_g=np.zeros(cap, u64), p_all=np.zeros(1, u64), d_next=np.zeros(cap + 2, i64),
        d_sender=np.zeros(cap + 2, i64),
    )
    _run(st, schedule.times, schedule.sources, schedule.slots)
    return _finish(st, schedule, {
        "clock_size": clock_size, "k": k, "detector": detector, "shadow": bool(shadow),
        "hash_mode": hash_mode, "mw_polarity": mw_polarity, "recovery": recovery,
        "hash_bits": hash_bits, "l_authors": l_authors, "l_residual": l_residual, "tau": tau,
        "diff_bound": diff_bound(schedule.load, k)})


@njit
def _outputs(st):
    """The filled parts of what a run returns (one compiled call instead of one per field)."""
    entries, nreq, nmsg = st.tops[T_LOG], st.tops[T_REQ], st.counters[C_MSGS]
    return (st.log, entries, st.lflags[:entries].copy(), st.msg_src[:nmsg].copy(),
            st.msg_seq[:nmsg].copy(), st.msg_time[:nmsg].copy(), st.msg_V[:nmsg].copy(),
            st.V.copy(), st.reqs[:nreq].copy(), st.req_time[:nreq].copy(), st.counters.copy(),
            st.hist_auth.copy(), st.hist_res.copy(), st.lat_sum.copy(), st.lat_count.copy())


COUNTER_NAMES = {
    "events": C_EVENTS, "messages": C_MSGS, "skipped_slots": C_SKIPPED, "req": C_REQ,
    "rsp": C_RSP, "rsp_ids": C_RSP_IDS, "tests_authors": C_TESTS_AUTH,
    "tests_residual": C_TESTS_RES, "dfs_nodes": C_DFS_NODES, "p_size_total": C_P_SIZE,
    "parked": C_PARKED, "retests": C_RETESTS, "fast_authors": C_FAST_AUTH,
    "fast_residual": C_FAST_RES,
    "flag_own_prev": C_FLAGS + FLAG_OWN_PREV, "flag_negative": C_FLAGS + FLAG_NEGATIVE,
    "flag_no_match": C_FLAGS + FLAG_NO_MATCH, "flag_budget": C_FLAGS + FLAG_BUDGET,
    "collisions": C_COLLISIONS,
}


def _finish(st, schedule: Schedule, options: dict) -> Run:
    (log, entries, flags, msg_src, msg_seq, msg_time, msg_V, clocks_now, reqs, req_time, counters,
     hist_auth, hist_res, lat_sum, lat_count) = _outputs(st)
    log_kind, log_node, log_msg = state.log_arrays(log, entries)
    return Run(
        n_nodes=schedule.n_nodes, log_kind=log_kind, log_node=log_node, log_msg=log_msg,
        events=int(counters[C_EVENTS]), schedule=schedule, options=options, flags=flags,
        msg_src=msg_src, msg_seq=msg_seq, msg_time=msg_time, msg_V=msg_V, clocks=clocks_now,
        req_msg=reqs[:, Q_MSG].copy(), req_node=reqs[:, Q_NODE].copy(),
        req_logpos=reqs[:, Q_LOGPOS].copy(), req_delivered=reqs[:, Q_DELIVERED].copy(),
        req_deps=reqs[:, Q_DEPS].copy(),
        req_time=req_time, counters={name: int(counters[c]) for name, c in COUNTER_NAMES.items()},
        hist_auth=hist_auth, hist_res=hist_res, stopped=bool(counters[C_STOPPED]),
        lat_sum=lat_sum, lat_count=lat_count,
    )
