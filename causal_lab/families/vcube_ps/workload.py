"""Workloads of the publish/subscribe experiments (thesis §5.6, vcube_ps spec §5).

Each function but the last returns a ``kernel.Workload``: the Algorithm 3 calls (PUBLISH, SUBSCRIBE,
UNSUBSCRIBE) with their instants, the membership installed at t = 0 (spec A7) and the SRPT root
of every topic.  Every draw comes from a named stream of the replication's seed (spec §8:
membership, publishers, publication_times, churn, topics, srpt_root), so VCube-PS and the
baselines of one replication see the same workload, and SRPT roots do not shift it.
``broker_publications`` returns the ``srpt_broker.Workload`` of the same E8 draws.
"""

from __future__ import annotations

import math

import numpy as np

from causal_lab.engine import rng, workload
from causal_lab.families.vcube_ps import kernel
from causal_lab.families.vcube_ps import srpt_broker

MS_PER_MINUTE = 60_000.0


def _roots(seed, n: int, n_topics: int) -> np.ndarray:
    """SRPT roots: uniform, distinct across topics (spec A11)."""
    return rng.generator(seed, "srpt_root").choice(n, n_topics, replace=False).astype(np.int64)


def _build(d, n_topics, times, ops, nodes, topics, initial, seed, react_p=0):
    order = np.argsort(np.asarray(times, np.float64), kind="stable")
    return kernel.Workload(
        d=d, n_topics=n_topics,
        times=np.asarray(times, np.float64)[order], ops=np.asarray(ops, np.int64)[order],
        nodes=np.asarray(nodes, np.int64)[order], topics=np.asarray(topics, np.int64)[order],
        initial=initial, roots=_roots(seed, 1 << d, n_topics), react_p=react_p,
    )


def _publications(d, n_topics, times, nodes, topics, initial, seed, react_p=0):
    k = len(times)
    return _build(d, n_topics, times, np.full(k, kernel.OP_PUBLISH), nodes, topics, initial,
                  seed, react_p)


def single_publisher(d: int, fraction: float, seed) -> kernel.Workload:
    """E1/E2 (Figures 5.6, 5.7): round(f N) random subscribers, one of them publishes at t = 0."""
    n = 1 << d
    count = max(1, round(fraction * n))
    members = rng.generator(seed, "membership").choice(n, count, replace=False)
    initial = np.zeros((1, n), bool)
    initial[0, members] = True
    publisher = rng.generator(seed, "publishers").choice(members)
    return _publications(d, 1, [0.0], [publisher], [0], initial, seed)


def many_publishers(d: int, fraction: float, window: float, seed) -> kernel.Workload:
    """E3/E4 (Figure 5.8, Table 5.1): everyone subscribes; round(f N) distinct publishers send
    one message each at a Uniform[0, window] instant."""
    n = 1 << d
    count = max(1, round(fraction * n))
    who = rng.generator(seed, "publishers").choice(n, count, replace=False)
    times = rng.generator(seed, "publication_times").uniform(0.0, window, count)
    return _publications(d, 1, times, who, np.zeros(count), np.ones((1, n), bool), seed)


def message_order(d: int, initial_publishers: int, seed) -> kernel.Workload:
    """E5 (Figure 5.9): p random nodes publish at t = 0; every other node publishes once, t_w
    ~ U{0..99} after its p-th delivery (the kernel's reactive rule, spec A13)."""
    n = 1 << d
    who = rng.generator(seed, "publishers").choice(n, initial_publishers, replace=False)
    k = len(who)
    return _publications(d, 1, np.zeros(k), who, np.zeros(k), np.ones((1, n), bool), seed,
                         react_p=initial_publishers)


def topics(d: int, n_topics: int, messages: int, distribution: str, period: float,
           zipf_s: float, seed) -> kernel.Workload:
    """E6 (Figure 5.10): everyone subscribes to every topic; each node publishes every
    ``period`` with a random phase (spec A14) until ``messages`` publications; each picks its
    topic uniformly or by the Zipf law (rank -> topic permutation fixed per run)."""
    n = 1 << d
    rounds = math.ceil(messages / n)
    phase = rng.generator(seed, "publication_times").uniform(0.0, period, n)
    times = (phase[None, :] + period * np.arange(rounds)[:, None]).ravel()
    nodes = np.tile(np.arange(n), rounds)
    first = np.argsort(times, kind="stable")[:messages]
    s = zipf_s if distribution == "zipf" else 0.0
    chosen = workload.zipf_topics(n_topics, s, messages, seed)
    return _publications(d, n_topics, times[first], nodes[first], chosen,
                         np.ones((n_topics, n), bool), seed)


def churn_rate(n_subscribers: int, t_med_minutes: float) -> float:
    """Swap events per minute for a t_med label (spec A6: rate = N_s ln 2 / t_med in seconds)."""
    return n_subscribers * math.log(2) / (t_med_minutes * 60.0)


def churn(d: int, n_subscribers: int, swaps_per_minute: float, minutes: float, period: float,
          seed) -> kernel.Workload:
    """E7 (Figure 5.11), 1 u.t. = 1 ms: N_s subscribers at t = 0; Poisson swap events (a random
    subscriber leaves and, at the same instant, a random non-subscriber joins, so N_s stays
    constant); a publication every ``period`` by a random current subscriber (spec A22)."""
    n = 1 << d
    if not 0 < n_subscribers < n:
        raise ValueError(f"need 0 < n_subscribers < N = {n}, got {n_subscribers}")
    horizon = minutes * MS_PER_MINUTE
    g = rng.generator(seed, "membership")
    members = g.permutation(n)  # members[:N_s] subscribe, the rest wait
    initial = np.zeros((1, n), bool)
    initial[0, members[:n_subscribers]] = True
    swaps = np.empty(0)
    if swaps_per_minute > 0:
        gaps = rng.generator(seed, "churn_times")
        mean_gap = MS_PER_MINUTE / swaps_per_minute
        count = int(horizon / mean_gap * 1.5) + 20
        swaps = np.cumsum(gaps.exponential(mean_gap, count))
        while swaps[-1] < horizon:
            swaps = np.concatenate([swaps, swaps[-1] + np.cumsum(gaps.exponential(mean_gap, count))])
        swaps = swaps[swaps < horizon]
    pubs = period * np.arange(1, int(horizon // period) + 1)
    pubs = pubs[pubs < horizon]
    pick_swap = rng.generator(seed, "churn")
    pick_pub = rng.generator(seed, "publishers")
    times, ops, nodes = [], [], []
    s_i, p_i = 0, 0
    while s_i < len(swaps) or p_i < len(pubs):
        if p_i >= len(pubs) or (s_i < len(swaps) and swaps[s_i] <= pubs[p_i]):
            t = swaps[s_i]
            s_i += 1
            leave = int(pick_swap.integers(n_subscribers))
            join = n_subscribers + int(pick_swap.integers(n - n_subscribers))
            leaver, joiner = members[leave], members[join]
            members[leave], members[join] = joiner, leaver
            times += [t, t]
            ops += [kernel.OP_UNSUBSCRIBE, kernel.OP_SUBSCRIBE]
            nodes += [leaver, joiner]
        else:
            t = pubs[p_i]
            p_i += 1
            times.append(t)
            ops.append(kernel.OP_PUBLISH)
            nodes.append(members[int(pick_pub.integers(n_subscribers))])
    return _build(d, 1, times, ops, nodes, np.zeros(len(times)), initial, seed)


SCHEDULES = ("periodic", "poisson")


def publication_schedule(
    seed: np.random.SeedSequence,
    candidates: np.ndarray,
    publishers: int,
    messages: int,
    mean_interval: float,
    schedule: str = "periodic",
) -> tuple[np.ndarray, np.ndarray]:
    """E8 workload: the ``messages`` earliest publications of ``publishers`` sources.

    ``publishers`` distinct nodes are drawn uniformly without replacement from ``candidates``
    (stream ``"publishers"``: ``Generator.choice``).  The global cap (§5.6.7 "up to a limit of
    128 messages") keeps the ``messages`` earliest publications overall.

    ``periodic`` (spec A16 amendment, the default): publisher p publishes at phase_p + k ·
    ``mean_interval``, k = 0, 1, ..., with phase_p ~ Uniform[0, mean_interval) (stream
    ``"publication_times"``), as E6 does (A14); with as many publishers as messages (P = 128)
    each publishes exactly once, within the first period, as in the authors' simulator (a
    publisher sends only when 500 u.t. have passed since its last message).

    ``poisson`` (the spec body's E8, a sensitivity option): each publisher publishes at the epochs
    of a Poisson process of mean inter-publication time ``mean_interval`` started at t = 0: row p
    of a ``(publishers, messages)`` matrix of exponential gaps (stream ``"publication_times"``),
    summed cumulatively.  A single publisher cannot contribute more than ``messages`` of the
    global first ``messages`` epochs, so that many gaps per publisher are enough.

    Returns ``(times, sources)`` sorted by time; the index is the message id.

    VCube-PS and SRPT-S runs paired with SRPT-B call this with their own ``candidates`` (all N
    nodes there, the non-brokers here), so their publisher sets differ but come from the same
    streams.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    who = rng.generator(seed, "publishers").choice(candidates, publishers, replace=False)
    times_rng = rng.generator(seed, "publication_times")
    if schedule == "periodic":
        rounds = math.ceil(messages / publishers)
        phase = times_rng.uniform(0.0, mean_interval, publishers)
        epochs = (phase[:, None] + mean_interval * np.arange(rounds)[None, :]).ravel()
    else:
        rounds = messages
        epochs = np.cumsum(times_rng.exponential(mean_interval, (publishers, messages)), axis=1).ravel()
    first = np.argsort(epochs, kind="stable")[:messages]
    return epochs[first].astype(np.float64), np.asarray(who)[first // rounds].astype(np.int64)


def broker_subscribers(d: int, publishers: int, messages: int, mean_interval: float, seed,
                       schedule: str = "periodic") -> kernel.Workload:
    """E8 (Figure 5.12) for VCube-PS and SRPT-S: everyone subscribes; the publications of
    ``publication_schedule`` (the same streams as the SRPT-B runs)."""
    n = 1 << d
    times, who = publication_schedule(seed, np.arange(n), publishers, messages, mean_interval, schedule)
    return _publications(d, 1, times, who, np.zeros(len(times)), np.ones((1, n), bool), seed)


def broker_publications(n_nodes: int, brokers: int, publishers: int, messages: int,
                        mean_interval: float, seed, schedule: str = "periodic") -> srpt_broker.Workload:
    """E8 for SRPT-B (spec §5.9): P publishers among the non-brokers, ``messages`` publications,
    a uniform root broker (stream ``"srpt_root"``)."""
    srpt_broker.check_layout(n_nodes, brokers)
    if not 1 <= publishers <= n_nodes - brokers:
        raise ValueError(f"publishers must be in [1, n_nodes - brokers = {n_nodes - brokers}] "
                         f"(publishers are subscribers), got {publishers}")
    if messages < 1:
        raise ValueError(f"messages must be >= 1, got {messages}")
    if not (math.isfinite(mean_interval) and mean_interval > 0):
        raise ValueError(f"mean_interval must be a finite number > 0, got {mean_interval!r}")
    times, sources = publication_schedule(seed, np.arange(brokers, n_nodes), publishers, messages,
                                          mean_interval, schedule)
    root = int(rng.generator(seed, "srpt_root").integers(brokers))
    return srpt_broker.Workload(n_nodes, brokers, root, times, sources)
