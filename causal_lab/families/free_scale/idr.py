"""The Immediate Dependency Relation protocol (Pomares Hernández et al., the paper's ref. [14];
spec §5.2) on the free-scale topology with the super peer (SP) transparent: the IDR baseline
of Figures 4-6 as a protocol of its own.

"The super peer in the system is considered transparent for the IDR implementation, and each
peer (internal and external) performs the full calculations of the IDR protocol ... A super peer
only retransmits the messages between groups" (paper §3.2).  Follow one message:

1. ``send`` at peer p: ``VT[p][p] += 1``; the message carries (p, VT[p][p], h), where h is p's
   control information ``CI`` (one (k, t) pair per immediate predecessor), and ``CI`` empties.
   An internal peer sends it to the SP; an external peer to every other external peer and the SP.
2. ``relay`` at the SP, on arrival, unchanged: an internal peer's message to the other internal
   peers and every external peer, an external peer's message to every internal peer.
3. ``receive`` at peer q: deliverable once ``t = VT[q][p] + 1`` (FIFO) and ``t_l <= VT[q][l]``
   for every (l, t_l) in h; else it is parked on the wake-up list of the entry it waits for
   (``buffers``).  ``deliver``: ``VT[q][p] = t``, every pair of h supersedes q's pair for the
   same process if not newer, and (p, t) becomes q's pair for p.

These are the integer branches of Listings 11-12 (``pairs``).  The paper ran IDR as a shadow of
its own protocol's deliveries (spec §5.2, A19); here IDR delivers by its own rule, so the oracle
checks its deliveries too.  The two runs of one replication share the workload and every hop's
delay (``channel``).  Bytes (spec §5.4): 8 + 8 per pair per message; storage 4 N + 8 per pair
of ``CI``, sampled after every delivery; latencies from the broadcast to every copy's arrival at
a peer and to every delivery (``Run.mean_reception_latency``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle
from causal_lab.engine import events, state
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.families.free_scale import accounting, broadcasts, buffers, channel, pairs
from causal_lab.families.free_scale.accounting import IDR_HEADER, INTEGER, PAIR, add
from causal_lab.families.free_scale.pairs import VT
from causal_lab.families.free_scale.workload import Schedule

# a wire message: application message, sender, its SN, its pairs (pool offset, count)
M_APP, M_SENDER, M_SN, M_OFF, M_N = range(5)
AT_PEER = 0
T_RECS, T_FREE_RECS, T_READY, T_LOG, T_PAIRS = range(
    broadcasts.FIRST_FREE_TOP, broadcasts.FIRST_FREE_TOP + 5)
N_TOPS = broadcasts.FIRST_FREE_TOP + 5
# acc[...]: (sum, count) pairs of the window: bytes, then the latencies (ms) of the messages
# broadcast in it
A_COMM, A_STOR, A_RECEPTION, A_DELIVERY = 0, 2, 4, 6
N_ACC = 8
C_EVENTS, C_BELOW = range(2)

FIELDS = (
    "n", "L", "start", "end", "channel", "app_src", "app_time",
    # per peer: VT and CI side by side (pairs.py), the size of CI
    "vc", "ci_n",
    # wire messages (one per application message) and their pairs
    "msgs", "pairs",
    "recs", "heads", "occupied", "ready", "parked", "server_free", "blk_time", "blk_dest",
    "blk_wire", "blk_n", "blk_free", "dests", "arrivals", "keys",
    "acc", "cnt", "log", "tops",
)
StateType, State = state.define("State", FIELDS, __name__)


def new_state(schedule: Schedule, net: channel.Channel) -> State:
    n = schedule.n_peers
    if n < 2 or n % 2:
        raise ValueError(f"n_peers must be even and >= 2 (peers split equally), got {n}")
    m = len(schedule.times)
    tops = np.zeros(N_TOPS, np.int64)
    tops[T_FREE_RECS] = -1
    return State.create(
        n=n, L=n // 2, start=schedule.window.start, end=schedule.window.end, channel=net,
        app_src=schedule.senders.astype(np.int64), app_time=schedule.times.astype(np.float64),
        vc=np.zeros((n, n, 2), pairs.entry_type(schedule.seqs)), ci_n=np.zeros(n, np.int64),
        msgs=np.zeros((max(m, 1), 5), np.int64), pairs=np.empty(1024, pairs.pool_type(schedule.seqs, n)),
        **buffers.new_fields(n * n, 1), **broadcasts.new_fields(n - 1, n + 1),
        acc=np.zeros(N_ACC), cnt=np.zeros(2, np.int64), log=state.new_log(max(m * n, 16)),
        tops=tops,
    )


@njit
def send(st, app, now):
    """Peer p sends application message ``app``: its SN and CI go out, CI empties."""
    p = st.app_src[app]
    vc = st.vc
    vc[p, p, VT] += 1
    top = st.tops[T_PAIRS]
    if top + 2 * st.ci_n[p] > len(st.pairs):
        st.pairs = state.grown(st.pairs, top + 2 * st.ci_n[p])
    n = pairs.ci_take(vc, st.ci_n, p, st.pairs, top)
    st.tops[T_PAIRS] = top + 2 * n
    msg = st.msgs[app]
    msg[M_APP] = app
    msg[M_SENDER] = p
    msg[M_SN] = vc[p, p, VT]
    msg[M_OFF] = top
    msg[M_N] = n
    add(st.acc, A_COMM, IDR_HEADER + PAIR * n, now, st.start, st.end)
    state.log(st, T_LOG, oracle.BROADCAST, p, app)


@njit
def receive(st, q, app, resume, now):
    """The IDR delivery condition at q: deliver, or park on the entry the message waits for."""
    msgs, vc = st.msgs, st.vc
    p, sn = msgs[app, M_SENDER], msgs[app, M_SN]
    if sn != vc[q, p, VT] + 1:
        buffers.park(st, T_RECS, T_FREE_RECS, q * st.n + p, app, AT_PEER, q, sn - 1, resume)
        return
    off, n = msgs[app, M_OFF], msgs[app, M_N]
    k = pairs.first_unmet(vc, q, st.pairs, off, n, resume, q)
    if k < n:
        i = st.pairs[off + 2 * k]
        buffers.park(st, T_RECS, T_FREE_RECS, q * st.n + i, app, AT_PEER, q, st.pairs[off + 2 * k + 1], k)
        return
    vc[q, p, VT] = sn
    st.cnt[C_BELOW] += pairs.ci_absorb(vc, st.ci_n, q, st.pairs, off, n)
    pairs.ci_put(vc, st.ci_n, q, p, sn)
    state.log(st, T_LOG, oracle.DELIVER, q, app)
    accounting.latency(st, A_DELIVERY, app, now)
    add(st.acc, A_STOR, INTEGER * st.n + PAIR * st.ci_n[q], now, st.start, st.end)
    buffers.wake_upto(st, T_READY, q * st.n + p, sn)


@njit
def _fan_out(st, q, app, sender, now):
    """Send message ``app`` on from ``sender`` (a peer, or the SP relaying it)."""
    dests, L, n = st.dests, st.L, st.n
    origin = st.app_src[app]
    count = 0
    if sender == origin and origin < L:  # internal peer: to the SP only
        dests[0] = n
        count = 1
    elif sender == origin:  # external peer: the other external peers and the SP
        for d in range(L, n):
            if d != origin:
                dests[count] = d
                count += 1
        dests[count] = n
        count += 1
    else:  # the SP relays an internal peer's message to every other peer, an external one's
        for d in range(n):  # to the internal group
            if d != origin and (origin < L or d < L):
                dests[count] = d
                count += 1
    broadcasts.send(st, q, app, app, sender, count, now)


@njit
def _run(st):
    q = events.new_queue()
    times = st.app_time
    i = 0
    m = len(times)
    while True:
        if i < m and (events.empty(q) or times[i] <= events.next_time(q)):
            now = times[i]
            send(st, i, now)
            _fan_out(st, q, i, st.app_src[i], now)
            i += 1
            continue
        if events.empty(q):
            return
        now, app, dest = broadcasts.next_arrival(st, q)
        st.cnt[C_EVENTS] += 1
        if dest == st.n:
            _fan_out(st, q, app, st.n, now)
            continue
        accounting.latency(st, A_RECEPTION, app, now)  # a peer gets one copy of a message, never its own
        receive(st, dest, app, 0, now)
        while True:
            app, _, node, resume = buffers.pop_ready(st, T_READY, T_FREE_RECS)
            if node < 0:
                break
            receive(st, node, app, resume, now)


@dataclasses.dataclass
class Run(BaseRun):
    """An IDR run: byte and latency sums of the window, and what was left buffered after the
    drain."""

    acc: np.ndarray
    counters: np.ndarray
    parked: int
    parked_max: int

    def metrics(self) -> dict:
        comm = accounting.mean(self.acc[A_COMM], self.acc[A_COMM + 1])
        return {**{f"comm_idr_{x}": accounting.headerless(comm, IDR_HEADER, x)
                   for x in accounting.ACCOUNTINGS},
                "stor_idr": accounting.mean(self.acc[A_STOR], self.acc[A_STOR + 1]),
                "messages_idr": int(self.acc[A_COMM + 1]),
                "samples_stor_idr": int(self.acc[A_STOR + 1]),
                "ci_removed_below": int(self.counters[C_BELOW]),
                "max_buffered_idr": self.parked_max}

    def mean_reception_latency(self) -> float:
        """Mean, over (message broadcast in the window, peer other than its sender), of the
        instant its copy reaches that peer (directly, or relayed unchanged by the SP) minus its
        broadcast instant, in ms; its copies at the SP are not receptions."""
        return accounting.mean(self.acc[A_RECEPTION], self.acc[A_RECEPTION + 1])

    def mean_delivery_latency(self) -> float:
        """Mean, over the deliveries of messages broadcast in the window, of the delivery instant
        minus the broadcast instant, in ms: the reception latency plus the wait in the buffers."""
        return accounting.mean(self.acc[A_DELIVERY], self.acc[A_DELIVERY + 1])

    def invariants(self, report: oracle.Report) -> list[str]:
        problems = super().invariants(report)
        if self.parked:
            problems.append(f"messages still buffered: {self.parked}")
        return problems


@njit
def _outputs(st):
    return st.log, st.tops[T_LOG], st.acc, st.cnt, st.parked[0, 0], st.parked[0, 1]


def simulate(schedule: Schedule, *, net: channel.Channel, seed: np.random.SeedSequence | None = None) -> Run:
    """Run ``schedule`` through IDR (kernel contract of ``causal_lab.engine.run``)."""
    st = new_state(schedule, net)
    _run(st)
    log, entries, acc, cnt, parked, parked_max = _outputs(st)
    kind, node, msg = state.log_arrays(log, entries)
    return Run(n_nodes=schedule.n_peers, log_kind=kind, log_node=node, log_msg=msg,
               events=int(cnt[C_EVENTS]), acc=acc.copy(), counters=cnt.copy(),
               parked=int(parked), parked_max=int(parked_max))
