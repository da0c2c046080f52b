"""Causal broadcast over VCube per-source spanning trees (seed 000 §4, thesis ch. 4).

Follow one message from broadcast to delivery:

1. ``BROADCAST`` event at its scheduled instant: the source increments its own vector-clock
   entry, the message records the source's vector clock (its causal past), the source delivers
   it locally and sends one copy to each of its ``d`` children in its own tree (``_broadcast``).
2. ``ARRIVAL`` of a packet at node i from its parent j: every message in it is received
   (``_receive``), forwarded to i's children in the message's tree, which depend only on
   (i, j) (spec §1.4), and made pending.
3. Causal delivery (``_try_deliver``): a pending message x from s is delivered once
   ``x.vc[s] == VC[s] + 1`` and ``x.vc[l] <= VC[l]`` for every other l.  Instead of rescanning
   the pending set, a blocked message waits on the first vector entry it needs (node, source)
   and is woken when that entry grows: the same deliveries as the paper's repeated scan
   (spec §2.2), in time linear in the number of dependencies.

Every run records an event log (broadcasts and deliveries in the order they happen) that the
independent ``causal_lab.oracle`` checks against the true happened-before relation.

Variants: ``aggregate=False`` is the paper's "No aggr." baseline (each received message is
forwarded at once, alone).  The aggregation protocol (Algorithm 2) comes with issue 3.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
from numba.typed import List

from causal_lab import events, network, topology, workload
from causal_lab.buffers import to_array

BROADCAST = 0
ARRIVAL = 1
SOURCE_ID_BYTES = 2  # thesis accounting (spec §3.3, W7)
ENTRY_BYTES = 4

LOG_BROADCAST = 0
LOG_DELIVER = 1


@dataclasses.dataclass
class Run:
    """What one simulated run produced (arrays indexed by message id = broadcast order)."""

    n_nodes: int
    sources: np.ndarray  # int64[M]
    times: np.ndarray  # float64[M] broadcast instants
    entries: np.ndarray  # int64[M] Birman-compressed vector-clock entries
    recv_time: np.ndarray  # float64[M, N] (nan where not received; the source never receives)
    deliv_time: np.ndarray  # float64[M, N]
    packets: int
    packet_sizes: np.ndarray  # int64[packets]
    packet_messages: np.ndarray  # int64[packets] messages per packet
    queue_wait: np.ndarray  # float64[packets]
    max_pending: np.ndarray  # int64[N] per node, maximum number of received undelivered messages
    duplicate_receptions: int
    log_kind: np.ndarray  # int8: LOG_BROADCAST or LOG_DELIVER
    log_node: np.ndarray  # int64
    log_msg: np.ndarray  # int64
    events: int


@numba.njit(cache=True)
def _message_size(payload, entries):
    return payload + SOURCE_ID_BYTES + ENTRY_BYTES * entries


@numba.njit(cache=True)
def _check_from(i, x, pos, n, vc, src, seq, dep_ptr, dep_src, dep_cnt, w_head, w_msg, w_pos, w_next):
    """Is x deliverable at i?  If not, park it on the first unmet vector entry."""
    s = src[x]
    if pos < 0:
        if vc[i, s] < seq[x] - 1:
            _park(i * n + s, x, -1, w_head, w_msg, w_pos, w_next)
            return False
        pos = 0
    for k in range(dep_ptr[x] + pos, dep_ptr[x + 1]):
        l = dep_src[k]
        if vc[i, l] < dep_cnt[k]:
            _park(i * n + l, x, k - dep_ptr[x], w_head, w_msg, w_pos, w_next)
            return False
    return True


@numba.njit(cache=True)
def _park(slot, x, pos, w_head, w_msg, w_pos, w_next):
    w_msg.append(x)
    w_pos.append(pos)
    w_next.append(w_head[slot])
    w_head[slot] = len(w_msg) - 1


@numba.njit(cache=True)
def _simulate(d, times, sources, payload, header, net, net_state):
    n = 1 << d
    m_total = len(times)
    vc = np.zeros((n, n), np.int32)  # delivered counts per node and source
    changed = np.zeros((n, n), np.bool_)  # entries changed since the node's last broadcast
    n_changed = np.zeros(n, np.int64)
    seq = np.zeros(m_total, np.int64)
    entries = np.zeros(m_total, np.int64)
    dep_ptr = np.zeros(m_total + 1, np.int64)
    dep_src = List.empty_list(np.int64)
    dep_cnt = List.empty_list(np.int64)
    recv_time = np.full((m_total, n), np.nan)
    deliv_time = np.full((m_total, n), np.nan)
    pending = np.zeros(n, np.int64)
    max_pending = np.zeros(n, np.int64)
    duplicates = 0
    # packets: messages pkt_msgs[pkt_first[p] : pkt_first[p] + pkt_len[p]]
    pkt_sender = List.empty_list(np.int64)
    pkt_first = List.empty_list(np.int64)
    pkt_len = List.empty_list(np.int64)
    pkt_msgs = List.empty_list(np.int64)
    pkt_size = List.empty_list(np.int64)
    pkt_wait = List.empty_list(np.float64)
    # waiters: blocked messages parked per (node, source) as linked lists
    w_head = np.full(n * n, -1, np.int64)
    w_msg = List.empty_list(np.int64)
    w_pos = List.empty_list(np.int64)
    w_next = List.empty_list(np.int64)
    # event log for the oracle
    log_kind = List.empty_list(np.int8)
    log_node = List.empty_list(np.int64)
    log_msg = List.empty_list(np.int64)
    stack = List.empty_list(np.int64)

    q = events.new_queue()
    for m in range(m_total):
        events.schedule(q, times[m], BROADCAST, m, 0)
    n_events = 0
    while not events.empty(q):
        now, kind, a, b = events.pop(q)
        n_events += 1
        if kind == BROADCAST:
            m = a
            i = sources[m]
            # the message's causal past: every non-zero entry of the source's vector clock
            vc[i, i] += 1
            seq[m] = vc[i, i]
            for l in range(n):
                if l != i and vc[i, l] > 0:
                    dep_src.append(l)
                    dep_cnt.append(vc[i, l])
            dep_ptr[m + 1] = len(dep_src)
            entries[m] = 1 + n_changed[i]  # Birman: entries changed since i's last broadcast
            for l in range(n):
                changed[i, l] = False
            n_changed[i] = 0
            deliv_time[m, i] = now
            log_kind.append(np.int8(LOG_BROADCAST))
            log_node.append(i)
            log_msg.append(m)
            size = header + _message_size(payload, entries[m])
            for u in range(d):
                _send_one(net, net_state, q, now, i, i ^ (1 << u), m, size,
                          pkt_sender, pkt_first, pkt_len, pkt_msgs, pkt_size, pkt_wait)
        else:
            p = a
            i = b
            j = pkt_sender[p]
            for k in range(pkt_first[p], pkt_first[p] + pkt_len[p]):
                m = pkt_msgs[k]
                if not np.isnan(recv_time[m, i]):
                    duplicates += 1
                    continue
                recv_time[m, i] = now
                pending[i] += 1
                size = header + _message_size(payload, entries[m])
                for u in range(topology.children_after(i, j)):
                    _send_one(net, net_state, q, now, i, i ^ (1 << u), m, size,
                              pkt_sender, pkt_first, pkt_len, pkt_msgs, pkt_size, pkt_wait)
                if _check_from(i, m, -1, n, vc, sources, seq, dep_ptr, dep_src, dep_cnt,
                               w_head, w_msg, w_pos, w_next):
                    stack.append(m)
                # deliver m and every message it unblocks, transitively
                while len(stack) > 0:
                    x = stack.pop()
                    s = sources[x]
                    vc[i, s] += 1
                    if not changed[i, s]:
                        changed[i, s] = True
                        n_changed[i] += 1
                    pending[i] -= 1
                    deliv_time[x, i] = now
                    log_kind.append(np.int8(LOG_DELIVER))
                    log_node.append(i)
                    log_msg.append(x)
                    slot = i * n + s
                    w = w_head[slot]
                    w_head[slot] = -1
                    while w != -1:
                        nxt = w_next[w]
                        if _check_from(i, w_msg[w], w_pos[w], n, vc, sources, seq, dep_ptr,
                                       dep_src, dep_cnt, w_head, w_msg, w_pos, w_next):
                            stack.append(w_msg[w])
                        w = nxt
            if pending[i] > max_pending[i]:
                max_pending[i] = pending[i]
    i64 = np.empty(0, np.int64)
    return (entries, recv_time, deliv_time, to_array(pkt_len, i64), to_array(pkt_size, i64),
            to_array(pkt_wait, np.empty(0, np.float64)), max_pending, duplicates,
            to_array(log_kind, np.empty(0, np.int8)), to_array(log_node, i64),
            to_array(log_msg, i64), n_events)


@numba.njit(cache=True)
def _send_one(net, net_state, q, now, sender, receiver, m, size,
              pkt_sender, pkt_first, pkt_len, pkt_msgs, pkt_size, pkt_wait):
    """Send the one-message packet [m]."""
    p = len(pkt_first)
    pkt_sender.append(sender)
    pkt_first.append(len(pkt_msgs))
    pkt_len.append(1)
    pkt_msgs.append(m)
    pkt_size.append(size)
    arrival, wait = network.send(net, net_state, sender, now)
    pkt_wait.append(wait)
    events.schedule(q, arrival, ARRIVAL, p, receiver)


def simulate(
    d: int,
    window: float = 500.0,
    sources: str = "permutation",
    payload: int = 50,
    net: network.Network | None = None,
    seed: np.random.SeedSequence | None = None,
) -> Run:
    """One run in which every node broadcasts once (spec §3.4); see the module docstring."""
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    net = net or network.Network()
    seed = seed if seed is not None else np.random.SeedSequence(0)
    n = 1 << d
    times, who = workload.one_shot(n, window, sources, seed)
    out = _simulate(d, times, who, payload, net.header, net.params(seed), network.new_state(n))
    (entries, recv_time, deliv_time, pkt_len, pkt_size, pkt_wait, max_pending,
     duplicates, log_kind, log_node, log_msg, n_events) = out
    return Run(
        n_nodes=n,
        sources=who,
        times=times,
        entries=entries,
        recv_time=recv_time,
        deliv_time=deliv_time,
        packets=len(pkt_len),
        packet_sizes=pkt_size,
        packet_messages=pkt_len,
        queue_wait=pkt_wait,
        max_pending=max_pending,
        duplicate_receptions=int(duplicates),
        log_kind=log_kind,
        log_node=log_node,
        log_msg=log_msg,
        events=int(n_events),
    )
