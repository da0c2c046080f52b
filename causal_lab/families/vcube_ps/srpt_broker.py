"""Broker-based single-root-per-topic Pub/Sub, SRPT-B (thesis §5.6.7, Figure 5.12; spec §4.3, E8).

The thesis only sketches SRPT-B ("trees composed by brokers, subscribers directly connected to
brokers, each broker sends the message to its subscribers"); the construction below is spec §4.3,
which resolves the missing details (ambiguity A16):

* Nodes ``0 .. B-1`` are the brokers; they form their own VCube of dimension ``log2 B`` (the
  broker's node id is its logical id).  Nodes ``B .. N-1`` are subscribers: subscriber number
  ``k = node - B`` is attached to broker ``k mod B``, which spreads them evenly (127, 15 and 1 per
  broker for B = 32, 256, 2048 at N = 4096, as §5.6.7 states).
* One topic, whose tree is the full binomial VCube tree over all B brokers rooted at a random
  broker ``r``.  Every broker has subscribers, so there is no relay (§5.6.7).
* A publication travels ``publisher -> r`` (one copy through the publisher's own sending queue,
  the same extra hop as SRPT-S), then down the broker tree; every broker, ``r`` included, sends
  one copy to each attached subscriber.  The publisher is among them: a broker does not filter
  the echo (it costs a B-S copy; it is excluded from latency, spec A26).  The spec's variant
  ``publisher -> own broker -> r`` is not implemented: it makes SRPT-B(2048) slower than SRPT-S,
  against §5.6.7.
* Each broker has two FIFO sending queues, each ``t_send`` per copy: one for tree copies, one for
  broker->subscriber (B-S) copies.  With a single shared queue the B-S backlog of a broker would
  delay its tree copies and Tree would *grow* when brokers get fewer, the opposite of §5.6.7
  (spec §4.3: Tree = 2668 u.t. at B = 32 with one queue).  A publisher's delegation copy goes
  through its own (tree-side) queue.  No ACKs.

Latency of a publication m at a subscriber x that is not its publisher (the two stacked parts of
Figure 5.12): Tree = arrival of m at x's broker - publish time; B-S = arrival at x - arrival at
x's broker.  With constant ``t_pp`` every queue and link is FIFO and ``r`` serialises the topic,
so every subscriber receives the messages exactly once and in the order ``r`` broadcast them;
``Run.delivery_order`` and ``Run.root_order`` let tests check that instead of assuming it, and
the event log lets the oracle check causal order.

The workload (``workload.broker_publications``) draws from the streams ``"publishers"`` (the P
publishers, among the N - B subscribers here), ``"publication_times"`` and ``"srpt_root"`` (the
root broker) of the replication's seed, as the paired VCube-PS and SRPT-S runs do (spec §5.0); the
kernel draws only the network's ``"t_pp"`` streams (used when ``t_pp`` has jitter).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle
from causal_lab.engine import events, network, rng, state
from causal_lab.engine.jit import njit
from causal_lab.engine.run import Run as BaseRun
from causal_lab.families.vcube_ps import kernel
from causal_lab.topology import vcube as topology

PUBLISH = 0
AT_BROKER = 1
AT_SUBSCRIBER = 2


@dataclasses.dataclass
class Workload:
    """An SRPT-B workload: publication ``m`` by node ``sources[m]`` at ``times[m]``, the layout
    (``brokers`` of ``n_nodes``) and the root broker (built by ``workload.broker_publications``,
    or by hand in tests)."""

    n_nodes: int
    brokers: int
    root: int
    times: np.ndarray  # float64[M], sorted
    sources: np.ndarray  # int64[M], subscribers (node ids >= brokers)

    def __post_init__(self):
        check_layout(self.n_nodes, self.brokers)
        if not 0 <= self.root < self.brokers:
            raise ValueError(f"root must be a broker id in [0, {self.brokers}), got {self.root}")
        self.times = np.asarray(self.times, np.float64)
        self.sources = np.asarray(self.sources, np.int64)
        if self.times.ndim != 1 or self.times.shape != self.sources.shape or len(self.times) == 0:
            raise ValueError("times and sources must be non-empty 1-d arrays of the same length")
        if not (np.isfinite(self.times).all() and (self.times >= 0).all()):
            raise ValueError("publication times must be finite and >= 0")
        if ((self.sources < self.brokers) | (self.sources >= self.n_nodes)).any():
            raise ValueError(f"publishers must be subscribers, i.e. node ids in "
                             f"[{self.brokers}, {self.n_nodes})")


@dataclasses.dataclass
class Run(BaseRun):
    """One SRPT-B run.  Message ids are indexes into ``times``; subscriber k is node B + k.

    The event log holds each publication (its publisher's own delivery) and every reception at
    a subscriber other than the publisher, which is its delivery: the root serialises the topic
    and every queue and link is FIFO, which the oracle then confirms rather than assumes."""

    brokers: int
    root: int  # the root broker r
    times: np.ndarray  # float64[M] publish instants
    sources: np.ndarray  # int64[M] publisher node ids (always subscribers)
    broker_arrival: np.ndarray  # float64[M, B] arrival of each message at each broker
    subscriber_arrival: np.ndarray  # float64[M, N - B] arrival at each subscriber (echo included)
    root_order: np.ndarray  # int64[M] message ids in the order r broadcast them
    delivery_order: np.ndarray  # int64[N - B, M] message ids in each subscriber's arrival order
    received: np.ndarray  # int64[N - B] copies received by each subscriber
    delegation_copies: int  # publisher -> r
    tree_copies: int  # broker -> broker
    bs_copies: int  # broker -> subscriber
    tree_wait_mean: float  # mean time a copy waited in a tree-side queue (delegations included)
    bs_wait_mean: float  # mean time a copy waited in a B-S queue

    def oracle_report(self, per_delivery: bool = False) -> oracle.Report:
        """Brokers relay but do not deliver: only the N - B subscribers owe every message."""
        entitled = np.zeros((len(self.times), self.n_nodes), bool)
        entitled[:, self.brokers:] = True
        return oracle.check(self.n_nodes, self.log_kind, self.log_node, self.log_msg,
                            entitled=entitled, per_delivery=per_delivery)

    def invariants(self, report) -> list[str]:
        """Every subscriber receives every message once, in the order the root broadcast them."""
        problems = super().invariants(report)
        if (self.received != len(self.times)).any():
            problems.append("a subscriber missed a message or received one twice")
        if not (self.delivery_order == self.root_order[None, :]).all():
            problems.append("a subscriber received the messages out of the root's order")
        return problems

    @property
    def broker_of(self) -> np.ndarray:
        """int64[N - B]: the broker of each subscriber."""
        return np.arange(self.n_nodes - self.brokers) % self.brokers

    def _latencies(self) -> tuple[np.ndarray, np.ndarray]:
        """Tree and B-S latency of every (message, subscriber != publisher) pair, flattened."""
        at_broker = self.broker_arrival[:, self.broker_of]
        others = np.ones(at_broker.shape, bool)
        others[np.arange(len(self.times)), self.sources - self.brokers] = False
        tree = (at_broker - self.times[:, None])[others]
        bs = (self.subscriber_arrival - at_broker)[others]
        return tree, bs

    @property
    def tree_latency(self) -> np.ndarray:
        return self._latencies()[0]

    @property
    def bs_latency(self) -> np.ndarray:
        return self._latencies()[1]

    @property
    def tree_mean(self) -> float:
        return float(self.tree_latency.mean())

    @property
    def bs_mean(self) -> float:
        return float(self.bs_latency.mean())

    @property
    def total_mean(self) -> float:
        """Mean reception latency (spec A17: a mean over pairs), = tree_mean + bs_mean."""
        tree, bs = self._latencies()
        return float((tree + bs).mean())


@njit
def _run(times, sources, brokers, dim, root, p_tree, s_tree, p_bs, s_bs,
         broker_arrival, subscriber_arrival, root_order, delivery_order, received, counters, waits,
         log):
    """The event loop: one event per publication and per transmitted copy (spec §3.2, §7).

    ``counters`` = [delegation, tree, B-S copies, events, log entries]; ``waits`` = summed queue
    waits [tree side, B-S]; ``log`` the event log table (large enough for every entry).  Copies leave a node in the order they are enqueued, so a broker's
    children get the message in ascending cluster order and its subscribers in ascending k.
    """
    n_subscribers = subscriber_arrival.shape[1]
    q = events.new_queue()
    events.feed(q, times, PUBLISH, sources)
    n_root = 0
    while not events.empty(q):
        now, kind, m, x = events.pop(q)
        counters[3] += 1
        if kind == PUBLISH:
            _log(log, counters, oracle.BROADCAST, x, m)
            arrival, wait = network.send(p_tree, s_tree, x, now)
            counters[0] += 1
            waits[0] += wait
            events.schedule(q, arrival, AT_BROKER, m, root)
        elif kind == AT_BROKER:
            broker_arrival[m, x] = now
            if x == root:
                root_order[n_root] = m
                n_root += 1
            for c in range(topology.n_tree_children(x, root, dim)):
                arrival, wait = network.send(p_tree, s_tree, x, now)
                counters[1] += 1
                waits[0] += wait
                events.schedule(q, arrival, AT_BROKER, m, topology.tree_child(x, root, c))
            for k in range(x, n_subscribers, brokers):
                arrival, wait = network.send(p_bs, s_bs, x, now)
                counters[2] += 1
                waits[1] += wait
                events.schedule(q, arrival, AT_SUBSCRIBER, m, k)
        else:
            subscriber_arrival[m, x] = now
            if brokers + x != sources[m]:  # the echo of a publisher's own message is no delivery
                _log(log, counters, oracle.DELIVER, brokers + x, m)
            if received[x] < delivery_order.shape[1]:
                delivery_order[x, received[x]] = m
            received[x] += 1


@njit
def _log(log, counters, kind, node, m):
    k = counters[4]
    log[k, state.LOG_KIND] = kind
    log[k, state.LOG_NODE] = node
    log[k, state.LOG_MSG] = m
    counters[4] = k + 1


def check_layout(n_nodes: int, brokers: int) -> None:
    if brokers < 1 or brokers & (brokers - 1):
        raise ValueError(f"brokers must be a power of two >= 1 (they form a VCube), got {brokers}")
    if brokers >= n_nodes:
        raise ValueError(f"need brokers < n_nodes so that there are subscribers, got "
                         f"brokers={brokers}, n_nodes={n_nodes}")


def simulate(workload: Workload, *, net: network.Network | None = None,
             seed: np.random.SeedSequence | None = None) -> Run:
    """One SRPT-B run of ``workload`` (the kernel contract of ``causal_lab.engine.run``).

    ``seed`` only keys the propagation delays (none are random with a constant ``t_pp``)."""
    w = workload
    net = net or kernel.thesis_network()
    seed = seed if seed is not None else np.random.SeedSequence(0)
    m, s = len(w.times), w.n_nodes - w.brokers
    broker_arrival = np.full((m, w.brokers), np.nan)
    subscriber_arrival = np.full((m, s), np.nan)
    root_order = np.full(m, -1, np.int64)
    delivery_order = np.full((s, m), -1, np.int64)
    received = np.zeros(s, np.int64)
    counters = np.zeros(5, np.int64)
    waits = np.zeros(2, np.float64)
    log = state.new_log(m * s)  # a publication and its receptions at the other subscribers
    _run(w.times, w.sources, w.brokers, w.brokers.bit_length() - 1, w.root,
         net.params(seed), network.new_state(w.n_nodes),
         # its own delay stream, so that with jitter a broker's B-S and tree copies are independent
         net.params(rng.child(seed, "broker_subscriber")), network.new_state(w.brokers),
         broker_arrival, subscriber_arrival, root_order, delivery_order, received, counters, waits,
         log)
    log_kind, log_node, log_msg = state.log_arrays(log, counters[4])
    return Run(
        n_nodes=w.n_nodes, log_kind=log_kind, log_node=log_node, log_msg=log_msg,
        events=int(counters[3]), brokers=w.brokers, root=w.root, times=w.times,
        sources=w.sources, broker_arrival=broker_arrival, subscriber_arrival=subscriber_arrival,
        root_order=root_order, delivery_order=delivery_order, received=received,
        delegation_copies=int(counters[0]), tree_copies=int(counters[1]),
        bs_copies=int(counters[2]),
        tree_wait_mean=float(waits[0] / max(counters[0] + counters[1], 1)),
        bs_wait_mean=float(waits[1] / max(counters[2], 1)),
    )
