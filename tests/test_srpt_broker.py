"""SRPT-B, the broker-based single-root baseline of thesis §5.6.7 (spec §4.3, E8)."""

import numpy as np
import pytest

from causal_lab.engine import network, rng
from causal_lab.engine.run import ProtocolViolation
from causal_lab.topology import vcube as topology
from causal_lab.families.vcube_ps import kernel as vp
from causal_lab.families.vcube_ps import srpt_broker as sb
from causal_lab.families.vcube_ps import workload as pubsub_workload



def by_hand(n_nodes, brokers, root, times, sources, **kw):
    """A run of a schedule placed by hand."""
    return sb.simulate(sb.Workload(n_nodes, brokers, root, times, sources), **kw)


def drawn(n_nodes=4096, brokers=256, publishers=128, messages=128, mean_interval=500.0, net=None,
          seed=None):
    """An E8 run with the workload drawn from the seed's streams, as the experiment does."""
    seed = seed if seed is not None else np.random.SeedSequence(0)
    w = pubsub_workload.broker_publications(n_nodes, brokers, publishers, messages, mean_interval,
                                            seed)
    return sb.simulate(w, net=net, seed=seed)

def test_one_message_by_hand_four_brokers():
    """N = 8, B = 4: subscriber node 4+k hangs on broker k; root broker 2, node 4 publishes at 0.

    Departure rule (spec §3.2): the k-th copy of an idle queue leaves k u.t. after the enqueue
    and arrives 100 later.  4 -> 2 arrives at 101.  Broker 2 sends to its tree children 3 then 0
    (tree queue: 202, 203) and to node 6 (its own B-S queue: 202, not delayed by tree copies).
    Broker 0 at 203 sends to broker 1 (304) and echoes to node 4 (304); broker 3 at 202 sends to
    node 7 (303); broker 1 at 304 sends to node 5 (405).
    """
    r = by_hand(8, 4, 2, [0.0], [4])
    np.testing.assert_array_equal(r.broker_arrival, [[203.0, 304.0, 101.0, 202.0]])
    np.testing.assert_array_equal(r.subscriber_arrival, [[304.0, 405.0, 202.0, 303.0]])
    # the publisher's echo (node 4 = subscriber 0) is excluded from latency
    np.testing.assert_array_equal(np.sort(r.tree_latency), [101.0, 202.0, 304.0])
    np.testing.assert_array_equal(r.bs_latency, [101.0, 101.0, 101.0])
    assert r.tree_mean == pytest.approx(607 / 3)
    assert r.total_mean == pytest.approx(607 / 3 + 101)
    assert (r.delegation_copies, r.tree_copies, r.bs_copies, r.events) == (1, 3, 4, 9)


def test_two_messages_by_hand_queues_are_fifo_and_separate():
    """N = 8, B = 2 (3 subscribers per broker), root 0; node 2 publishes at 0 and 0.5.

    The second delegation waits for the first in the publisher's queue (leaves at 2, arrives
    102).  At the root the tree copies to broker 1 leave at 102 and 103, while its B-S queue
    works through 3 + 3 copies (102..107), so broker 1 gets message 1 at 203 and its own B-S
    queue, still busy with message 0 until 205, lets message 1's copies leave at 206, 207, 208.
    """
    r = by_hand(8, 2, 0, [0.0, 0.5], [2, 2])
    np.testing.assert_array_equal(r.broker_arrival, [[101.0, 202.0], [102.0, 203.0]])
    np.testing.assert_array_equal(
        r.subscriber_arrival,
        [[202.0, 303.0, 203.0, 304.0, 204.0, 305.0], [205.0, 306.0, 206.0, 307.0, 207.0, 308.0]],
    )
    assert r.tree_wait_mean == pytest.approx(0.5 / 4)  # only the second delegation waited
    # each B-S queue: message 0 waits 0, 1, 2 before service, message 1 waits 2, 3, 4
    assert r.bs_wait_mean == pytest.approx(2 * (0 + 1 + 2 + 2 + 3 + 4) / 12)
    np.testing.assert_array_equal(r.root_order, [0, 1])
    np.testing.assert_array_equal(r.delivery_order, np.tile([0, 1], (6, 1)))


@pytest.mark.parametrize("brokers, root", [(16, 5), (32, 0), (64, 37)])
def test_broker_tree_is_the_vcube_tree_of_the_root(brokers, root):
    """One isolated message: each broker hears it one hop (its rank among the parent's
    children + 100) after its parent, along the binomial tree of ``topology.tree_edges``."""
    r = by_hand(2 * brokers, brokers, root, [0.0], [brokers + 3])
    edges = topology.tree_edges(root, brokers.bit_length() - 1)
    expected = {root: 101.0}
    frontier = [root]
    for parent in frontier:
        for rank, child in enumerate(edges.get(parent, [])):
            expected[child] = expected[parent] + rank + 1 + 100.0
            frontier.append(child)
    np.testing.assert_array_equal(r.broker_arrival[0], [expected[b] for b in range(brokers)])
    assert r.tree_copies == brokers - 1


def test_every_subscriber_gets_every_message_once_in_root_order():
    """Heavy contention (8 subscribers per broker, 64 messages in ~100 u.t.): still exactly once
    and in the order the root broadcast them, because the root serialises the topic and every
    queue and link is FIFO."""
    n, b, m = 144, 16, 64
    r = drawn(n_nodes=n, brokers=b, publishers=32, messages=m, mean_interval=50.0,
                    seed=np.random.SeedSequence(3))
    assert r.bs_wait_mean > 100  # the B-S queues really are congested
    np.testing.assert_array_equal(np.sort(r.root_order), np.arange(m))
    np.testing.assert_array_equal(r.received, np.full(n - b, m))
    np.testing.assert_array_equal(r.delivery_order, np.tile(r.root_order, (n - b, 1)))
    assert not np.isnan(r.broker_arrival).any() and not np.isnan(r.subscriber_arrival).any()
    # arrival times agree with the recorded order
    ordered = np.take_along_axis(r.subscriber_arrival.T, r.delivery_order, axis=1)
    assert (np.diff(ordered, axis=1) > 0).all()
    assert (r.delegation_copies, r.tree_copies, r.bs_copies) == (m, m * (b - 1), m * (n - b))
    assert r.events == m * (n + 1)  # publications + one arrival per copy
    assert (r.tree_latency > 0).all() and (r.bs_latency >= 101).all()
    report = r.verify()  # the oracle agrees: causal order, nothing missing at the subscribers
    assert report.deliveries == m * (n - b)  # publications + receptions at the others


def test_order_check_has_teeth_with_jittered_links():
    """With t_pp jitter links are not FIFO any more: copies still arrive exactly once, but some
    subscriber sees the messages out of the root's order (so the test above can fail)."""
    n, b, m = 144, 16, 64
    r = drawn(n_nodes=n, brokers=b, publishers=32, messages=m, mean_interval=50.0,
                    net=vp.thesis_network(tpp_sigma=25.0), seed=np.random.SeedSequence(3))
    np.testing.assert_array_equal(r.received, np.full(n - b, m))
    assert (np.sort(r.delivery_order, axis=1) == np.arange(m)).all()
    assert (r.delivery_order != r.root_order[None, :]).any()
    with pytest.raises(ProtocolViolation, match="root's order"):
        r.verify()


def test_deterministic_per_seed_and_streams_are_the_documented_ones():
    kw = dict(n_nodes=512, brokers=32, publishers=16, messages=32)
    a = drawn(**kw, seed=np.random.SeedSequence(7))
    b = drawn(**kw, seed=np.random.SeedSequence(7))
    c = drawn(**kw, seed=np.random.SeedSequence(8))
    for field in ("times", "sources", "broker_arrival", "subscriber_arrival", "delivery_order"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert a.root == b.root
    assert not np.array_equal(a.times, c.times)
    # paired experiments rebuild the same draws from the stream names
    seed = np.random.SeedSequence(7)
    times, sources = pubsub_workload.publication_schedule(seed, np.arange(32, 512), 16, 32, 500.0)
    np.testing.assert_array_equal(a.times, times)
    np.testing.assert_array_equal(a.sources, sources)
    assert a.root == rng.generator(seed, "srpt_root").integers(32)


def test_publication_schedule_is_the_first_epochs_of_poisson_publishers():
    seed = np.random.SeedSequence(1)
    candidates = np.arange(100, 4096)
    p, m, mean = 64, 6400, 500.0
    times, sources = pubsub_workload.publication_schedule(seed, candidates, p, m, mean, "poisson")
    assert (np.diff(times) >= 0).all() and times[0] > 0
    assert np.isin(sources, candidates).all()
    counts = np.unique(sources, return_counts=True)[1]
    assert len(counts) == p and counts.min() > 50 and counts.max() < 150  # ~100 each
    # superposition of P processes: rate P / mean, so m epochs span m * mean / P = 50,000 u.t.
    assert times[-1] == pytest.approx(m * mean / p, rel=0.05)
    for node in np.unique(sources)[:5]:
        gaps = np.diff(times[sources == node], prepend=0.0)
        assert gaps.mean() == pytest.approx(mean, rel=0.3)


def test_e8_trends_at_full_size():
    """Spec checks E8-1..E8-3 on one paired seed at N = 4096, P = 128 (0.3-0.4 s per run)."""
    runs = {b: drawn(brokers=b, seed=np.random.SeedSequence(0)) for b in (32, 256, 2048)}
    tree = {b: r.tree_mean for b, r in runs.items()}
    bs = {b: r.bs_mean for b, r in runs.items()}
    assert tree[32] < tree[256] < tree[2048]
    assert bs[32] > bs[256] > bs[2048] and bs[32] >= 5 * bs[256]
    # one subscriber per broker: a broker other than the root gets the messages from its parent's
    # FIFO queue, at least t_send apart, so its B-S copy never waits: B-S is one bare hop.  Only
    # the root, fed by independent publishers, can get two messages less than t_send apart.
    r = runs[2048]
    hop = r.subscriber_arrival - r.broker_arrival[:, r.broker_of]  # echoes included
    not_root = r.broker_of != r.root
    np.testing.assert_allclose(hop[:, not_root], 101.0, rtol=0, atol=1e-9)
    assert hop[:, ~not_root].max() > 101.0  # the root's B-S copies did queue in this run
    assert 101.0 <= bs[2048] < 101.1  # E8-3 accepts 100-110
    for b, r in runs.items():
        assert len(r.times) == 128 and (r.sources >= b).all()
        np.testing.assert_array_equal(r.received, np.full(4096 - b, 128))


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(brokers=3), "power of two"),
        (dict(brokers=0), "power of two"),
        (dict(n_nodes=256, brokers=256), "brokers < n_nodes"),
        (dict(n_nodes=64, brokers=32, publishers=33), "publishers"),
        (dict(publishers=0), "publishers"),
        (dict(messages=0), "messages"),
        (dict(mean_interval=0.0), "mean_interval"),
        (dict(mean_interval=float("nan")), "mean_interval"),
    ],
)
def test_broker_publications_reject_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        drawn(**kw)


@pytest.mark.parametrize(
    "args, match",
    [
        ((8, 4, 4, [0.0], [4]), "root"),
        ((8, 4, 0, [0.0], [3]), "publishers must be subscribers"),
        ((8, 4, 0, [0.0], [8]), "publishers must be subscribers"),
        ((8, 4, 0, [0.0, 1.0], [4]), "same length"),
        ((8, 4, 0, [], []), "non-empty"),
        ((8, 4, 0, [-1.0], [4]), ">= 0"),
        ((8, 6, 0, [0.0], [7]), "power of two"),
    ],
)
def test_workload_rejects_bad_schedules(args, match):
    with pytest.raises(ValueError, match=match):
        by_hand(*args)


def test_periodic_schedule_gives_each_of_128_publishers_one_publication():
    """Spec A16 amendment (E8): P publishers on a fixed period from a random phase, the global
    cap keeping the earliest; with P = messages every publisher publishes once, within the
    first period, as in the authors' simulator (a publisher waits 500 u.t. between messages)."""
    seed = np.random.SeedSequence(2)
    candidates = np.arange(4096)
    times, sources = pubsub_workload.publication_schedule(seed, candidates, 128, 128, 500.0)
    assert len(np.unique(sources)) == 128 and (np.diff(times) >= 0).all()
    assert times.min() >= 0 and times.max() < 500.0
    # fewer publishers: each publishes every 500 u.t. from its phase until the cap
    times, sources = pubsub_workload.publication_schedule(seed, candidates, 32, 128, 500.0)
    for node in np.unique(sources):
        mine = times[sources == node]
        assert len(mine) == 4 and mine[0] < 500.0
        np.testing.assert_allclose(np.diff(mine), 500.0)
    # the same publishers as the Poisson schedule of the same seed (paired sensitivity runs)
    _, poisson = pubsub_workload.publication_schedule(seed, candidates, 32, 128, 500.0, "poisson")
    assert set(np.unique(poisson)) == set(np.unique(sources))
    with pytest.raises(ValueError, match="schedule"):
        pubsub_workload.publication_schedule(seed, candidates, 32, 128, 500.0, "uniform")


def test_schedule_is_a_variant_that_keeps_the_poisson_seeds():
    """``schedule`` is a variant parameter of ``ps_brokers``: both schedules of a replication run
    on the same seed, the one the Poisson runs had before the periodic default existed."""
    from causal_lab import catalog, sweep
    e = catalog.get("ps_brokers")
    periodic, poisson = (e.points("default", {"system": ["vcube_ps"], "schedule": [s]})[0] for s in ("periodic", "poisson"))
    a, b = (sweep.task_seed(1, e, pt, 0) for pt in (periodic, poisson))
    assert a.entropy == b.entropy and a.spawn_key == b.spawn_key
    rows = {s: e.replicate({**periodic, "n_nodes": 256, "publishers": 16, "messages": 16, "schedule": s},
                           np.random.SeedSequence(5)) for s in ("periodic", "poisson")}
    assert rows["periodic"]["latency"] == pytest.approx(rows["periodic"]["latency_from_start"])
    assert rows["poisson"]["latency"] >= rows["poisson"]["latency_from_start"]
