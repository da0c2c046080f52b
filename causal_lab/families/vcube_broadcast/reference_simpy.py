"""A small SimPy reference model of causal broadcast over VCube trees (NO_AGG variant).

Why this module exists.  The kernel (``causal_lab.families.vcube_broadcast.kernel``) is fast because it is
clever: it runs inside numba, computes a packet's departure the moment the packet is queued
(no departure events), and delivers with per-entry waiting lists instead of rescanning.  This
module is the opposite: the same network and protocol written the way the texts describe
them, one SimPy process per packet, a real FIFO queue per node and the plain repeated
delivery scan.  ``tests/test_reference_simpy.py`` checks that both give *identical* reception
and delivery times, so the fast kernel can be trusted at N = 1024 where this one cannot run.

The delay model (spec vcube_causal_aggregation.md §3.2, ``causal_lab.network``).  A packet
that node i decides to send at time t

1. is processed for ``t_pc`` (not serialised: several packets can be in processing at once);
2. joins node i's single FIFO sending queue, shared by all destinations;
3. occupies the queue's server for ``t_t`` (whatever its size), then leaves it;
4. travels for ``t_pp``; the k-th packet node i *decides* to send gets the propagation delay
   ``network.propagation(params, i, k)``, the same counter-based draw the fast kernel uses;
5. is handled by the receiver at the instant it arrives (handling takes no time).

The protocol (spec §2.2-2.3, NO_AGG, one broadcast per scheduled instant).

* Broadcast by i: ``VC[i] += 1``; the message carries a copy of i's vector clock; i delivers it
  at once and sends one copy to each child in its own tree, i ^ 1, i ^ 2, ..., i ^ 2^(d-1).
* Reception at i from its parent j: record the reception time, forward the message at once to
  i's children in that tree (i ^ 2^u for u < CLUSTER(j, i) - 1, ascending; they depend only on
  j, see ``topology.children_after``), then deliver every pending message x with
  ``x.vc[x.s] == VC[x.s] + 1`` and ``x.vc[l] <= VC[l]`` for every other l, rescanning until a
  pass delivers nothing.

Ties.  Events of equal time are handled in a fixed order: broadcasts first (in schedule
order), then packet arrivals in the order the packets were decided, as in the fast kernel.  The
class ``Arrival`` explains why this needs one line more than a plain ``env.timeout``.

Where to read the code: ``Node.broadcast`` and ``Node.on_packet`` (the protocol),
``Node.send`` and ``Node._transmit`` (the network), ``simulate`` (the workload and the run).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import simpy

from causal_lab.engine import network
from causal_lab.families.vcube_broadcast.kernel import ENTRY_BYTES, SOURCE_ID_BYTES, Schedule
from causal_lab.topology import vcube as topology

TIE_ORDERS = ("decision", "departure")
ARRIVAL_PRIORITY = 2  # arrivals come after SimPy's URGENT (0) and NORMAL (1) events


@dataclasses.dataclass
class Message:
    """A broadcast message; ``vc`` is the source's vector clock right after its increment."""

    id: int  # index in the broadcast schedule
    source: int
    vc: list[int]
    size: int  # bytes, Birman accounting (spec §3.3); only reported, never used by the logic

    @property
    def seq(self) -> int:
        """Sequence number of the message among its source's broadcasts (1, 2, ...)."""
        return self.vc[self.source]


@dataclasses.dataclass
class ReferenceRun:
    """What one run produced; arrays indexed like ``vcube_broadcast.Run``."""

    n_nodes: int
    sources: np.ndarray  # int64[M]
    times: np.ndarray  # float64[M] broadcast instants
    entries: np.ndarray  # int64[M] Birman-compressed vector-clock entries
    recv_time: np.ndarray  # float64[M, N], nan where not received (the source never receives)
    deliv_time: np.ndarray  # float64[M, N]
    packet_sizes: np.ndarray  # int64[packets], in the order packets were decided
    queue_wait: np.ndarray  # float64[packets], time spent waiting for the queue's server


class Simulation:
    """Shared state of one run: the SimPy environment, the delay parameters, the records."""

    def __init__(self, d: int, n_messages: int, payload: int, net: network.Network, seed,
                 tie_order: str):
        self.env = simpy.Environment()
        self.d = d
        self.n = 1 << d
        self.net = net
        self.params = net.params(seed)  # numbers only; ``network.propagation`` needs them
        self.payload = payload
        self.tie_order = tie_order
        self.recv_time = np.full((n_messages, self.n), np.nan)
        self.deliv_time = np.full((n_messages, self.n), np.nan)
        self.entries = np.zeros(n_messages, np.int64)
        # one entry per packet, indexed by packet id = order in which packets were decided
        self.packet_sizes: list[int] = []
        self.queue_wait: list[float] = []
        self.nodes = [Node(self, i) for i in range(self.n)]


class Node:
    """One process of the system: its vector clock, its pending messages, its sending queue."""

    def __init__(self, sim: Simulation, node_id: int):
        self.sim = sim
        self.id = node_id
        self.vc = [0] * sim.n  # VC[l]: messages from l delivered here
        self.pending: list[Message] = []  # received, not yet delivered, in reception order
        self.changed: set[int] = set()  # sources delivered since my last broadcast (Birman)
        self.queue = simpy.Resource(sim.env, capacity=1)  # the FIFO sending queue and its server
        self.decided = 0  # packets decided so far: the k of the next propagation delay

    # -- protocol -------------------------------------------------------------------------

    def broadcast(self, message_id: int):
        """Broadcast a new message: deliver it here, send one copy to each child of my tree."""
        sim = self.sim
        self.vc[self.id] += 1
        entries = 1 + len(self.changed)  # my own entry plus those changed since last time
        self.changed.clear()
        size = sim.net.header + sim.payload + SOURCE_ID_BYTES + ENTRY_BYTES * entries
        message = Message(message_id, self.id, list(self.vc), size)
        sim.entries[message_id] = entries
        sim.deliv_time[message_id, self.id] = sim.env.now
        # No delivery scan is needed here: nothing pending can depend on a message that did
        # not exist a moment ago.
        for u in range(sim.d):  # ascending cluster order: i ^ 1, i ^ 2, i ^ 4, ...
            self.send(message, self.id ^ (1 << u))

    def on_packet(self, message: Message, parent: int):
        """A one-message packet from my parent in the message's tree has just arrived."""
        sim = self.sim
        sim.recv_time[message.id, self.id] = sim.env.now
        # NO_AGG: forward at once, alone, to my children in this tree, before delivering.
        for u in range(topology.children_after(self.id, parent)):
            self.send(message, self.id ^ (1 << u))
        self.pending.append(message)
        self.deliver_what_we_can()

    def deliverable(self, x: Message) -> bool:
        """The causal delivery condition of spec §2.2 (CHECKDELIVERY)."""
        if x.seq != self.vc[x.source] + 1:
            return False  # not the next message of its source
        return all(x.vc[l] <= self.vc[l] for l in range(self.sim.n) if l != x.source)

    def deliver_what_we_can(self):
        """Repeat full scans of the pending messages until a pass delivers nothing."""
        delivered_something = True
        while delivered_something:
            delivered_something = False
            for x in list(self.pending):
                if self.deliverable(x):
                    self.pending.remove(x)
                    self.vc[x.source] += 1
                    self.changed.add(x.source)
                    self.sim.deliv_time[x.id, self.id] = self.sim.env.now
                    delivered_something = True

    # -- network --------------------------------------------------------------------------

    def send(self, message: Message, receiver: int):
        """Decide now to send ``message`` to ``receiver``; the packet then lives on its own.

        The propagation delay is fixed here, at decision time: the k-th packet this node
        decides to send travels ``network.propagation(params, i, k)``, whatever happens later.
        """
        sim = self.sim
        t_pp = network.propagation(sim.params, self.id, self.decided)
        self.decided += 1
        packet_id = len(sim.packet_sizes)
        sim.packet_sizes.append(message.size)
        sim.queue_wait.append(np.nan)
        sim.env.process(self._transmit(packet_id, message, sim.nodes[receiver], t_pp))

    def _transmit(self, packet_id: int, message: Message, receiver: Node, t_pp: float):
        """One packet's life: processing, queueing, transmission, propagation, arrival."""
        sim = self.sim
        env = sim.env
        yield env.timeout(sim.net.t_pc)  # processing, before the queue (not serialised)
        ready = env.now
        with self.queue.request() as turn:  # FIFO: wait for the server to be free
            yield turn
            sim.queue_wait[packet_id] = env.now - ready
            yield env.timeout(sim.net.t_t)  # transmission: the server is busy meanwhile
        if sim.tie_order == "decision":
            yield Arrival(env, t_pp, rank=packet_id)  # propagation
        else:
            yield env.timeout(t_pp)  # propagation
        receiver.on_packet(message, self.id)


class Arrival(simpy.Event):
    """Like ``env.timeout(delay)``, but ranked by ``rank`` among arrivals of the same instant.

    Why it exists: ties.  SimPy processes events of equal time in the order they were
    *scheduled* (so does ``causal_lab.events``).  A plain ``env.timeout(t_pp)`` is scheduled
    when the packet leaves the queue, whereas the fast kernel, which knows the departure in
    advance, schedules the arrival when the packet *enters* the queue.  Two packets can
    reach the same node at the same instant when ``t_pp`` is constant (all delays are then
    the same few numbers added to the broadcast instants); the two rules may then handle
    them in different orders, the node fills its own queue in a different order, and later
    times differ (e.g. 15 of 20 seeds at N = 128 with the default t_pc = t_t = 1,
    t_pp = 100).  Neither rule is more physical than the other; ranking arrivals by the
    order in which the packets were decided (``rank``) is the kernel's rule.  It changes
    no event's time, only the order among equal times.  ``tie_order="departure"`` in
    ``simulate`` keeps SimPy's own order instead.

    The priority puts arrivals after SimPy's URGENT (0) and NORMAL (1) events of the same
    instant, so a broadcast at that instant comes first, as in the kernel (broadcasts are
    scheduled before any packet).  The two attributes set below are what ``Timeout`` sets.
    """

    def __init__(self, env: simpy.Environment, delay: float, rank: int):
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority=ARRIVAL_PRIORITY + rank, delay=delay)


def simulate(
    schedule: Schedule,
    *,
    net: network.Network | None = None,
    seed: np.random.SeedSequence | None = None,
    payload: int = 50,
    tie_order: str = "decision",
) -> ReferenceRun:
    """One run with the same inputs, and the same outputs, as the kernel's ``simulate``.

    ``tie_order`` orders packets arriving at the same instant: ``"decision"`` (the kernel's
    rule, see ``Arrival``) or ``"departure"`` (SimPy's natural order for a plain timeout).
    """
    d = schedule.d
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    if tie_order not in TIE_ORDERS:
        raise ValueError(f"tie_order must be one of {TIE_ORDERS}, got {tie_order!r}")
    net = net or network.Network()
    seed = seed if seed is not None else np.random.SeedSequence(0)
    n = 1 << d
    times, who = schedule.times, schedule.sources
    sim = Simulation(d, len(times), payload, net, seed, tie_order)

    def broadcaster(message_id: int):
        # timeout(t) from time 0 lands exactly on t (no rounding from chained differences)
        yield sim.env.timeout(times[message_id])
        sim.nodes[who[message_id]].broadcast(message_id)

    for m in range(len(times)):  # in schedule order, so equal instants keep schedule order
        sim.env.process(broadcaster(m))
    sim.env.run()  # until no event is left: everything delivered everywhere
    return ReferenceRun(
        n_nodes=n,
        sources=who,
        times=times,
        entries=sim.entries,
        recv_time=sim.recv_time,
        deliv_time=sim.deliv_time,
        packet_sizes=np.array(sim.packet_sizes, np.int64),
        queue_wait=np.array(sim.queue_wait, np.float64),
    )
