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
``Run.delivery_order`` and ``Run.root_order`` let tests check that instead of assuming it.

Random streams of ``seed`` (for paired runs with VCube-PS and SRPT-S, spec §5.0):
``"publishers"`` (the P publishers, among the N - B subscribers here), ``"publication_times"``
(Poisson epochs, see ``publication_schedule``), ``"srpt_root"`` (the root broker), and the
network's ``"t_pp"`` streams (only used when ``t_pp`` has jitter).
"""

from __future__ import annotations

import dataclasses
import math

import numba
import numpy as np

from causal_lab import events, network, rng, topology

PUBLISH = 0
AT_BROKER = 1
AT_SUBSCRIBER = 2


def publication_schedule(
    seed: np.random.SeedSequence,
    candidates: np.ndarray,
    publishers: int,
    messages: int,
    mean_interval: float,
) -> tuple[np.ndarray, np.ndarray]:
    """E8 workload: the ``messages`` earliest publications of ``publishers`` Poisson sources.

    ``publishers`` distinct nodes are drawn uniformly without replacement from ``candidates``
    (stream ``"publishers"``: ``Generator.choice``).  Each one publishes at the epochs of a Poisson
    process of mean inter-publication time ``mean_interval`` started at t = 0: row p of a
    ``(publishers, messages)`` matrix of exponential gaps (stream ``"publication_times"``), summed
    cumulatively.  A single publisher cannot contribute more than ``messages`` of the global
    first ``messages`` epochs, so that many gaps per publisher are enough, and the global cap
    (§5.6.7 "up to a limit of 128 messages") is the ``messages`` smallest epochs overall.
    Returns ``(times, sources)`` sorted by time; the index is the message id.

    VCube-PS and SRPT-S runs paired with SRPT-B call this with their own ``candidates`` (all N
    nodes there, the non-brokers here), so their publisher sets differ but come from the same
    streams.
    """
    who = rng.generator(seed, "publishers").choice(candidates, publishers, replace=False)
    times_rng = rng.generator(seed, "publication_times")
    gaps = times_rng.exponential(mean_interval, (publishers, messages))
    epochs = np.cumsum(gaps, axis=1).ravel()
    first = np.argsort(epochs, kind="stable")[:messages]
    return epochs[first].astype(np.float64), np.asarray(who)[first // messages].astype(np.int64)


@dataclasses.dataclass
class Run:
    """One SRPT-B run.  Message ids are indexes into ``times``; subscriber k is node B + k."""

    n_nodes: int
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
    events: int

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


@numba.njit(cache=True)
def _run(times, sources, brokers, dim, root, p_tree, s_tree, p_bs, s_bs,
         broker_arrival, subscriber_arrival, root_order, delivery_order, received, counters, waits):
    """The event loop: one event per publication and per transmitted copy (spec §3.2, §7).

    ``counters`` = [delegation, tree, B-S copies, events]; ``waits`` = summed queue waits
    [tree side, B-S].  Copies leave a node in the order they are enqueued, so a broker's
    children get the message in ascending cluster order and its subscribers in ascending k.
    """
    n_subscribers = subscriber_arrival.shape[1]
    q = events.new_queue()
    for m in range(len(times)):
        events.schedule(q, times[m], PUBLISH, m, sources[m])
    n_root = 0
    while not events.empty(q):
        now, kind, m, x = events.pop(q)
        counters[3] += 1
        if kind == PUBLISH:
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
            if received[x] < delivery_order.shape[1]:
                delivery_order[x, received[x]] = m
            received[x] += 1


def _check_layout(n_nodes: int, brokers: int) -> None:
    if brokers < 1 or brokers & (brokers - 1):
        raise ValueError(f"brokers must be a power of two >= 1 (they form a VCube), got {brokers}")
    if brokers >= n_nodes:
        raise ValueError(f"need brokers < n_nodes so that there are subscribers, got "
                         f"brokers={brokers}, n_nodes={n_nodes}")


def simulate_schedule(
    n_nodes: int,
    brokers: int,
    root: int,
    times: np.ndarray,
    sources: np.ndarray,
    net: network.Network | None = None,
    seed: np.random.SeedSequence | None = None,
) -> Run:
    """One SRPT-B run of a given workload: publication ``m`` by node ``sources[m]`` at ``times[m]``.

    Exposed so that tests can place the root and the publications by hand and paired
    experiments can feed their own draws; ``simulate`` draws them.  ``seed`` only keys the
    propagation delays (none are random with the default constant ``t_pp``).
    """
    _check_layout(n_nodes, brokers)
    if not 0 <= root < brokers:
        raise ValueError(f"root must be a broker id in [0, {brokers}), got {root}")
    times = np.asarray(times, np.float64)
    sources = np.asarray(sources, np.int64)
    if times.ndim != 1 or times.shape != sources.shape or len(times) == 0:
        raise ValueError("times and sources must be non-empty 1-d arrays of the same length")
    if not (np.isfinite(times).all() and (times >= 0).all()):
        raise ValueError("publication times must be finite and >= 0")
    if ((sources < brokers) | (sources >= n_nodes)).any():
        raise ValueError(f"publishers must be subscribers, i.e. node ids in [{brokers}, {n_nodes})")
    net = net or network.Network.vcube_ps()
    seed = seed if seed is not None else np.random.SeedSequence(0)
    m, s = len(times), n_nodes - brokers
    broker_arrival = np.full((m, brokers), np.nan)
    subscriber_arrival = np.full((m, s), np.nan)
    root_order = np.full(m, -1, np.int64)
    delivery_order = np.full((s, m), -1, np.int64)
    received = np.zeros(s, np.int64)
    counters = np.zeros(4, np.int64)
    waits = np.zeros(2, np.float64)
    _run(times, sources, brokers, brokers.bit_length() - 1, root,
         net.params(seed), network.new_state(n_nodes),
         # its own delay stream, so that with jitter a broker's B-S and tree copies are independent
         net.params(rng.child(seed, "broker_subscriber")), network.new_state(brokers),
         broker_arrival, subscriber_arrival, root_order, delivery_order, received, counters, waits)
    return Run(
        n_nodes=n_nodes, brokers=brokers, root=root, times=times, sources=sources,
        broker_arrival=broker_arrival, subscriber_arrival=subscriber_arrival,
        root_order=root_order, delivery_order=delivery_order, received=received,
        delegation_copies=int(counters[0]), tree_copies=int(counters[1]),
        bs_copies=int(counters[2]),
        tree_wait_mean=float(waits[0] / max(counters[0] + counters[1], 1)),
        bs_wait_mean=float(waits[1] / max(counters[2], 1)),
        events=int(counters[3]),
    )


def simulate(
    n_nodes: int = 4096,
    brokers: int = 256,
    publishers: int = 128,
    messages: int = 128,
    mean_interval: float = 500.0,
    net: network.Network | None = None,
    seed: np.random.SeedSequence | None = None,
) -> Run:
    """One E8 run (spec §5.9): P publishers among the non-brokers, ``messages`` publications.

    Defaults are the thesis setting (§5.6.7: N = 4096, 128 messages, one every 500 u.t. per
    publisher) with the spec's P = 128 (A16) and timing (t_send = 1, t_pp = 100 constant).
    """
    _check_layout(n_nodes, brokers)
    if not 1 <= publishers <= n_nodes - brokers:
        raise ValueError(f"publishers must be in [1, n_nodes - brokers = {n_nodes - brokers}] "
                         f"(publishers are subscribers), got {publishers}")
    if messages < 1:
        raise ValueError(f"messages must be >= 1, got {messages}")
    if not (math.isfinite(mean_interval) and mean_interval > 0):
        raise ValueError(f"mean_interval must be a finite number > 0, got {mean_interval!r}")
    seed = seed if seed is not None else np.random.SeedSequence(0)
    times, sources = publication_schedule(
        seed, np.arange(brokers, n_nodes), publishers, messages, mean_interval
    )
    root = int(rng.generator(seed, "srpt_root").integers(brokers))
    return simulate_schedule(n_nodes, brokers, root, times, sources, net, seed)
