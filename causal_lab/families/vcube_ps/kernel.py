"""VCube-PS topic-based publish/subscribe with causal order (thesis ch. 5, Algorithms 3 and 4),
and its single-root-per-topic baseline SRPT-S (vcube_ps spec §4.2), on one compiled event loop.

Follow one publication of VCube-PS from PUBLISH to delivery:

1. ``_op`` runs the workload: PUBLISH, SUBSCRIBE or UNSUBSCRIBE at its scheduled instant
   (Algorithm 3).  ``_co_broadcast`` appends the new message to the (node, topic) broadcast
   queue (A4:5-15); ``_advance`` starts the head once the previous message of that queue has
   all its ACKs back (A4:16-34: per-source FIFO, spec §2.6).  Starting a PUB delivers it to its
   source, freezes its causal barrier (A4:20-25) and sends one copy to the first member of each
   of the source's clusters, as the source's *own view* knows them (CHILDREN(i, t, d)).
2. ``_on_message`` at node i, from parent j.  Part 1, run by every node: forward to
   CHILDREN(i, t, CLUSTER(j, i) - 1), or acknowledge at once if that is empty (A4:43-59).
   Part 2, only at a subscriber: a PUB is recorded in first_rec and parked in not_delvs, then
   CHECKDELIVERY runs; a SUB/UNS updates the view (A4:68-80).
3. ``_on_ack``: ACKs climb the tree hop by hop; an inner node answers its parent after one ACK
   from each child, merging the membership tuples they carry (A4:60-67, A4:99-102).  When the
   last ACK reaches the source, its next message of the topic may start.
4. ``_scan`` / ``_deliver`` (CHECKDELIVERY / CHECKCB, A4:88-98): a PUB is delivered once every
   entry <s, c> of its causal barrier is delivered (last_delvs[s] >= c) or provably never coming
   (first_rec[s] > c: receptions from s are FIFO).

SRPT-S (``mode = SRPT``) shares everything but the routing: a publication (or SUB/UNS) first
goes from its creator to the topic's root r_t (a *delegation* copy), then r_t broadcasts it;
PUBs follow the pruned full VCube tree (a child k of cluster s is used iff some subscriber known
to the forwarding node lies in k's sub-cube), SUB/UNS reach every node.  Every node keeps the
subscriber knowledge; subscribers deliver on reception (the root serialises the topic and links
are FIFO); ACKs are aggregated the same way but the root never waits for them.  Under churn the
option ``srpt_membership = fast_subscription`` replaces the SUB/UNS broadcasts by the authors'
simulator's oracle subscriptions with FORWARD path marks (``SRPT_MEMBERSHIP`` below).

Besides the per-copy queue wait, every PUB copy carries its *path wait* (the authors'
cumulative WAIT_TIME): the sum, over the hops from the start of the propagation, of the time
from enqueue to departure (``_send_copies``); the child reads it from its parent's ACK slot.

Data layout (all integer arrays; a "row" is one (node, topic) pair, ``row = i * T + t``, and
per-row arrays of length N are flattened at ``row * N``):

* ``views``: signed code of the newest operation of node x known by the row: 0 unknown,
  +(rc + 1) SUB, -(rc + 1) UNS (spec §7 memory note).  ``cnt`` holds, per row, the view's SUB
  codes as one bit per node (64-node words), then for every level l = 7..d and aligned block
  of 2^l nodes how many of its words are non-zero, so that the first member of a cluster
  (VCube-PS) or "does this sub-cube hold a subscriber" (SRPT) is an O(d) descent instead of a
  scan of the view (``geo`` says where each level's counts start, see ``_geometry``).
* what a row (i, t) knows of each source s is one record of ``N_RS`` int32 columns (``RS_*``),
  so that a reception touches one cache line per source it looks at instead of one per table:
  ``rs[s * stride + col[row]]``, in one of two orders (``layout``; ``col`` is a table because
  computing t * N + i from the row took two integer divisions, 10 % of Figure 5.10's runs).  At N = 4096
  there are 16.8 M records, far beyond the caches, and ``_prefetch`` starts loading the next
  event's records while the current one runs.  ``rows`` (``rs[row * N + s]``) keeps a row's
  records together: a delivery whose barrier names many sources reads them side by side (every
  node publishing, Figures 5.8-5.10).  ``sources`` (``rs[(s * T + t) * N + i]``) keeps a
  source's together: the receptions of one wave, and the checks against the few sources active
  at a time, read neighbouring records (one publication every 500 ms under churn, Figure 5.11:
  6-minute runs at N = 4096 took 13-28 % less CPU time than with ``rows``, a 20-minute run at
  N_s = 4000, t_med = 1 min as much; ``sources`` made notebooks 33 and 36 together 16 % dearer
  at the paper scale).
  ``first_rec``, ``last_delvs``, ``last_recv``: a counter value or 0 (none yet: message
  counters start at 1); ``heard``: the A4:100 flag, the low bit of ``stamp``, whose other bits
  date the record's fields of the current subscription (``_renew``).  The records start at 0
  (``new_state``), so that they cost nothing until touched: filling them took most of a run
  with one publication.
* the causal barrier of a row: one entry per source at most (the entry of s is replaced when a
  newer message of s is delivered, since that message's barrier names its predecessor), kept as
  ``cbv`` / ``cb_msg`` (counter and message per source, 0 / unused when absent) and ``cb_idx``
  (its place in ``cb_members``, the row's compact member list, for copying).
* pending PUBs are pool entries parked on the waiting list of the (row, source) whose barrier
  entry they wait for, with a scan position: each barrier entry is checked O(1) times;
  ``w_head`` holds the list's first entry + 1 (0: empty).  Each row also lists all its
  pending PUBs, so that forgetting the topic frees them without reading N records.
* ACK bookkeeping (``acks``) lives in slots; a copy carries its parent's slot id, so an ACK
  finds its tuple without a lookup.  Membership tuples carried by ACKs form linked lists in an
  arena, so merging two ACKs' data (A4:63) is O(1).

The run logs every self-delivery (as the oracle's BROADCAST) and every delivery; the
independent ``causal_lab.oracle`` checks per-topic causal order on that log.

Deviations from the pseudo-code, all under churn with re-subscription, where the pseudo-code as
written breaks causal order (found by tests/test_vcube_ps.py):

* A4:79-80 erases first_rec[s] when s unsubscribes, so that i sends s its own SUB tuple again
  (A4:100).  But CHECKCB also reads first_rec, and after s re-joins, s's next PUB would make an
  older, still pending PUB of s look "never coming".  Receptions from s stay FIFO whatever s's
  membership, so CHECKCB keeps first_rec and only the A4:100 flag (``heard``) is reset.
* A4:35-37 wipe the topic state when i's UNS wave ends, even if i subscribed again meanwhile,
  losing deliveries of the new membership.  We wipe when i subscribes (it starts afresh, A3:6
  also resets its view) and at the end of the UNS wave only if no SUB followed.
* CHECKCB re-reads the whole barrier at every check in the pseudo-code; we resume at the first
  unsatisfied entry, which gives the same decisions because satisfied entries stay satisfied.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle
from causal_lab.engine import events, memory, network, rng, state
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.topology import vcube as topology

VCUBE_PS = 0
SRPT = 1
MODES = {"vcube_ps": VCUBE_PS, "srpt": SRPT}
# CHECKCB (A4:95-98, spec A8): an entry <s, c> of a barrier is satisfied once delivered, or
# STRICT (the pseudo-code): once a later PUB of s was the first received from s (first_rec > c:
# FIFO, so <s, c> never comes); LENIENT (the prose): also when nothing was received from s;
# SAFE (ours): only once delivered.  Under churn the first_rec shortcut skips <s, c> but not its
# own causal past, which can then be delivered after m: a causal-order violation that SAFE
# avoids at the cost of more messages blocked at joiners.
STRICT, LENIENT, SAFE = 0, 1, 2
CHECKCB_RULES = {"strict": STRICT, "lenient": LENIENT, "safe": SAFE}
# the order of the per (row, source) records in memory (see the data layout above): the same runs
# bit for bit, but not the same cost
LAYOUTS = ("rows", "sources")

SUB, UNS, PUB = 0, 1, 2  # message types (spec §2.1); ACKs are their own event kind
OP_PUBLISH, OP_SUBSCRIBE, OP_UNSUBSCRIBE = 0, 1, 2  # workload operations (Algorithm 3)
EV_OP, EV_MSG, EV_ACK, EV_REACT = 0, 1, 2, 3
NODE_BITS = 13  # event payloads pack (slot, sender, receiver): N <= 8192
MAX_NODES = 1 << NODE_BITS
_MASK = (1 << NODE_BITS) - 1

# counters[...]
C_EVENTS, C_PUB_COPIES, C_DELEGATIONS, C_SUB_COPIES, C_UNS_COPIES, C_ACK_COPIES = range(6)
C_SUB_RECEPTIONS, C_FALSE_POSITIVES, C_DUPLICATES, C_DELIVERIES = range(6, 10)
C_DELAY_ZERO, C_DELAY_LT10, C_DELAY_GT50, C_CB_REPLACED, C_REJECTED = range(10, 15)
C_SLOTS_LIVE, C_PENDING_LIVE, C_COPIES, C_FIFO_VIOLATIONS = range(15, 19)
N_COUNTERS = 19
# tops[...]: fill levels and free-list heads of the growable tables (see causal_lab.engine.state)
T_SLOTS, T_SLOT_FREE, T_ENTRIES, T_ENTRY_FREE, T_TUPLES, T_TUPLE_FREE, T_CB, T_LOG, T_READY = range(9)
# columns of the tables: ACK slots, membership tuples, pending PUBs (not_delvs)
SL_PARENT, SL_PSLOT, SL_NB, SL_MSG, SL_HEAD, SL_TAIL, SL_SEEN = range(7)
TU_NODE, TU_CODE, TU_NEXT = range(3)
PE_MSG, PE_ROW, PE_POS, PE_NEXT, PE_ROW_PREV, PE_ROW_NEXT = range(6)
# columns of the per (row, source) records ``rs`` (see the data layout above)
RS_FIRST_REC, RS_LAST_DELVS, RS_LAST_RECV, RS_STAMP, RS_CBV, RS_CB_MSG, RS_CB_IDX, RS_W_HEAD = range(8)
N_RS = 8
# fcounters[...]
F_LATENCY_SUM, F_DELAY_SUM, F_DELAY_MAX, F_WAIT_SUM, F_LATENCY_MAX, F_FROM_START_SUM = range(6)
F_PATH_WAIT_SUM, F_PATH_COPY_SUM, F_DELIVERY_LATENCY_SUM = range(6, 9)
N_FCOUNTERS = 9
G_D, G_STRIDE, G_TOP = 0, 1, 2  # geo[...]: d, words per row of ``cnt``, start of the level counts
# SRPT-S membership under churn (spec §4.2): DELEGATE_BROADCAST, the spec's default (SUB and UNS
# go to the root, which broadcasts them to every node; every node keeps its own knowledge), or
# FAST_SUBSCRIPTION, the authors' simulator's oracle mode (``TopicPublishSubscribe.subscribe`` with
# ``isFastSubscription``): a SUBSCRIBE is known everywhere at once, no SUB message, and marks every
# non-member on the full-tree path from the root to the subscriber FORWARD, marks that the
# subscriber's later UNSUBSCRIBE does not clear; an UNSUBSCRIBE goes to the root, which sends the
# UNS down the topic's tree, and only clears the leaver's own FORWARD mark (its newer counter wins
# ``VCube.update``).  The topic's tree is the first member-or-FORWARD node of each cluster
# (``VCube.neighborhood``), so a FORWARD non-member is a relay.
# FAST_STICKY is the same without that last clearing (the reading "FORWARD marks are never
# cleared"), to show what it changes.
DELEGATE_BROADCAST, FAST_SUBSCRIPTION, FAST_STICKY = 0, 1, 2
SRPT_MEMBERSHIP = {"delegate_broadcast": DELEGATE_BROADCAST, "fast_subscription": FAST_SUBSCRIPTION,
                   "fast_sticky": FAST_STICKY}

FIELDS = (
    # configuration
    "d", "n", "n_topics", "mode", "checkcb", "prune", "ack_queued", "react_p", "react_key", "fast",
    "stride",
    "net", "net_state", "roots", "geo",
    # per node and per row
    "counter", "subscribed", "joins", "busy", "bq_head", "bq_tail", "last_op", "sub_done", "deliv_since",
    "deliv_count", "published",
    "views", "cnt", "rs", "cb_members", "cb_count",
    # messages
    "n_msgs", "m_type", "m_src", "m_topic", "m_c", "m_created", "m_started", "m_finished",
    "m_next", "cb_ptr", "cb_len", "cb_data", "recv",
    # path wait (spec §5.8 amendment, the authors' cumulative WAIT_TIME): a PUB copy sent by the
    # owner of ACK slot e to its child of cluster s + 1 arrives with the path wait
    # sl_acc[e * d + s]; an SRPT delegation copy with m_acc0[m]; "forward" marks (FAST_SUBSCRIPTION)
    "sl_acc", "m_acc0", "fwd",
    # pending PUBs (not_delvs), table PE_*: message, row, scan position, next in its list
    # (waiting list or free list), neighbours in the row's list of all its pending PUBs (whose
    # head is row_pending[row]); and their reception times.  epoch[row]: how many times the
    # row forgot its delivery state (``_forget_topic``)
    "pending", "pe_recv", "row_pending", "epoch", "col",
    # ACK slots, table SL_*: parent node (-1 = source/root), parent's slot (free-list link
    # when free), ACKs still expected, message, membership data (a linked list of the
    # tuples table TU_*), and whether the owner's view already holds that data (``_on_ack``)
    "slots", "tuples", "tops",
    # observables
    "counters", "fcounters", "q_sum", "q_cnt", "q_max", "log",
    # work lists
    "chd", "ready",
)
POOL = 1024  # initial size of the growable pools
StateType, State = state.define("State", FIELDS, __name__)

def new_state(d, n_topics, mode, capacity, net: network.Network, seed, roots, *, checkcb=STRICT,
              prune=True, ack_queued=False, react_p=0, fast=DELEGATE_BROADCAST, layout="rows"):
    """The kernel state, its records in the given ``layout``.  The per (row, source) tables are
    zero until touched, in 2 MiB pages when VCube-PS runs at least as many messages as nodes:
    subscribers then touch most of their records, and with 4 KiB pages the TLB misses made a 6-minute churn run at N = 4096, N_s = 4000
    take 16.2 s instead of 11.4 s.  SRPT-S reads only one column of its records: 4 KiB pages
    (``engine.memory.zeros``) are faster there (6.8 s against 7.8 s)."""
    n = 1 << d
    dense = mode == VCUBE_PS and capacity >= n
    rows = n * n_topics
    tops = np.zeros(9, np.int64)
    tops[[T_SLOT_FREE, T_ENTRY_FREE, T_TUPLE_FREE]] = -1
    geo = _geometry(d)
    i64, i32 = np.int64, np.int32
    per_row_node = rows * n
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if layout == "rows":
        stride, col = 1, np.arange(rows) * n
    else:
        stride, col = n_topics * n, (np.arange(rows) % n_topics) * n + np.arange(rows) // n_topics
    return State.create(
        d=d, n=n, n_topics=n_topics, mode=mode, checkcb=checkcb, prune=prune,
        ack_queued=ack_queued, react_p=react_p, react_key=rng.stream_key(seed, "t_wait"), fast=fast,
        net=net.params(seed), net_state=network.new_state(n), roots=np.asarray(roots, i64),
        geo=geo,
        counter=np.zeros(n, i64), subscribed=np.zeros(rows, np.bool_), joins=np.zeros(rows, i64), busy=np.full(rows, -1, i64),
        bq_head=np.full(rows, -1, i64), bq_tail=np.full(rows, -1, i64),
        last_op=np.full(rows, -1, i64), sub_done=np.full(rows, np.inf),
        deliv_since=np.zeros(rows, i64), deliv_count=np.zeros(n, i64),
        published=np.zeros(n, np.bool_),
        views=np.zeros(per_row_node, i32), cnt=np.zeros(rows * geo[G_STRIDE], i64),  # filled at t = 0
        rs=memory.zeros((per_row_node, N_RS), i32, dense), cb_members=memory.zeros(per_row_node, i32, dense),
        cb_count=np.zeros(rows, i64),
        n_msgs=np.zeros(1, i64), m_type=np.zeros(capacity, np.int8),
        m_src=np.zeros(capacity, i64), m_topic=np.zeros(capacity, i64),
        m_c=np.zeros(capacity, i64), m_created=np.full(capacity, np.nan),
        m_started=np.full(capacity, np.nan), m_finished=np.full(capacity, np.nan),
        m_next=np.full(capacity, -1, i64), cb_ptr=np.zeros(capacity, i64),
        cb_len=np.zeros(capacity, i64), cb_data=np.empty(POOL, i64),
        recv=np.zeros(capacity * n, np.bool_),
        sl_acc=np.zeros(POOL * d), m_acc0=np.zeros(capacity), fwd=np.zeros(rows, np.bool_),
        pending=state.table(6, POOL, i32), pe_recv=np.empty(POOL), row_pending=np.full(rows, -1, i64),
        epoch=np.zeros(rows, np.int32), col=col, stride=stride,
        slots=state.table(7, POOL, i32), tuples=state.table(3, POOL, i32), tops=tops,
        counters=np.zeros(N_COUNTERS, i64), fcounters=np.zeros(N_FCOUNTERS, np.float64),
        q_sum=np.zeros(n, np.float64), q_cnt=np.zeros(n, i64), q_max=np.zeros(n, i64),
        log=state.new_log(POOL), chd=np.empty(d + 1, i64), ready=np.empty(POOL, i64),
    )


# ------------------------------------------------------------------------------------------
# Views and the topic-aware CHILDREN (spec §1.4, §4.2)
# ------------------------------------------------------------------------------------------


def _geometry(d: int) -> np.ndarray:
    """Where a row's parts of ``cnt`` lie (``G_*``): max(1, N / 64) words of membership bits, then
    per level l = 7..d the counts of its 2^(d - l) blocks, from ``G_TOP + l - 7``; a row is
    ``G_STRIDE`` words long.

    Why bits: SRPT-S applies every SUB and UNS at every node, and a count per level and block
    made each of those flips touch about ten cache lines of the row (one per level, the
    levels of one node lying far apart); a bit and, only when a word empties or fills, the
    counts of levels 7..d touch two."""
    n = 1 << d
    words = max(1, n >> 6)
    geo = np.zeros(G_TOP + max(0, d - 6), np.int64)
    top = words
    for level in range(7, d + 1):
        geo[G_TOP + level - 7] = top
        top += n >> level
    geo[G_D], geo[G_STRIDE] = d, top
    return geo


@njit
def _set_code(views, cnt, geo, base, x, code):
    """Store the newest known operation of x in the view at ``base``; keep its bit and counts.

    The view helpers take the arrays rather than the state: reading a struct field costs a
    reference-count update, and these run for every copy and every membership tuple."""
    old = views[base + x]
    views[base + x] = code
    if (old > 0) != (code > 0):
        d = geo[G_D]
        row = (base >> d) * geo[G_STRIDE]
        was = cnt[row + (x >> 6)]
        bit = np.int64(1) << (x & 63)
        word = was | bit if code > 0 else was & ~bit
        cnt[row + (x >> 6)] = word
        if (was == 0) != (word == 0):
            delta = 1 if word != 0 else -1
            for level in range(7, d + 1):
                cnt[row + geo[G_TOP + level - 7] + (x >> level)] += delta


@njit
def _newer(code, known):
    """UPDATE's rule (A4:81-87): the operation with the larger counter wins."""
    return abs(code) > abs(known)


@njit
def _update(views, cnt, geo, base, x, code):
    """UPDATE (A4:81-87) with one tuple."""
    if _newer(code, views[base + x]):
        _set_code(views, cnt, geo, base, x, code)


@njit
def _clear_view(st, base):
    st.views[base:base + st.n] = 0
    row = (base >> st.geo[G_D]) * st.geo[G_STRIDE]
    st.cnt[row:row + st.geo[G_STRIDE]] = 0


@njit
def _has(views, cnt, geo, base, level, block):
    """Whether the aligned block ``block`` of 2^level nodes holds a SUB code of the view."""
    if level == 0:
        return views[base + block] > 0
    row = (base >> geo[G_D]) * geo[G_STRIDE]
    if level > 6:
        return cnt[row + geo[G_TOP + level - 7] + block] > 0
    first = block << level
    word = cnt[row + (first >> 6)]
    if level == 6:
        return word != 0
    return ((word >> (first & 63)) & ((np.int64(1) << (1 << level)) - 1)) != 0


@njit
def _first_member(views, cnt, geo, base, i, s):
    """First member of c(i, s) in cluster order (i XOR 2^(s-1), ...), or -1 (spec §1.4).

    c(i, s) is the aligned block of 2^(s-1) nodes holding i ^ 2^(s-1), listed by increasing
    distance y = x ^ i; descending the block tree, the half whose next bit equals i's comes first.
    """
    level = s - 1
    block = (i ^ (1 << level)) >> level
    if not _has(views, cnt, geo, base, level, block):
        return -1
    while level > 0:
        level -= 1
        preferred = (block << 1) | ((i >> level) & 1)
        block = preferred if _has(views, cnt, geo, base, level, preferred) else preferred ^ 1
    return block


@njit
def _children(st, i, t, h, everyone):
    """CHILDREN(i, t, h) into ``st.chd[:count]``, in sending order (increasing cluster
    index); returns count."""
    chd = st.chd
    if everyone:
        for s in range(h):
            chd[s] = i ^ (1 << s)
        return h
    views, cnt, geo = st.views, st.cnt, st.geo
    base = (i * st.n_topics + t) * st.n
    vcube = st.mode == VCUBE_PS
    if st.fast:  # the authors' shared view: the root's row, members and FORWARD nodes
        base = (st.roots[t] * st.n_topics + t) * st.n
        vcube = True
    count = 0
    for s in range(1, h + 1):
        if vcube:
            k = _first_member(views, cnt, geo, base, i, s)
        else:  # SRPT: the first node of the cluster, if its sub-cube holds a known subscriber
            k = i ^ (1 << (s - 1))
            if not _has(views, cnt, geo, base, s - 1, k >> (s - 1)):
                k = -1
        if k >= 0:
            chd[count] = k
            count += 1
    return count


@njit
def _is_subscriber(st, i, t):
    """VCube-PS: <i, SUB, _> in i's own view (A4:68, N7); SRPT: the node's own state.  Both are
    ``subscribed``: only i writes its own view entry (Algorithm 3; UPDATE never meets a newer
    tuple of i than i's own), and this small array stays in cache where the view rows do not."""
    return st.subscribed[i * st.n_topics + t]


@njit
def _renew(rs, key, epoch):
    """Record ``key`` of a row whose delivery state was last forgotten ``epoch`` times: if the
    record is older, its first_rec, last_delvs, heard and waiting list are reset now, as
    ``_forget_topic`` would have done (``RS_STAMP`` = epoch * 2 + heard)."""
    if rs[key, RS_STAMP] >> 1 != epoch:
        rs[key, RS_FIRST_REC] = 0
        rs[key, RS_LAST_DELVS] = 0
        rs[key, RS_W_HEAD] = 0
        rs[key, RS_STAMP] = epoch << 1


# ------------------------------------------------------------------------------------------
# Sending: copies through the FIFO sending queue, ACKs free or queued (spec §3.2, A4)
# ------------------------------------------------------------------------------------------


@njit
def _send_copies(st, q, i, count, m, slot_code, now, acc):
    """One copy of message m from i to each of ``st.chd[:count]``, in order; ``slot_code`` =
    i's ACK slot + 1 (0 = an SRPT delegation copy, which expects no ACK).  ``acc``: m's path
    wait at i; a PUB copy adds its own time from enqueue to departure (queue wait + t_pc + t_t,
    the authors' WAIT_TIME counts the copy itself) and hands the sum to its receiver."""
    net, net_state, c = st.net, st.net_state, st.counters
    typ = st.m_type[m]
    tree_pub = typ == PUB and slot_code != 0
    service = net.t_pc + net.t_t
    d = st.d
    wait_sum = 0.0
    path_sum = 0.0
    q_sum, q_cnt, q_max = st.q_sum, st.q_cnt, st.q_max
    chd = st.chd
    for x in range(count):
        k = chd[x]
        arrival, wait = network.send(net, net_state, i, now)
        wait_sum += wait
        if tree_pub:  # sample the queue length, new copy included (spec §5.0, A19)
            length = int(round(wait / net.t_t)) + 1 if net.t_t > 0 else 1
            q_sum[i] += length
            q_cnt[i] += 1
            if length > q_max[i]:
                q_max[i] = length
        if typ == PUB:
            path = acc + wait + service
            path_sum += path
            if slot_code == 0:
                st.m_acc0[m] = path
            else:
                st.sl_acc[(slot_code - 1) * d + topology.children_after(k, i)] = path
        events.schedule(q, arrival, EV_MSG, m,
                        (slot_code << (2 * NODE_BITS)) | (i << NODE_BITS) | k)
    copies = count
    st.fcounters[F_WAIT_SUM] += wait_sum
    st.fcounters[F_PATH_COPY_SUM] += path_sum
    c[C_COPIES] += copies
    if typ == PUB:
        c[C_PUB_COPIES] += copies
        if slot_code == 0:
            c[C_DELEGATIONS] += copies
    elif typ == SUB:
        c[C_SUB_COPIES] += copies
    else:
        c[C_UNS_COPIES] += copies


@njit
def _send_ack(st, q, i, j, parent_slot, carrier, now):
    if st.ack_queued:
        arrival, wait = network.send(st.net, st.net_state, i, now)
        st.counters[C_COPIES] += 1
        st.fcounters[F_WAIT_SUM] += wait
    else:
        arrival = network.bypass(st.net, st.net_state, i, now)
    st.counters[C_ACK_COPIES] += 1
    events.schedule(q, arrival, EV_ACK, carrier,
                    (np.int64(parent_slot) << (2 * NODE_BITS)) | (i << NODE_BITS) | j)


@njit
def _new_slot(st, parent, parent_slot, nb, m):
    st.counters[C_SLOTS_LIVE] += 1
    st.slots, e = state.take(st.slots, st.tops, T_SLOTS, T_SLOT_FREE, SL_PSLOT)
    st.slots[e, SL_PARENT] = parent
    st.slots[e, SL_PSLOT] = parent_slot
    st.slots[e, SL_NB] = nb
    st.slots[e, SL_MSG] = m
    st.slots[e, SL_HEAD] = -1
    st.slots[e, SL_TAIL] = -1
    st.slots[e, SL_SEEN] = 0
    st.sl_acc = state.grown(st.sl_acc, (e + 1) * st.d)
    return e


@njit
def _free_slot(st, e):
    st.counters[C_SLOTS_LIVE] -= 1
    state.release(st.slots, st.tops, T_SLOT_FREE, SL_PSLOT, e)


@njit
def _append_tuple(st, e, node, code):
    """Add <node, op, rc> to the membership data of slot e (A4:101)."""
    st.tuples, f = state.take(st.tuples, st.tops, T_TUPLES, T_TUPLE_FREE, TU_NEXT)
    st.tuples[f, TU_NODE] = node
    st.tuples[f, TU_CODE] = code
    st.tuples[f, TU_NEXT] = -1
    if st.slots[e, SL_TAIL] == -1:
        st.slots[e, SL_HEAD] = f
    else:
        st.tuples[st.slots[e, SL_TAIL], TU_NEXT] = f
    st.slots[e, SL_TAIL] = f


@njit
def _free_tuples(st, e):
    if st.slots[e, SL_HEAD] != -1:
        st.tuples[st.slots[e, SL_TAIL], TU_NEXT] = st.tops[T_TUPLE_FREE]
        st.tops[T_TUPLE_FREE] = st.slots[e, SL_HEAD]


@njit
def _send_acks(st, q, i, j, parent_slot, carrier, now):
    """SENDACKS (A4:99-102): a subscriber that never received from the source adds its tuple."""
    m = st.slots[carrier, SL_MSG]
    t = st.m_topic[m]
    if st.mode == VCUBE_PS and _is_subscriber(st, i, t):
        row = i * st.n_topics + t
        heard = (st.epoch[row] << 1) | 1  # the stamp of a current record with heard set
        if st.rs[st.m_src[m] * st.stride + st.col[row], RS_STAMP] != heard:
            _append_tuple(st, carrier, i, st.views[row * st.n + i])
    _send_ack(st, q, i, j, parent_slot, carrier, now)


# ------------------------------------------------------------------------------------------
# Algorithm 3 and CO_BROADCAST / START_MSG_PROPAGATION
# ------------------------------------------------------------------------------------------


@njit
def _op(st, q, kind, i, t, now):
    row = i * st.n_topics + t
    base = row * st.n
    if kind == OP_PUBLISH:
        if not st.subscribed[row]:
            st.counters[C_REJECTED] += 1  # A3:17-20: only subscribers may publish (N12)
            return
        st.published[i] = True
        _co_broadcast(st, q, i, t, PUB, now)
    elif kind == OP_SUBSCRIBE:
        if st.subscribed[row]:
            st.counters[C_REJECTED] += 1
            return
        st.subscribed[row] = True
        if st.mode == VCUBE_PS:
            st.joins[row] += 1
            _clear_view(st, base)  # A3:6: the view is replaced, old membership forgotten
            _forget_topic(st, row)
            _set_code(st.views, st.cnt, st.geo, base, i, st.counter[i] + 1)
        elif st.fast:  # known everywhere at once, no SUB message
            _fast_subscribe(st, i, t)
            st.sub_done[row] = now
            st.deliv_since[row] = 0
            return
        _co_broadcast(st, q, i, t, SUB, now)
    else:
        if not st.subscribed[row]:
            st.counters[C_REJECTED] += 1
            return
        st.subscribed[row] = False
        if st.mode == VCUBE_PS:
            _set_code(st.views, st.cnt, st.geo, base, i, 0)  # A3:12: only i's own SUB tuple is removed
        elif st.fast:  # the shared view drops i's SUB, but a FORWARD mark of i stays
            if not st.fwd[row]:
                _set_code(st.views, st.cnt, st.geo, (st.roots[t] * st.n_topics + t) * st.n, i, 0)
        _co_broadcast(st, q, i, t, UNS, now)


@njit
def _fast_subscribe(st, x, t):
    """FAST_SUBSCRIPTION: x joins the topic's shared view, and every node on the full-tree path
    from the root to x that is neither a member nor FORWARD yet (the root included) is marked
    FORWARD for good (``TopicPublishSubscribe.subscribe``)."""
    r = st.roots[t]
    base = (r * st.n_topics + t) * st.n
    views, cnt, geo = st.views, st.cnt, st.geo
    v = r
    while v != x:
        if views[base + v] <= 0:
            st.fwd[v * st.n_topics + t] = True
            _set_code(views, cnt, geo, base, v, 1)
        v ^= 1 << (topology.children_after(v, x))
    if views[base + x] <= 0:
        _set_code(views, cnt, geo, base, x, 1)


@njit
def _co_broadcast(st, q, i, t, typ, now):
    m = st.n_msgs[0]
    if m >= len(st.m_type):
        raise RuntimeError("more messages than the capacity given to new_state")
    st.n_msgs[0] = m + 1
    st.m_type[m], st.m_src[m], st.m_topic[m], st.m_c[m] = typ, i, t, st.counter[i]
    st.counter[i] += 1
    st.m_created[m] = now
    row = i * st.n_topics + t
    if typ != PUB:
        st.last_op[row] = m
    if st.mode == SRPT:
        if typ == PUB:  # the publisher delivers its own message at once
            state.log(st, T_LOG, oracle.BROADCAST, i, m)
        root = st.roots[t]
        if i == root:
            st.recv[m * st.n + i] = True
            _root_start(st, q, m, now, 0.0)
        else:
            st.chd[0] = root
            _send_copies(st, q, i, 1, m, 0, now, 0.0)
        return
    if st.bq_tail[row] == -1:  # A4:15: every message joins the topic's broadcast queue
        st.bq_head[row] = m
    else:
        st.m_next[st.bq_tail[row]] = m
    st.bq_tail[row] = m
    if st.busy[row] == -1:
        _advance(st, q, i, t, now)


@njit
def _advance(st, q, i, t, now):
    """START_MSG_PROPAGATION (A4:16-34): start queued messages until one waits for ACKs."""
    row = i * st.n_topics + t
    base = row * st.n
    while st.bq_head[row] != -1:
        m = st.bq_head[row]
        st.bq_head[row] = st.m_next[m]
        if st.bq_head[row] == -1:
            st.bq_tail[row] = -1
        st.busy[row] = m
        st.m_started[m] = now
        st.recv[m * st.n + i] = True
        typ = st.m_type[m]
        if typ == PUB:
            c = st.m_c[m]
            key = i * st.stride + st.col[row]
            _renew(st.rs, key, st.epoch[row])
            own = st.rs[key]
            if own[RS_FIRST_REC] == 0:
                own[RS_FIRST_REC] = c  # A4:20-21
            own[RS_STAMP] |= 1
            state.log(st, T_LOG, oracle.BROADCAST, i, m)  # A4:22: self-delivery
            own[RS_LAST_DELVS] = c  # A4:23
            _freeze_barrier(st, row, m)  # A4:24-25
            _wake(st, row, i, now)
            _drain(st, q, now)
        count = _children(st, i, t, st.d, typ == SUB)
        if count > 0:
            e = _new_slot(st, -1, -1, count, m)
            _send_copies(st, q, i, count, m, e + 1, now, 0.0)
            return
        _wave_done(st, q, m, now)  # nobody to tell: the wait of A4:34 is already over
        st.busy[row] = -1
        if typ == UNS and st.last_op[row] == m:
            _forget_topic(st, row)


@njit
def _root_start(st, q, m, now, acc):
    """SRPT: the topic root broadcasts m (PUB on the pruned tree, SUB/UNS to every node; under
    FAST_SUBSCRIPTION an UNS on the topic's tree), ``acc`` = m's path wait at the root."""
    st.m_started[m] = now
    r = st.roots[st.m_topic[m]]
    typ = st.m_type[m]
    if typ == UNS and st.fast == FAST_SUBSCRIPTION:
        # the UNS's newer counter removes the leaver's own FORWARD item from the shared view
        # (``VCube.update`` at the first subscriber it reaches; here when the root sends it)
        x, t = st.m_src[m], st.m_topic[m]
        st.fwd[x * st.n_topics + t] = False
        if not st.subscribed[x * st.n_topics + t]:
            _set_code(st.views, st.cnt, st.geo, (r * st.n_topics + t) * st.n, x, 0)
    count = _children(st, r, st.m_topic[m], st.d, typ == SUB or (typ == UNS and not st.fast))
    if count == 0:
        _wave_done(st, q, m, now)
        return
    e = _new_slot(st, -1, -1, count, m)
    _send_copies(st, q, r, count, m, e + 1, now, acc)


@njit
def _wave_done(st, q, m, now):
    """Every ACK of m is back at its source (VCube-PS) or topic root (SRPT)."""
    st.m_finished[m] = now
    if st.m_type[m] == SUB:
        row = st.m_src[m] * st.n_topics + st.m_topic[m]
        if st.last_op[row] == m and st.subscribed[row]:
            st.sub_done[row] = now  # the subscriber is now known everywhere
            st.deliv_since[row] = 0


@njit
def _forget_topic(st, row):
    """A4:35-37: node i drops its delivery state of the topic (pending messages, first_rec,
    last_delvs) once its UNS propagated, unless it subscribed again meanwhile; and when it
    subscribes (see "Deviations" above).  Its pending PUBs are freed now and its epoch moves on;
    each of its records is reset when next read (``_renew``).  Resetting the row's N records
    here, N * T records apart in the source-major table, ate most of that layout's gain where
    10 % of 1000 subscribers are replaced per minute (N = 4096, 6-minute runs: 9 % less CPU
    time than the row-major table with the reset loop, 28 % without)."""
    e = st.row_pending[row]
    while e != -1:
        nxt = st.pending[e, PE_ROW_NEXT]
        _free_entry(st, e)
        e = nxt
    st.epoch[row] += 1


# ------------------------------------------------------------------------------------------
# Reception (HANDLE_RECEIVED_MSG, A4:40-80)
# ------------------------------------------------------------------------------------------


@njit
def _on_message(st, q, m, i, j, slot_code, now):
    n, c, fc = st.n, st.counters, st.fcounters
    recv = st.recv
    if recv[m * n + i]:
        c[C_DUPLICATES] += 1  # the invariants assert that this never happens
        return
    recv[m * n + i] = True
    typ, t, src, seq = st.m_type[m], st.m_topic[m], st.m_src[m], st.m_c[m]
    row = i * st.n_topics + t
    base = row * n
    key = src * st.stride + st.col[row]
    rec = st.rs[key]  # the row's record of the source
    if seq <= rec[RS_LAST_RECV]:
        c[C_FIFO_VIOLATIONS] += 1  # receptions per (source, topic) in creation order
    rec[RS_LAST_RECV] = seq
    sub = _is_subscriber(st, i, t)
    srpt = st.mode == SRPT
    if srpt and slot_code == 0:
        st.m_started[m] = now  # the delegated copy reached the root: the broadcast starts
    acc = 0.0
    if typ == PUB:
        acc = st.m_acc0[m] if slot_code == 0 else st.sl_acc[(slot_code - 1) * st.d + topology.children_after(i, j)]
        if not sub:
            c[C_FALSE_POSITIVES] += 1
        elif i != src:
            latency = now - st.m_created[m]
            c[C_SUB_RECEPTIONS] += 1
            fc[F_PATH_WAIT_SUM] += acc
            fc[F_LATENCY_SUM] += latency
            fc[F_FROM_START_SUM] += now - st.m_started[m]  # without the wait in bcast_queue
            if latency > fc[F_LATENCY_MAX]:
                fc[F_LATENCY_MAX] = latency
    if srpt:
        if typ != PUB and not st.fast:  # every node keeps the subscriber knowledge of the topic
            _update(st.views, st.cnt, st.geo, base, src, seq + 1 if typ == SUB else -seq - 1)
        if typ == PUB and sub and i != src:
            state.log(st, T_LOG, oracle.DELIVER, i, m)
            _count_delivery(st, row, i, m, 0.0, now)
        if slot_code == 0:  # the delegated copy reached the root
            _root_start(st, q, m, now, acc)
            return
    # part 1: route, or acknowledge at once at a leaf
    h = topology.children_after(i, j)
    count = _children(st, i, t, h, typ == SUB or (srpt and typ == UNS and not st.fast))
    parent_slot = slot_code - 1
    if count == 0:
        carrier = _new_slot(st, j, parent_slot, 0, m)
        _send_acks(st, q, i, j, parent_slot, carrier, now)
    else:
        e = _new_slot(st, j, parent_slot, count, m)
        _send_copies(st, q, i, count, m, e + 1, now, acc)
    # part 2: only a subscriber (VCube-PS)
    if srpt or not sub:
        return
    _renew(st.rs, key, st.epoch[row])
    if typ == PUB:
        rec[RS_STAMP] |= 1
        if rec[RS_FIRST_REC] == 0:
            rec[RS_FIRST_REC] = seq  # A4:70-71
            if rec[RS_W_HEAD] != 0:
                _wake(st, row, src, now)
        e = _new_entry(st, m, row, now)
        if _scan(st, e):
            _push_ready(st, e)
        _drain(st, q, now)
    else:
        _update(st.views, st.cnt, st.geo, base, src, seq + 1 if typ == SUB else -seq - 1)  # A4:77-78
        if typ == UNS:
            rec[RS_STAMP] &= ~1  # heard <- false, A4:79-80 (see "Deviations" above)


@njit
def _on_ack(st, q, carrier, i, j, e, now):
    """An ACK from child j reaches i, for the message of i's slot e (A4:60-67, then part 2)."""
    m = st.slots[e, SL_MSG]
    arrived, arrived_last = st.slots[carrier, SL_HEAD], st.slots[carrier, SL_TAIL]
    # A4:63: m.data <- m.data U mem (linked lists: O(1); the arrived tuples go first)
    if arrived != -1:
        if st.slots[e, SL_HEAD] != -1:
            st.tuples[arrived_last, TU_NEXT] = st.slots[e, SL_HEAD]
        st.slots[e, SL_HEAD] = arrived
        if st.slots[e, SL_TAIL] == -1:
            st.slots[e, SL_TAIL] = arrived_last
    _free_slot(st, carrier)
    st.slots[e, SL_NB] -= 1
    done = False
    if st.slots[e, SL_NB] == 0:
        if st.slots[e, SL_PARENT] != -1:
            _send_acks(st, q, i, st.slots[e, SL_PARENT], st.slots[e, SL_PSLOT], e, now)  # e now carries it up
        else:
            done = True
    t = st.m_topic[m]
    if st.mode == VCUBE_PS:
        _apply_data(st, e, i * st.n_topics + t, arrived, arrived_last)
    if done:
        _free_tuples(st, e)
        _free_slot(st, e)
        _wave_done(st, q, m, now)
        if st.mode == VCUBE_PS:
            src = st.m_src[m]
            row = src * st.n_topics + t
            st.busy[row] = -1
            if st.m_type[m] == UNS and st.last_op[row] == m:
                _forget_topic(st, row)
            _advance(st, q, src, t, now)


@njit
def _apply_data(st, e, row, arrived, arrived_last):
    """A4:75-76 at a subscriber: view <- UPDATE(view, m.data) with the membership data of slot e.

    UPDATE keeps the newest operation per node, so tuples the view took at an earlier ACK of the
    same slot change nothing, unless the view was replaced since (a new subscription, ``joins``)
    or did not take them (not a subscriber then): only then is the whole data walked, else only
    the tuples ``arrived`` .. ``arrived_last`` this ACK brought (the list's head).  Walking all of
    it at every ACK made an inner node's work twice its subtree's tuples (a fifth of a churn run
    at N = 4096, N_s = 4000, where a source's first publication gathers a tuple per subscriber)."""
    slots = st.slots
    if not st.subscribed[row]:
        slots[e, SL_SEEN] = 0
        return
    joined = st.joins[row] + 1
    full = slots[e, SL_SEEN] != joined
    slots[e, SL_SEEN] = joined
    f, last = (slots[e, SL_HEAD], -1) if full else (arrived, arrived_last)
    views, cnt, geo, tuples = st.views, st.cnt, st.geo, st.tuples
    base = row * st.n
    while f != -1:  # UPDATE; the call only for a newer tuple (rare): not inlined, it costs
        x, code = tuples[f, TU_NODE], tuples[f, TU_CODE]
        if _newer(code, views[base + x]):
            _set_code(views, cnt, geo, base, x, code)
        f = -1 if f == last else tuples[f, TU_NEXT]


# ------------------------------------------------------------------------------------------
# Causal barriers and delivery (A4:88-98)
# ------------------------------------------------------------------------------------------


@njit
def _freeze_barrier(st, row, m):
    """A4:24-25: m carries the row's barrier; the barrier becomes {m}."""
    base = row * st.n
    ptr = st.tops[T_CB]
    count = st.cb_count[row]
    st.cb_data = state.grown(st.cb_data, ptr + count)
    st.cb_ptr[m] = ptr
    st.tops[T_CB] = ptr + count
    rs = st.rs
    col, stride = st.col[row], st.stride
    for k in range(count):
        s = st.cb_members[base + k]
        st.cb_data[ptr + k] = rs[s * stride + col, RS_CB_MSG]
        rs[s * stride + col, RS_CBV] = 0
    st.cb_len[m] = count
    st.cb_count[row] = 0
    _barrier_add(st, base, row, st.m_src[m], m)


@njit
def _barrier_add(st, base, row, s, m):
    """Put message m (from s) in the row's barrier, replacing an older entry of s."""
    rec = st.rs[s * st.stride + st.col[row]]
    replaced = rec[RS_CBV] != 0
    rec[RS_CBV] = st.m_c[m]
    rec[RS_CB_MSG] = m
    if replaced:
        st.counters[C_CB_REPLACED] += 1
        return
    k = st.cb_count[row]
    st.cb_members[base + k] = s
    rec[RS_CB_IDX] = k
    st.cb_count[row] = k + 1


@njit
def _barrier_remove(rs, members, cb_count, base, row, col, stride, s, c):
    """Take <s, c> out of the row's barrier if it is there.  It takes the arrays, not the state:
    ``_deliver`` calls it once per entry of the delivered message's barrier, and the state's
    field reads in every call made that loop a third of the run of thesis Figure 5.8's
    every-node-publishes workload (N = 1024, barriers of 29 entries on average: 3,460 -> 1,920
    TSC cycles per delivery in the loop; the whole run, 6 alternating pairs: median 5.85 -> 5.42
    CPU-s, ranges overlapping)."""
    if rs[s * stride + col, RS_CBV] != c:
        return
    rs[s * stride + col, RS_CBV] = 0
    last = cb_count[row] - 1
    k = rs[s * stride + col, RS_CB_IDX]  # swap with the last member
    moved = members[base + last]
    members[base + k] = moved
    rs[moved * stride + col, RS_CB_IDX] = k
    cb_count[row] = last


@njit
def _new_entry(st, m, row, now):
    st.counters[C_PENDING_LIVE] += 1
    st.pending, e = state.take(st.pending, st.tops, T_ENTRIES, T_ENTRY_FREE, PE_NEXT)
    st.pe_recv = state.grown(st.pe_recv, e + 1)
    st.pending[e, PE_MSG] = m
    st.pending[e, PE_ROW] = row
    st.pending[e, PE_POS] = 0
    st.pe_recv[e] = now
    st.pending[e, PE_NEXT] = -1
    head = st.row_pending[row]
    st.pending[e, PE_ROW_PREV] = -1
    st.pending[e, PE_ROW_NEXT] = head
    if head != -1:
        st.pending[head, PE_ROW_PREV] = e
    st.row_pending[row] = e
    return e


@njit
def _free_entry(st, e):
    st.counters[C_PENDING_LIVE] -= 1
    pending = st.pending
    prev, nxt = pending[e, PE_ROW_PREV], pending[e, PE_ROW_NEXT]
    if prev == -1:
        st.row_pending[pending[e, PE_ROW]] = nxt
    else:
        pending[prev, PE_ROW_NEXT] = nxt
    if nxt != -1:
        pending[nxt, PE_ROW_PREV] = prev
    state.release(pending, st.tops, T_ENTRY_FREE, PE_NEXT, e)


@njit
def _push_ready(st, e):
    k = st.tops[T_READY]
    if k >= len(st.ready):
        st.ready = state.grown(st.ready, k + 1)
    st.ready[k] = e
    st.tops[T_READY] = k + 1


@njit
def _scan(st, e):
    """CHECKCB from the entry's scan position; park it on the first unsatisfied source."""
    m, row = st.pending[e, PE_MSG], st.pending[e, PE_ROW]
    base = row * st.n
    p, end, ptr = st.pending[e, PE_POS], st.cb_len[m], st.cb_ptr[m]
    cb_data, m_src, m_c = st.cb_data, st.m_src, st.m_c
    rs, rule = st.rs, st.checkcb
    col, stride, epoch = st.col[row], st.stride, st.epoch[row]
    while p < end:
        dep = cb_data[ptr + p]
        s, c = m_src[dep], m_c[dep]
        key = s * stride + col
        _renew(rs, key, epoch)
        first = rs[key, RS_FIRST_REC]
        if (rs[key, RS_LAST_DELVS] >= c or (rule != SAFE and first != 0 and first > c)
                or (rule == LENIENT and first == 0)):
            p += 1
            continue
        st.pending[e, PE_POS] = p
        st.pending[e, PE_NEXT] = rs[key, RS_W_HEAD] - 1
        rs[key, RS_W_HEAD] = e + 1
        return False
    st.pending[e, PE_POS] = p
    return True


@njit
def _wake(st, row, s, now):
    """last_delvs[s] or first_rec[s] of the row changed: re-check the messages parked on s."""
    key = s * st.stride + st.col[row]
    rs = st.rs
    _renew(rs, key, st.epoch[row])
    e = rs[key, RS_W_HEAD] - 1
    rs[key, RS_W_HEAD] = 0
    while e != -1:
        nxt = st.pending[e, PE_NEXT]
        st.pending[e, PE_NEXT] = -1
        if _scan(st, e):
            _push_ready(st, e)
        e = nxt


@njit
def _drain(st, q, now):
    """Deliver every ready entry; each delivery may make more entries ready."""
    tops = st.tops
    while tops[T_READY] > 0:
        tops[T_READY] -= 1
        _deliver(st, q, st.ready[tops[T_READY]], now)


@njit
def _deliver(st, q, e, now):
    m, row = st.pending[e, PE_MSG], st.pending[e, PE_ROW]
    i = row // st.n_topics
    base = row * st.n
    m_src, m_c = st.m_src, st.m_c
    s = m_src[m]
    state.log(st, T_LOG, oracle.DELIVER, i, m)
    _count_delivery(st, row, i, m, now - st.pe_recv[e], now)
    _free_entry(st, e)
    col, stride = st.col[row], st.stride
    _renew(st.rs, s * stride + col, st.epoch[row])
    rec = st.rs[s * stride + col]
    if m_c[m] > rec[RS_LAST_DELVS]:
        rec[RS_LAST_DELVS] = m_c[m]  # A4:93
    if st.prune:  # A4:94 with the original barrier (N6, A9)
        ptr, cb_data = st.cb_ptr[m], st.cb_data
        rs, members, cb_count = st.rs, st.cb_members, st.cb_count
        for k in range(st.cb_len[m]):
            dep = cb_data[ptr + k]
            _barrier_remove(rs, members, cb_count, base, row, col, stride, m_src[dep], m_c[dep])
    _barrier_add(st, base, row, s, m)
    if rec[RS_W_HEAD] != 0:
        _wake(st, row, s, now)
    if st.react_p > 0 and not st.published[i] and st.deliv_count[i] == st.react_p:
        st.published[i] = True  # E5: publish t_w ~ U{0..99} after the p-th delivery (A13)
        wait = np.floor(100.0 * rng.uniform(st.react_key, i, 0))
        events.schedule(q, now + wait, EV_REACT, i, st.m_topic[m])


@njit
def _count_delivery(st, row, i, m, delay, now):
    c, fc = st.counters, st.fcounters
    c[C_DELIVERIES] += 1
    fc[F_DELIVERY_LATENCY_SUM] += now - st.m_created[m]
    st.deliv_count[i] += 1
    if st.m_started[m] >= st.sub_done[row]:
        st.deliv_since[row] += 1
    fc[F_DELAY_SUM] += delay
    if delay == 0.0:
        c[C_DELAY_ZERO] += 1
    if delay < 10.0:
        c[C_DELAY_LT10] += 1
    if delay > 50.0:
        c[C_DELAY_GT50] += 1
    if delay > fc[F_DELAY_MAX]:
        fc[F_DELAY_MAX] = delay


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------


@njit
def _prefetch(st, q, kind, a, b):
    """Start loading the receiver's rows that the next VCube-PS event will read, while this one
    runs: at N = 4096 they are far out of the caches, and waiting for them took most of a run.
    Not for SRPT-S, which reads little of them (no barriers, no views at a PUB): there the
    prefetch's own lookups made a 20-minute churn run about 9 % slower.

    The ACK slots of the events after next (``events.runner_up``) are fetched too: an ACK's
    message is found through its slot, and that load, cold, stalled this prefetch; and the first
    membership tuple an ACK brings, whose load was most of ``_apply_data``'s time."""
    slots, width = st.slots, st.slots.shape[1]
    for j in range(events.runners_up(q)):
        k, x, y = events.runner_up(q, j)
        if k == EV_ACK:
            memory.prefetch(slots, (y >> (2 * NODE_BITS)) * width)
            memory.prefetch(slots, x * width)
    if kind == EV_MSG:
        m = a
    elif kind == EV_ACK:
        m = slots[b >> (2 * NODE_BITS), SL_MSG]
        memory.prefetch(st.tuples, slots[a, SL_HEAD] * st.tuples.shape[1])
    else:
        return
    n, i = st.n, b & _MASK
    m_src = st.m_src
    t = st.m_topic[m]
    base = (i * st.n_topics + t) * n
    col, stride = st.col[i * st.n_topics + t], st.stride
    rs = st.rs
    memory.prefetch(rs, (m_src[m] * stride + col) * N_RS)
    memory.prefetch(st.views, base + i)
    if kind == EV_MSG:
        memory.prefetch(st.recv, m * n + i)
        memory.prefetch(st.cb_members, base)
        ptr, cb_data = st.cb_ptr[m], st.cb_data
        for k in range(st.cb_len[m]):
            memory.prefetch(rs, (m_src[cb_data[ptr + k]] * stride + col) * N_RS)


@njit
def _run(st, op_time, op_kind, op_node, op_topic):
    q = events.new_queue()
    events.feed(q, op_time, EV_OP, np.zeros(len(op_time), np.int64))
    counters = st.counters
    vcube = st.mode == VCUBE_PS
    while not events.empty(q):
        now, kind, a, b = events.pop(q)
        counters[C_EVENTS] += 1
        if vcube and not events.empty(q):
            _prefetch(st, q, *events.peek(q))
        if kind == EV_MSG:
            _on_message(st, q, a, b & _MASK, (b >> NODE_BITS) & _MASK, b >> (2 * NODE_BITS), now)
        elif kind == EV_ACK:
            _on_ack(st, q, a, b & _MASK, (b >> NODE_BITS) & _MASK, b >> (2 * NODE_BITS), now)
        elif kind == EV_OP:
            _op(st, q, op_kind[a], op_node[a], op_topic[a], now)
        else:
            _op(st, q, OP_PUBLISH, a, b, now)


def install_membership(st, initial: np.ndarray) -> None:
    """Consistent views of the initial subscribers at t = 0 (spec A7); counters start at 1 so
    that every later operation wins UPDATE.  ``initial[t, x]``: x subscribes to t.

    VCube-PS: every subscriber knows the member set (non-subscribers have an empty view);
    SRPT: every node does.  One view row and its block counts are built, then copied.
    """
    n_topics, n = initial.shape
    d = n.bit_length() - 1
    st.counter[:] = 1
    subscribed = st.subscribed.reshape(n, n_topics)
    sub_done = st.sub_done.reshape(n, n_topics)
    views = st.views.reshape(n, n_topics, n)
    cnt = st.cnt.reshape(n, n_topics, -1)
    geo = np.asarray(st.geo)
    width = min(n, 64)
    for t in range(n_topics):
        members = initial[t].astype(bool)
        subscribed[:, t] = members
        sub_done[members, t] = 0.0
        row = members.astype(np.int32)
        counts = np.zeros(cnt.shape[2], np.int64)
        words = (members.reshape(-1, width).astype(np.uint64) << np.arange(width, dtype=np.uint64)).sum(axis=1)
        counts[:len(words)] = words.view(np.int64)
        for level in range(7, d + 1):
            start = geo[G_TOP + level - 7]
            counts[start:start + (n >> level)] = (words != 0).reshape(-1, 1 << (level - 6)).sum(axis=1)
        knowers = np.ones(n, bool) if st.mode == SRPT else members
        views[knowers, t, :] = row
        cnt[knowers, t, :] = counts
        if st.fast:  # the initial subscribers' paths are FORWARD, as if each had subscribed
            for x in np.flatnonzero(members):
                _fast_subscribe(st, int(x), t)


@njit
def _outputs(st):
    m = st.n_msgs[0]
    return (st.m_type[:m].copy(), st.m_src[:m].copy(), st.m_topic[:m].copy(), st.m_c[:m].copy(),
            st.m_created[:m].copy(), st.m_started[:m].copy(), st.m_finished[:m].copy(),
            st.cb_len[:m].copy(), st.recv[:m * st.n].copy(), st.log, st.tops[T_LOG])


@dataclasses.dataclass
class Workload:
    """Exogenous operations sorted by time (Algorithm 3 calls), initial membership, roots."""

    d: int
    n_topics: int
    times: np.ndarray  # float64[K]
    ops: np.ndarray  # int64[K]: OP_PUBLISH, OP_SUBSCRIBE, OP_UNSUBSCRIBE
    nodes: np.ndarray  # int64[K]
    topics: np.ndarray  # int64[K]
    initial: np.ndarray  # bool[T, N]
    roots: np.ndarray  # int64[T]: SRPT root of each topic
    react_p: int = 0  # > 0: the message-order workload of E5 (reactive publications)

    @property
    def n(self) -> int:
        return 1 << self.d

    def capacity(self) -> int:
        return len(self.times) + (self.n if self.react_p > 0 else 0)


@dataclasses.dataclass
class Run(BaseRun):
    """What one run produced; per-message arrays are indexed by message id (creation order)."""

    mode: str
    checkcb: str
    static: bool  # no SUBSCRIBE or UNSUBSCRIBE after t = 0: everyone owes everything
    msg_type: np.ndarray
    msg_src: np.ndarray
    msg_topic: np.ndarray
    msg_counter: np.ndarray
    created: np.ndarray
    started: np.ndarray
    finished: np.ndarray
    barrier_size: np.ndarray  # entries of each PUB's causal barrier (#cb)
    received: np.ndarray  # bool[M, N]: reached the node (the source counts as reached)
    counters: dict
    queue_mean: np.ndarray  # per node: mean queue length over its tree PUB enqueues (0: none)
    queue_max: np.ndarray
    queue_samples: np.ndarray
    subscribed: np.ndarray  # bool[T, N] at the end
    sub_done: np.ndarray  # float[T, N]: when the node's current subscription became complete
    delivered_since: np.ndarray  # int[T, N]: deliveries of messages started after that
    busy_rows: int  # (node, topic) queues still waiting for ACKs at the end
    queued_rows: int
    state: object  # the kernel's final State (views, first_rec, ...), for tests and notebooks
    srpt_membership: str = "delegate_broadcast"

    def oracle_report(self, per_delivery: bool = False) -> oracle.Report:
        """Causal order is owed within each topic only (thesis §5.4)."""
        return oracle.check_by_topic(self.n_nodes, self.log_kind, self.log_node, self.log_msg,
                                     self.msg_topic, per_delivery=per_delivery)

    def missing_deliveries(self) -> int:
        """Publications a subscriber should have delivered but did not: for every (node, topic)
        subscribed at the end, those started after its subscription was known everywhere (its
        SUB's ACK wave completed), other than its own."""
        pubs = self.pubs
        topic, src, started = self.msg_topic[pubs], self.msg_src[pubs], self.started[pubs]
        active = self.subscribed & np.isfinite(self.sub_done)
        expected = 0
        for t in range(self.subscribed.shape[0]):  # per topic: how many start after each threshold
            times = np.sort(started[topic == t])
            thresholds = self.sub_done[t, active[t]]
            expected += int((len(times) - np.searchsorted(times, thresholds, side="left")).sum())
        own = active[topic, src] & (started >= self.sub_done[topic, src])  # a node's own PUBs
        return expected - int(own.sum()) - int(self.delivered_since[active].sum())

    def order_flaw(self) -> str:
        """The published CHECKCB reading that can deliver a message before its causal past in
        this run (a known flaw, reported by notebooks 35 and 37), or '' if none can: the prose's
        lenient rule skips an entry whose source was never heard from, in any run; the
        pseudo-code's strict rule skips an entry whose source's first received PUB is later,
        which under churn skips that entry's own causal past too.  The safe rule is exact.  SRPT-S
        under churn with the authors' fast subscription: hop-by-hop routes on a changing shared
        view can reorder the root's messages (receptions out of per-source order too)."""
        if self.mode != "vcube_ps":
            # the fast subscription routes each hop on the shared view of the moment, so two
            # messages of the root can take paths of different lengths to a node under churn:
            # receptions, and SRPT-S's deliveries on reception, can then leave the root's order
            return ("SRPT-S fast subscription under churn"
                    if self.srpt_membership != "delegate_broadcast" and not self.static else "")
        if self.checkcb == "lenient":
            return "CHECKCB lenient"
        return "CHECKCB strict under churn" if self.checkcb == "strict" and not self.static else ""

    def _out_of_order(self, report) -> int:
        """Deliveries out of causal order: after a causal successor, and in a static run (where
        everyone owes everything) also before a predecessor."""
        return max(report.late, report.errors) if self.static else report.late

    def violations(self, report) -> int:
        """Duplicates, and deliveries out of causal order unless ``order_flaw`` explains them.
        Under churn a joiner legitimately misses older messages, so only late deliveries count
        (thesis §5.4.1)."""
        return report.duplicates + (0 if self.order_flaw() else self._out_of_order(report))

    def undelivered(self, report) -> int:
        """Static runs: publications a subscriber never delivered.  Under churn, relays with
        stale views skip subscribers by design (spec §2.10): counted as a known flaw instead."""
        return self.missing_deliveries() if self.static else 0

    def invariants(self, report) -> list[str]:
        """The oracle (``violations``, ``undelivered``), no duplicate reception, per-source FIFO
        receptions, every ACK wave completed and no message left in a queue; static runs also
        leave nothing blocked, reject no operation, and VCube-PS relays no PUB through a
        non-subscriber there."""
        c = self.counters
        problems = []
        if self.violations(report) or self.undelivered(report):
            problems.append(f"causality oracle: {self.violations(report)} violations, "
                            f"{self.undelivered(report)} undelivered; {report}")
        if c["duplicates"]:
            problems.append(f"{c['duplicates']} duplicate receptions")
        if c["fifo_violations"] and not (self.mode == "srpt" and self.order_flaw()):
            problems.append(f"{c['fifo_violations']} receptions out of per-source order")
        if c["slots_live"] or self.busy_rows or self.queued_rows:
            problems.append(f"unfinished ACK waves {c['slots_live']}, busy queues {self.busy_rows}, "
                            f"queued messages {self.queued_rows}")
        if self.static and (c["pending_live"] or c["rejected_ops"]):
            problems.append(f"static run: blocked {c['pending_live']}, rejected operations "
                            f"{c['rejected_ops']}")
        if self.static and self.mode == "vcube_ps" and c["false_positives"]:
            problems.append(f"static VCube-PS run with {c['false_positives']} relay receptions")
        return problems

    def known_flaws(self, report) -> dict[str, int]:
        flaws = {}
        if self.order_flaw() and self._out_of_order(report):
            flaws[f"out of causal order, {self.order_flaw()}"] = self._out_of_order(report)
        if self.mode == "srpt" and self.order_flaw() and self.counters["fifo_violations"]:
            flaws[f"receptions out of per-source order, {self.order_flaw()}"] = self.counters["fifo_violations"]
        if not self.static and self.mode == "vcube_ps":
            if missing := self.missing_deliveries():
                flaws["publications owed to a subscriber and not delivered under churn"] = missing
        return flaws

    @property
    def pubs(self) -> np.ndarray:
        return np.flatnonzero(self.msg_type == PUB)

    def mean_latency(self, from_start: bool = False) -> float:
        """Mean over (PUB, receiving subscriber other than the source) of the arrival time minus
        the PUBLISH call (spec §5.0), or minus the start of the propagation (``from_start``:
        without the wait behind the source's earlier messages of the topic; for SRPT, from the
        root's reception of the delegated copy)."""
        c = self.counters
        total = c["from_start_sum"] if from_start else c["latency_sum"]
        return total / c["subscriber_receptions"] if c["subscriber_receptions"] else np.nan

    def mean_delivery_latency(self) -> float:
        """Mean over the deliveries at subscribers other than the source of the delivery time
        minus the PUBLISH call ("received and delivered", §5.6.1); equal to the reception
        latency when nothing waits (SRPT-S, static runs), above it when CHECKCB holds messages."""
        c = self.counters
        return c["delivery_latency_sum"] / c["deliveries"] if c["deliveries"] else np.nan

    def mean_path_wait(self, per: str = "reception") -> float:
        """The authors' cumulative WAIT_TIME (spec §5.8 amendment): along the path of a PUB copy
        from the start of its propagation (the source; SRPT: the publisher's delegation copy
        included), the sum over hops of the time from enqueue to departure (queue wait and the
        copy's own t_pc + t_t).  Mean over the receptions at subscribers other than the source
        (``per = "reception"``), or over every PUB copy sent, relays' and delegations included
        (``per = "copy"``, the authors' per-send statistic)."""
        c = self.counters
        if per == "reception":
            return c["path_wait_sum"] / c["subscriber_receptions"] if c["subscriber_receptions"] else np.nan
        return c["path_copy_sum"] / c["pub_copies"] if c["pub_copies"] else np.nan


COUNTER_NAMES = ("events", "pub_copies", "delegations", "sub_copies", "uns_copies", "ack_copies",
                 "subscriber_receptions", "false_positives", "duplicates", "deliveries",
                 "delay_zero", "delay_lt10", "delay_gt50", "barrier_replaced", "rejected_ops",
                 "slots_live", "pending_live", "copies", "fifo_violations")
FCOUNTER_NAMES = ("latency_sum", "delay_sum", "delay_max", "wait_sum", "latency_max",
                  "from_start_sum", "path_wait_sum", "path_copy_sum", "delivery_latency_sum")


def thesis_network(t_t: float = 1.0, tpp_mean: float = 100.0, tpp_sigma: float = 0.0) -> network.Network:
    """Thesis ch. 5's delay model (vcube_ps spec §3.2): no t_pc, t_send = ``t_t`` per copy,
    constant t_pp (or jittered, clipped at 0)."""
    return network.Network(t_pc=0.0, t_t=t_t, tpp="normal" if tpp_sigma > 0 else "constant",
                           tpp_mean=tpp_mean, tpp_sigma=tpp_sigma, tpp_negative="clip")


def simulate(workload: Workload, *, net: network.Network | None = None,
             seed: np.random.SeedSequence | None = None, mode: str = "vcube_ps",
             ack_cost: str = "free", checkcb: str = "strict", cb_prune: bool = True,
             srpt_membership: str = "delegate_broadcast", layout: str = "rows") -> Run:
    """Run ``workload`` under VCube-PS or SRPT-S (the kernel contract of
    ``causal_lab.engine.run``); see the module docstring.  ``srpt_membership`` is SRPT-S's
    membership protocol under churn (``SRPT_MEMBERSHIP``); VCube-PS has its own.  ``layout``
    (``LAYOUTS``) orders the records in memory: it changes the cost of a run, not the run."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if srpt_membership not in SRPT_MEMBERSHIP:
        raise ValueError(f"srpt_membership must be one of {', '.join(SRPT_MEMBERSHIP)}, got {srpt_membership!r}")
    if srpt_membership != "delegate_broadcast" and mode != "srpt":
        raise ValueError(f"srpt_membership={srpt_membership!r} is an SRPT-S option, not one of {mode!r}")
    if ack_cost not in ("free", "queued"):
        raise ValueError(f"ack_cost must be free or queued, got {ack_cost!r}")
    if checkcb not in CHECKCB_RULES:
        raise ValueError(f"checkcb must be one of {', '.join(CHECKCB_RULES)}, got {checkcb!r}")
    if not 1 <= workload.d <= NODE_BITS:
        raise ValueError(f"d must be in 1..{NODE_BITS} (N <= {MAX_NODES}), got {workload.d}")
    net = net or thesis_network()
    if mode == "srpt" and net.tpp != "constant":
        raise ValueError("SRPT-S delivers on reception, which needs FIFO links: use a constant t_pp")
    seed = seed if seed is not None else np.random.SeedSequence(0)
    st = new_state(workload.d, workload.n_topics, MODES[mode], workload.capacity(), net, seed,
                   workload.roots, checkcb=CHECKCB_RULES[checkcb], prune=bool(cb_prune),
                   ack_queued=ack_cost == "queued", react_p=int(workload.react_p),
                   fast=SRPT_MEMBERSHIP[srpt_membership], layout=layout)
    install_membership(st, np.asarray(workload.initial, bool))
    _run(st, np.asarray(workload.times, np.float64), np.asarray(workload.ops, np.int64),
         np.asarray(workload.nodes, np.int64), np.asarray(workload.topics, np.int64))
    (typ, src, topic, c, created, started, finished, cb_len, recv, log, log_len) = _outputs(st)
    log_kind, log_node, log_msg = state.log_arrays(log, log_len)
    n, n_topics = workload.n, workload.n_topics
    counters = dict(zip(COUNTER_NAMES, (int(x) for x in st.counters)))
    counters.update(zip(FCOUNTER_NAMES, (float(x) for x in st.fcounters)))
    q_cnt = np.asarray(st.q_cnt)
    return Run(
        n_nodes=n, log_kind=log_kind, log_node=log_node, log_msg=log_msg,
        events=counters["events"], mode=mode, checkcb=checkcb,
        static=bool((np.asarray(workload.ops) == OP_PUBLISH).all()), msg_type=typ, msg_src=src, msg_topic=topic, msg_counter=c,
        created=created, started=started, finished=finished, barrier_size=cb_len,
        received=recv.reshape(len(typ), n), counters=counters,
        queue_mean=np.divide(np.asarray(st.q_sum), q_cnt, out=np.zeros(n), where=q_cnt > 0),
        queue_max=np.asarray(st.q_max).copy(), queue_samples=q_cnt.copy(),
        subscribed=np.asarray(st.subscribed).reshape(n, n_topics).T.copy(),
        sub_done=np.asarray(st.sub_done).reshape(n, n_topics).T.copy(),
        delivered_since=np.asarray(st.deliv_since).reshape(n, n_topics).T.copy(),
        busy_rows=int((np.asarray(st.busy) != -1).sum()),
        queued_rows=int((np.asarray(st.bq_head) != -1).sum()), state=st, srpt_membership=srpt_membership,
    )
