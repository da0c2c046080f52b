"""Causal broadcast over VCube spanning trees, with and without aggregation (seed 000 §4, thesis ch. 4).

Follow one message from broadcast to delivery:

1. ``broadcast`` (a ``BROADCAST`` event at its scheduled instant): the source increments its own
   vector-clock entry, the message records the source's vector clock (its causal past), the
   source delivers it locally and sends one copy to each of its ``d`` children in its own tree.
2. ``on_packet`` (an ``ARRIVAL`` event at node i, from its parent j): every message of the
   packet is received, appended to ``PENDING`` and ``VMAX`` (highest contiguous sequence number
   received per source) advances; then the message is forwarded to i's children in its tree,
   which depend only on (i, j) (spec §1.4):

   * without aggregation, at once and alone;
   * with aggregation (Algorithm 2, ``_check_agg``), together with every pending message that
     is causally after it and no longer held for that child; a message is *held* for child k
     while one of its predecessors that i itself must relay to k has not been received.

3. ``_deliver_ready`` (CHECKDELIVERY, once per packet): a pending message x from s is delivered
   once ``x.vc[s] == VC[s] + 1`` and ``x.vc[l] <= VC[l]`` for every other l.

Two indexes keep this linear in the number of dependencies instead of rescanning ``PENDING``
(same decisions as the paper's scans, spec §2.2):

* a message blocked for *delivery* waits on the first vector entry (node, source) it needs and
  is re-examined when that entry grows;
* a pending entry (message x at node i) counts, per *level*, its predecessors missing at i; a
  missing predecessor from source l blocks the children of i in l's tree, which are the first
  ``level(l) = n_tree_children(i, l)`` children of i.  x may go to child number t iff
  ``t >= hold[x at i]``, the highest level with a missing predecessor.  Counts drop when ``VMAX``
  advances (per (node, source) waiting lists, as for delivery).

Trees: ``PER_SOURCE`` (VCube, one tree per source) or ``SINGLE_TREE`` (seed 000 §5.5: every
message follows the tree of node 0; a source other than 0 first sends its message to node 0,
which relays it to its d children; a source receiving its own message back forwards it alone).

Propagation delays (``tpp_per``): drawn for every packet (``"packet"``, the spec's default, every
use of a link) or once per directed link for the whole run (``"link"``): seed 000 §5.5 says the
single tree's links were "varied each time a link is used", which suggests that the per-source
runs kept one delay per link.  A link's delay is the counter-based draw ``(link key, i, k)``, so
it does not depend on event order; with it every link is FIFO and messages overtake each other
only across different paths.

Every run records an event log (broadcasts and deliveries, in the order they happen) that the
independent ``causal_lab.oracle`` checks against the true happened-before relation.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from causal_lab import oracle
from causal_lab.engine import events, network, rng, state, workload
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.topology import vcube as topology

BROADCAST = 0
ARRIVAL = 1
SOURCE_ID_BYTES = 2  # thesis accounting (spec §3.3, W7)
ENTRY_BYTES = 4
PER_SOURCE = 0
SINGLE_TREE = 1
TREES = {"per_source": PER_SOURCE, "single": SINGLE_TREE}
TPP_PER = ("packet", "link")  # a propagation delay per packet, or one per directed link

# Everything a run mutates: node state, messages, pending lists, holds, packets, the log (a numba
# structref with named fields, see causal_lab.engine.state).
STATE_FIELDS = (
        # configuration
        "d", "n", "aggregate", "trees", "payload", "header", "mtu", "net", "net_state",
        # one propagation delay per directed link (``tpp_per = "link"``) and its stream key
        "tpp_link", "link_key",
        # node state: delivered counts VC, contiguous received VMAX, Birman bookkeeping
        "vc", "vmax", "changed", "n_changed",
        # messages (id = broadcast order): source, sequence number, dense vector clock,
        # sparse dependencies (CSR, for delivery), Birman entries, (source, seq) -> id
        "msg_src", "msg_seq", "msg_vc", "dep_ptr", "dep_src", "dep_cnt", "entries", "seq_msg",
        # per (message, node): reception/delivery time, packet that brought it
        "recv_time", "deliv_time", "recv_pkt",
        # PENDING per node: insertion-ordered doubly linked list over entries e = m * n + i
        "p_head", "p_tail", "p_next", "p_prev", "n_pending", "max_pending",
        # holds for forwarding: missing predecessors per (entry, level); table ``holds`` of
        # waiting records (columns H_*) listed per (node, source) from ``h_head``
        "hold_count", "hold", "h_head", "holds",
        # deliveries: blocked messages parked per (node, source): table ``parked`` (P_*)
        "w_head", "parked",
        # packets: table ``pkts`` (PK_*), their messages, queue waits
        "pkts", "pkt_msgs", "pkt_wait",
        # event log for the oracle, and counters [duplicate receptions, events]
        "log", "counters",
        # reusable work lists (allocating a typed list per call costs more than the work)
        "scratch", "part", "ready", "tops",
)
# tops[...]: fill levels of the tables and arrays
T_DEP, T_HOLDS, T_PARKED, T_PKT, T_PKT_MSGS, T_LOG = range(6)
H_ENTRY, H_NEED, H_LEVEL, H_NEXT = range(4)  # a missing predecessor count..need of an entry
P_MSG, P_POS, P_NEXT = range(3)  # a message parked until a vector entry grows
PK_FIRST, PK_LEN, PK_SENDER, PK_RECEIVER, PK_SIZE, PK_MTU_CLOSED = range(6)
POOL = 1024  # initial size of the growable arrays
StateType, State = state.define("State", STATE_FIELDS, __name__)


@dataclasses.dataclass
class Schedule:
    """The workload: who broadcasts when (ids in broadcast order) in a d-VCube."""

    d: int
    times: np.ndarray  # float64[M], sorted
    sources: np.ndarray  # int64[M]

    @classmethod
    def one_shot(cls, d: int, window: float = 500.0, sources: str = "permutation",
                 seed: np.random.SeedSequence | None = None) -> "Schedule":
        """Seed 000 §5 (spec §3.4): N broadcasts in [0, window] (``engine.workload.one_shot``)."""
        seed = seed if seed is not None else np.random.SeedSequence(0)
        return cls(d, *workload.one_shot(1 << d, window, sources, seed))


@dataclasses.dataclass
class Run(BaseRun):
    """What one simulated run produced (arrays indexed by message id = broadcast order)."""

    trees: str
    sources: np.ndarray  # int64[M]
    times: np.ndarray  # float64[M] broadcast instants
    entries: np.ndarray  # int64[M] Birman-compressed vector-clock entries
    vector_clocks: np.ndarray  # int32[M, N] each message's full vector clock (its causal past)
    recv_time: np.ndarray  # float64[M, N] (nan where not received; the source never receives)
    deliv_time: np.ndarray  # float64[M, N]
    recv_packet: np.ndarray  # int64[M, N] packet that brought the message (-1: none)
    packets: int
    packet_sender: np.ndarray  # int64[packets]
    packet_sizes: np.ndarray  # int64[packets] bytes
    packet_messages: np.ndarray  # int64[packets] messages per packet
    packet_mtu_closed: np.ndarray  # bool[packets]: closed because the next message did not fit
    queue_wait: np.ndarray  # float64[packets]
    max_pending: np.ndarray  # int64[N] per node, maximum number of received undelivered messages
    duplicate_receptions: int

    def invariants(self, report) -> list[str]:
        """Spec §2.5 I1-I3, I7 and the MTU, beside the oracle's causal order (I4)."""
        n = self.n_nodes
        copies = len(self.sources) * (n - 1)
        if self.trees == "single":  # a source other than the root first hands its message over
            copies += int((self.sources != 0).sum())
        problems = super().invariants(report)
        if self.duplicate_receptions or self.packet_messages.sum() != copies:
            problems.append(f"messages carried {self.packet_messages.sum()} != {copies} "
                            f"or {self.duplicate_receptions} duplicate receptions")
        if np.isnan(self.deliv_time).any():
            problems.append("a message was not delivered everywhere")
        if self.packet_sizes[self.packet_messages > 1].max(initial=0) > 1500:
            problems.append("an aggregated packet exceeds the MTU")
        return problems


def new_state(d, n_messages, aggregate, trees, payload, net: network.Network, seed,
              tpp_link=False) -> State:
    """Empty state of a d-VCube that will see ``n_messages`` broadcasts."""
    n = 1 << d
    m = n_messages
    i64 = np.int64
    return State.create(
        d=d, n=n, aggregate=aggregate, trees=trees, payload=payload, header=net.header,
        mtu=net.mtu, net=net.params(seed), net_state=network.new_state(n),
        tpp_link=bool(tpp_link), link_key=rng.stream_key(seed, "t_pp_link"),
        vc=np.zeros((n, n), np.int32), vmax=np.zeros((n, n), np.int32),
        changed=np.zeros((n, n), np.bool_), n_changed=np.zeros(n, i64),
        msg_src=np.full(m, -1, i64), msg_seq=np.zeros(m, i64), msg_vc=np.zeros((m, n), np.int32),
        dep_ptr=np.zeros(m + 1, i64), dep_src=np.empty(POOL, i64), dep_cnt=np.empty(POOL, i64),
        entries=np.zeros(m, i64), seq_msg=np.full(n * (m + 2), -1, i64),
        recv_time=np.full((m, n), np.nan), deliv_time=np.full((m, n), np.nan),
        recv_pkt=np.full((m, n), -1, i64),
        p_head=np.full(n, -1, i64), p_tail=np.full(n, -1, i64), p_next=np.full(m * n, -1, i64),
        p_prev=np.full(m * n, -1, i64), n_pending=np.zeros(n, i64), max_pending=np.zeros(n, i64),
        hold_count=np.zeros((m * n, d + 1), np.int32), hold=np.zeros(m * n, np.int8),
        h_head=np.full(n * n, -1, i64), holds=state.table(4, POOL),
        w_head=np.full(n * n, -1, i64), parked=state.table(3, POOL),
        pkts=state.table(6, POOL), pkt_msgs=np.empty(POOL, i64), pkt_wait=np.empty(POOL),
        log=state.new_log(POOL), counters=np.zeros(2, i64),
        scratch=np.empty(m + 1, i64), part=np.empty(m + 1, i64), ready=np.empty(m + 1, i64),
        tops=np.zeros(6, i64),
    )


# ------------------------------------------------------------------------------------------
# Broadcast and reception
# ------------------------------------------------------------------------------------------


@njit
def define_message(st, m, s, vc_row):
    """Register message ``m`` from ``s`` whose vector clock is ``vc_row`` (messages in id order)."""
    st.msg_src[m] = s
    st.msg_seq[m] = vc_row[s]
    st.seq_msg[s * (len(st.msg_src) + 2) + vc_row[s]] = m
    k = st.tops[T_DEP]
    st.dep_src = state.grown(st.dep_src, k + st.n)
    st.dep_cnt = state.grown(st.dep_cnt, k + st.n)
    dep_src, dep_cnt = st.dep_src, st.dep_cnt
    for l in range(st.n):
        st.msg_vc[m, l] = vc_row[l]
        if l != s and vc_row[l] > 0:
            dep_src[k] = l
            dep_cnt[k] = vc_row[l]
            k += 1
    st.tops[T_DEP] = k
    st.dep_ptr[m + 1] = k


@njit
def broadcast(st, q, m, i, now):
    st.vc[i, i] += 1
    st.vmax[i, i] = st.vc[i, i]
    define_message(st, m, i, st.vc[i])
    st.entries[m] = 1 + st.n_changed[i]  # Birman: entries changed since i's last broadcast
    st.changed[i, :] = False
    st.n_changed[i] = 0
    st.deliv_time[m, i] = now
    state.log(st, T_LOG, oracle.BROADCAST, i, m)
    one = st.scratch
    one[0] = m
    if st.trees == SINGLE_TREE and i != 0:
        _send(st, q, i, 0, one, 1, now, False)  # the delegate hop to the root of the single tree
        return
    for t in range(st.d):
        _send(st, q, i, i ^ (1 << t), one, 1, now, False)


@njit
def on_packet(st, q, p, i, now):
    j = st.pkts[p, PK_SENDER]
    if st.trees == SINGLE_TREE:
        kids = topology.n_tree_children(i, 0, st.d)
    else:
        kids = topology.children_after(i, j)
    pkt_msgs, msg_src, recv_time = st.pkt_msgs, st.msg_src, st.recv_time
    first = st.pkts[p, PK_FIRST]
    for k in range(first, first + st.pkts[p, PK_LEN]):
        m = pkt_msgs[k]
        if msg_src[m] == i:  # single tree: my own message coming back down the tree
            one = st.scratch
            one[0] = m
            for t in range(kids):
                _send(st, q, i, i ^ (1 << t), one, 1, now, False)
            continue
        if not np.isnan(recv_time[m, i]):
            st.counters[0] += 1  # a duplicate: the invariants test that this never happens
            continue
        recv_time[m, i] = now
        st.recv_pkt[m, i] = p
        _add_pending(st, i, m)
        _advance_vmax(st, i, msg_src[m])
        for t in range(kids):
            _check_agg(st, q, i, t, m, now)
    _deliver_ready(st, i, p, now)
    if st.n_pending[i] > st.max_pending[i]:
        st.max_pending[i] = st.n_pending[i]


@njit
def _check_agg(st, q, i, t, m, now):
    """Send to child number t of i the pending messages that may go with m (CHECKAGG)."""
    batch = st.scratch
    if not st.aggregate:
        batch[0] = m
        _send_split(st, q, i, i ^ (1 << t), 1, now)
        return
    if st.hold[m * st.n + i] > t:
        return  # m itself is held for this child: so is everything causally after it
    # locals: every read of a struct field costs a reference-count round trip
    n, d, msg_vc, msg_src, hold, p_next = st.n, st.d, st.msg_vc, st.msg_src, st.hold, st.p_next
    single = st.trees == SINGLE_TREE
    s, seq = msg_src[m], st.msg_seq[m]
    e = st.p_head[i]
    count = 0
    while e != -1:
        x = e // n
        if (msg_vc[x, s] >= seq and hold[e] <= t
                and (single or t < topology.n_tree_children(i, msg_src[x], d))):
            batch[count] = x
            count += 1
        e = p_next[e]
    _send_split(st, q, i, i ^ (1 << t), count, now)


# ------------------------------------------------------------------------------------------
# PENDING, VMAX and the holds
# ------------------------------------------------------------------------------------------


@njit
def _level(st, i, l):
    """How many of i's children a missing message from l blocks (its tree's children of i)."""
    if st.trees == SINGLE_TREE:
        return st.d
    return topology.n_tree_children(i, l, st.d)


@njit
def _add_pending(st, i, x):
    e = x * st.n + i
    st.p_prev[e] = st.p_tail[i]
    st.p_next[e] = -1
    if st.p_tail[i] == -1:
        st.p_head[i] = e
    else:
        st.p_next[st.p_tail[i]] = e
    st.p_tail[i] = e
    st.n_pending[i] += 1
    if not st.aggregate:
        return
    # own-source predecessor: all messages 1..seq of s must be received (x itself included)
    _need(st, e, i, st.msg_src[x], st.msg_seq[x])
    dep_src, dep_cnt, vmax = st.dep_src, st.dep_cnt, st.vmax
    for k in range(st.dep_ptr[x], st.dep_ptr[x + 1]):
        if dep_cnt[k] > vmax[i, dep_src[k]]:  # tested here: calls with st are not free
            _need(st, e, i, dep_src[k], dep_cnt[k])


@njit
def _need(st, e, i, l, count):
    """Entry e needs messages 1..count of l received at i before going to l's children of i."""
    if count <= st.vmax[i, l]:
        return
    level = _level(st, i, l)
    if level == 0:
        return  # i relays nothing of l's tree: no child to hold for
    st.hold_count[e, level] += 1
    if level > st.hold[e]:
        st.hold[e] = level
    slot = i * st.n + l
    st.holds, w = state.append(st.holds, st.tops, T_HOLDS)
    holds = st.holds
    holds[w, H_ENTRY] = e
    holds[w, H_NEED] = count
    holds[w, H_LEVEL] = level
    holds[w, H_NEXT] = st.h_head[slot]
    st.h_head[slot] = w


@njit
def _advance_vmax(st, i, s):
    """VMAX[s] moves over every contiguously received message of s; release what it unblocks."""
    stride = len(st.msg_src) + 2
    vmax, seq_msg, recv_time = st.vmax, st.seq_msg, st.recv_time
    moved = False
    while True:
        x = seq_msg[s * stride + vmax[i, s] + 1]
        if x == -1 or np.isnan(recv_time[x, i]):
            break
        vmax[i, s] += 1
        moved = True
    if not moved or not st.aggregate:
        return
    slot = i * st.n + s
    holds = st.holds
    w = st.h_head[slot]
    st.h_head[slot] = -1
    while w != -1:
        nxt = holds[w, H_NEXT]
        if holds[w, H_NEED] <= st.vmax[i, s]:
            e = holds[w, H_ENTRY]
            level = holds[w, H_LEVEL]
            st.hold_count[e, level] -= 1
            while st.hold[e] > 0 and st.hold_count[e, st.hold[e]] == 0:
                st.hold[e] -= 1
        else:
            holds[w, H_NEXT] = st.h_head[slot]
            st.h_head[slot] = w
        w = nxt


# ------------------------------------------------------------------------------------------
# Delivery
# ------------------------------------------------------------------------------------------


@njit
def _deliverable(st, i, x, pos):
    """Is x deliverable at i?  If not, park it on the first vector entry it still needs."""
    vc, dep_ptr, dep_src, dep_cnt = st.vc, st.dep_ptr, st.dep_src, st.dep_cnt
    s = st.msg_src[x]
    if pos < 0:
        if vc[i, s] < st.msg_seq[x] - 1:
            _park(st, i * st.n + s, x, -1)
            return False
        pos = 0
    for k in range(dep_ptr[x] + pos, dep_ptr[x + 1]):
        if vc[i, dep_src[k]] < dep_cnt[k]:
            _park(st, i * st.n + dep_src[k], x, k - dep_ptr[x])
            return False
    return True


@njit
def _park(st, slot, x, pos):
    st.parked, w = state.append(st.parked, st.tops, T_PARKED)
    parked = st.parked
    parked[w, P_MSG] = x
    parked[w, P_POS] = pos
    parked[w, P_NEXT] = st.w_head[slot]
    st.w_head[slot] = w


@njit
def _deliver_ready(st, i, p, now):
    """CHECKDELIVERY after packet p: deliver what became deliverable at i, transitively.

    Messages received earlier are already parked on the entry they wait for, so only the
    packet's new messages need a look; each delivery wakes the messages parked on its entry.
    """
    ready = st.ready
    count = 0
    n, vc, msg_src, changed, deliv_time = st.n, st.vc, st.msg_src, st.changed, st.deliv_time
    w_head = st.w_head
    pkt_msgs, recv_pkt = st.pkt_msgs, st.recv_pkt
    first = st.pkts[p, PK_FIRST]
    for k in range(first, first + st.pkts[p, PK_LEN]):
        x = pkt_msgs[k]
        if recv_pkt[x, i] == p and _deliverable(st, i, x, -1):
            ready[count] = x
            count += 1
    while count > 0:
        count -= 1
        x = ready[count]
        s = msg_src[x]
        vc[i, s] += 1
        if not changed[i, s]:
            changed[i, s] = True
            st.n_changed[i] += 1
        deliv_time[x, i] = now
        _remove_pending(i, x * n + i, st.p_head, st.p_tail, st.p_next, st.p_prev, st.n_pending)
        state.log(st, T_LOG, oracle.DELIVER, i, x)
        slot = i * n + s
        w = w_head[slot]
        w_head[slot] = -1
        while w != -1:
            # parking may grow the table: read it through the struct each time
            nxt, y, pos = st.parked[w, P_NEXT], st.parked[w, P_MSG], st.parked[w, P_POS]
            if _deliverable(st, i, y, pos):
                ready[count] = y
                count += 1
            w = nxt


@njit
def _remove_pending(i, e, p_head, p_tail, p_next, p_prev, n_pending):
    prev, nxt = p_prev[e], p_next[e]
    if prev == -1:
        p_head[i] = nxt
    else:
        p_next[prev] = nxt
    if nxt == -1:
        p_tail[i] = prev
    else:
        p_prev[nxt] = prev
    n_pending[i] -= 1


# ------------------------------------------------------------------------------------------
# Sending
# ------------------------------------------------------------------------------------------


@njit
def _message_size(payload, entries):
    return payload + SOURCE_ID_BYTES + ENTRY_BYTES * entries


@njit
def _send_split(st, q, i, k, count, now):
    """Send ``st.scratch[:count]`` to k in as few packets as the MTU allows (spec §3.3), in
    order."""
    if count == 0:
        return
    batch, part = st.scratch, st.part
    header, mtu, payload, entries = st.header, st.mtu, st.payload, st.entries
    size = header
    used = 0
    for b in range(count):
        x = batch[b]
        if used > 0 and size + _message_size(payload, entries[x]) > mtu:
            _send(st, q, i, k, part, used, now, True)
            used = 0
            size = header
        part[used] = x
        used += 1
        size += _message_size(payload, entries[x])
    _send(st, q, i, k, part, used, now, False)


@njit
def _send(st, q, i, k, msgs, count, now, mtu_closed):
    """One packet with ``msgs[:count]`` from i to k."""
    tops = st.tops
    first = tops[T_PKT_MSGS]
    st.pkt_msgs = state.grown(st.pkt_msgs, first + count)
    tops[T_PKT_MSGS] = first + count
    st.pkts, p = state.append(st.pkts, tops, T_PKT)
    st.pkt_wait = state.grown(st.pkt_wait, p + 1)
    pkts, pkt_msgs, payload, entries = st.pkts, st.pkt_msgs, st.payload, st.entries
    size = st.header
    for b in range(count):
        x = msgs[b]
        pkt_msgs[first + b] = x
        size += _message_size(payload, entries[x])
    pkts[p, PK_FIRST] = first
    pkts[p, PK_SENDER] = i
    pkts[p, PK_RECEIVER] = k
    pkts[p, PK_LEN] = count
    pkts[p, PK_SIZE] = size
    pkts[p, PK_MTU_CLOSED] = mtu_closed
    if st.tpp_link:  # the same propagation delay at every use of the link i -> k
        arrival, wait = network.send_on_link(st.net, st.net_state, i, k, now, st.link_key)
    else:
        arrival, wait = network.send(st.net, st.net_state, i, now)
    st.pkt_wait[p] = wait
    events.schedule(q, arrival, ARRIVAL, p, k)


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------


@njit
def _run(st, times, sources):
    q = events.new_queue()
    events.feed(q, times, BROADCAST, sources)
    while not events.empty(q):
        now, kind, a, b = events.pop(q)
        st.counters[1] += 1
        if kind == BROADCAST:
            broadcast(st, q, a, b, now)
        else:
            on_packet(st, q, a, b, now)


@njit
def _outputs(st):
    """What a run returns: the filled parts of the tables (one compiled call instead of a
    compiled getter per field)."""
    p = st.tops[T_PKT]
    return (st.entries, st.msg_vc, st.recv_time, st.deliv_time, st.recv_pkt, st.max_pending,
            st.counters, st.pkts[:p].copy(), st.pkt_wait[:p].copy(), st.log, st.tops[T_LOG])


def simulate(
    schedule: Schedule,
    *,
    net: network.Network | None = None,
    seed: np.random.SeedSequence | None = None,
    aggregate: bool = False,
    trees: str = "per_source",
    payload: int = 50,
    tpp_per: str = "packet",
) -> Run:
    """Run ``schedule`` (the kernel contract of ``causal_lab.engine.run``); see the module
    docstring.  Variants: ``aggregate`` (Algorithm 2), ``trees`` (per source or the single tree
    of node 0), ``payload`` bytes per message, ``tpp_per`` (a propagation delay per packet or
    one per directed link)."""
    if schedule.d < 1:
        raise ValueError(f"d must be >= 1, got {schedule.d}")
    if trees not in TREES:
        raise ValueError(f"trees must be one of {', '.join(TREES)}, got {trees!r}")
    if tpp_per not in TPP_PER:
        raise ValueError(f"tpp_per must be one of {', '.join(TPP_PER)}, got {tpp_per!r}")
    net = net or network.Network()
    seed = seed if seed is not None else np.random.SeedSequence(0)
    times, who = schedule.times, schedule.sources
    st = new_state(schedule.d, len(times), bool(aggregate), TREES[trees], int(payload), net, seed,
                   tpp_per == "link")
    _run(st, times, who)
    (entries, vcs, recv, deliv, recv_pkt, max_pending, counters, pkts, wait, log,
     log_len) = _outputs(st)
    log_kind, log_node, log_msg = state.log_arrays(log, log_len)
    return Run(
        n_nodes=1 << schedule.d, log_kind=log_kind, log_node=log_node, log_msg=log_msg,
        events=int(counters[1]), trees=trees, sources=who, times=times,
        entries=entries, vector_clocks=vcs, recv_time=recv, deliv_time=deliv,
        recv_packet=recv_pkt, packets=len(pkts),
        packet_sender=pkts[:, PK_SENDER].copy(), packet_sizes=pkts[:, PK_SIZE].copy(),
        packet_messages=pkts[:, PK_LEN].copy(), packet_mtu_closed=pkts[:, PK_MTU_CLOSED] != 0,
        queue_wait=wait, max_pending=max_pending, duplicate_receptions=int(counters[0]),
    )
