"""Causal broadcast over VCube per-source trees without aggregation (seed 000 §5.1)."""

import numpy as np
import pytest

from causal_lab import oracle
from causal_lab.engine import network
from causal_lab.topology import vcube as topology
from causal_lab.families.vcube_broadcast import kernel as vb

# mean depth of a VCube tree times the per-hop floor t_pc + t_t + 100 (spec §4, Figure 7 floor)
FLOOR = {8: 174.9, 16: 217.6, 32: 263.2, 64: 310.9, 128: 359.9}


def run(d, seed=0, window=500.0, sources="permutation", **kw):
    seed = np.random.SeedSequence(seed)
    return vb.simulate(vb.Schedule.one_shot(d, window, sources, seed), seed=seed, **kw)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6, 7])
def test_packets_equal_n_times_n_minus_1_and_oracle_passes(d):
    r = run(d, seed=d)
    n = r.n_nodes
    assert r.packets == n * (n - 1)  # Table 1 "No aggr."
    assert r.packet_messages.sum() == n * (n - 1)  # invariant I2
    assert r.duplicate_receptions == 0
    received = ~np.isnan(r.recv_time)
    assert received.sum() == n * (n - 1)  # I1: every node but the source receives each message once
    assert not received[np.arange(n), r.sources].any()
    assert not np.isnan(r.deliv_time).any()  # I3: everybody delivered everything
    report = oracle.check(n, r.log_kind, r.log_node, r.log_msg)
    report.assert_ok()
    assert report.deliveries == n * n


@pytest.mark.parametrize("d", [3, 5])
def test_causal_order_by_vector_clocks_of_the_messages(d):
    """I4, checked here directly: if x happened before y, every node delivers x first."""
    r = run(d, seed=11, window=3000.0)  # broadcasts spread beyond one latency: related messages
    n = r.n_nodes
    # rebuild each message's causal past from the delivery times at its source
    before = r.deliv_time[:, r.sources] <= r.times[None, :]  # x delivered at src(y) before y
    np.fill_diagonal(before, False)
    assert before.any()
    for x, y in zip(*np.nonzero(before)):
        assert (r.deliv_time[x] <= r.deliv_time[y]).all()


def test_latency_respects_the_propagation_floor():
    for d in (3, 4, 5):
        latencies = []
        for seed in range(6):
            r = run(d, seed=seed)
            others = ~np.eye(r.n_nodes, dtype=bool)[r.sources]
            latencies.append((r.recv_time - r.times[:, None])[others])
            assert (r.deliv_time[others] >= r.recv_time[others]).all()
        assert np.concatenate(latencies).mean() >= 0.97 * FLOOR[1 << d]


def test_tree_hops_follow_vcube_trees():
    """Under constant delays and no queueing a message reaches depth k after k hops."""
    net = network.Network(t_pc=0.0, t_t=0.0, tpp="constant", tpp_mean=10.0)
    r = run(4, seed=1, net=net, window=1e6)  # broadcasts far apart: no queueing, no waiting
    for m, s in enumerate(r.sources):
        for i in range(r.n_nodes):
            if i != s:
                assert r.recv_time[m, i] - r.times[m] == pytest.approx(10.0 * topology.tree_depth(i, s))


def test_same_seed_same_run_and_different_seed_different_run():
    a, b, c = run(5, seed=4), run(5, seed=4), run(5, seed=5)
    assert np.array_equal(a.deliv_time, b.deliv_time, equal_nan=True)
    assert np.array_equal(a.log_msg, b.log_msg)
    assert not np.array_equal(a.deliv_time, c.deliv_time, equal_nan=True)


def test_birman_entries_count_sources_delivered_before_broadcasting():
    r = run(5, seed=2)
    for m, s in enumerate(r.sources):
        delivered_before = np.sum(r.deliv_time[:, s] < r.times[m]) - 0  # own message not yet
        assert r.entries[m] == 1 + delivered_before
    sizes = 20 + 50 + 2 + 4 * r.entries  # thesis accounting, one message per packet
    assert set(r.packet_sizes) <= set(sizes)


def test_with_replacement_sources_still_causal():
    r = run(5, seed=6, sources="with_replacement", window=200.0)
    assert len(set(r.sources)) < r.n_nodes  # someone broadcast twice
    oracle.check(r.n_nodes, r.log_kind, r.log_node, r.log_msg).assert_ok()


def test_oracle_catches_a_corrupted_delivery_order():
    """The check is not vacuous: postpone one delivery behind a message that depends on it."""
    r = run(4, seed=8, window=3000.0)
    kind, node, msg = r.log_kind.copy(), r.log_node.copy(), r.log_msg.copy()
    before = r.deliv_time[:, r.sources] < r.times[None, :]
    np.fill_diagonal(before, False)
    x, y = map(int, np.argwhere(before)[0])  # x happened before y
    q = next(q for q in range(r.n_nodes) if q not in (r.sources[x], r.sources[y]))
    kx = np.flatnonzero((kind == oracle.DELIVER) & (node == q) & (msg == x))[0]
    order = np.r_[np.delete(np.arange(len(msg)), kx), kx]  # x now delivered last at q
    report = oracle.check(r.n_nodes, kind[order], node[order], msg[order])
    assert report.errors >= 1 and report.missing == 0


def _link_delays(tpp_per, aggregate=False):
    """Per directed tree link (j, k): receive time at k minus send time at j of every message,
    with t_pc = t_t = 0 (no queueing), so each difference is one propagation delay."""
    net = network.Network(t_pc=0.0, t_t=0.0)
    r = run(4, seed=3, net=net, tpp_per=tpp_per, aggregate=aggregate)
    r.verify()
    per = {}
    for m, s in enumerate(r.sources):
        for k in range(r.n_nodes):
            if k != s:
                j = topology.tree_parent(k, s)
                sent = r.times[m] if j == s else r.recv_time[m, j]
                per.setdefault((j, k), []).append(r.recv_time[m, k] - sent)
    return per


def test_tpp_per_link_keeps_one_propagation_delay_per_link():
    """tpp_per = "link": every use of a directed link takes the same delay, and links differ;
    the default ("packet") redraws at every use (seed 000 §5.5)."""
    fixed, redrawn = _link_delays("link"), _link_delays("packet")
    assert len(fixed) == 16 * 4  # every directed hypercube edge is some tree's link
    assert max(np.ptp(v) for v in fixed.values()) < 1e-9
    assert np.std([v[0] for v in fixed.values()]) > 10  # Normal(100, 25) across links
    assert max(np.ptp(v) for v in redrawn.values()) > 10
    with pytest.raises(ValueError, match="tpp_per"):
        run(3, tpp_per="hop")


def test_tpp_per_link_is_causal_with_aggregation_and_keeps_the_schedule():
    a = run(6, seed=9, tpp_per="link", aggregate=True)
    b = run(6, seed=9, aggregate=True)
    a.verify()
    assert np.array_equal(a.times, b.times) and np.array_equal(a.sources, b.sources)
    assert not np.array_equal(a.recv_time, b.recv_time, equal_nan=True)


@pytest.mark.parametrize("d", [3, 4, 5])
def test_single_tree_excess_without_contention_is_the_closed_form(d):
    """Figure 1 (notebook 19): without queueing the fixed tree's mean reception latency exceeds
    the per-source trees' by (N - 1)/N - log2 N / (2(N - 1)) hops exactly."""
    from causal_lab.families.vcube_broadcast.artifacts import figure1

    net = network.Network(t_pc=0.0, t_t=0.0, tpp="constant", tpp_mean=10.0)
    mean = {}
    for trees in ("per_source", "single"):
        r = run(d, seed=2, net=net, window=1e6, trees=trees)
        others = ~np.eye(r.n_nodes, dtype=bool)[r.sources]
        mean[trees] = (r.recv_time - r.times[:, None])[others].mean()
    assert (mean["single"] - mean["per_source"]) / 10.0 == pytest.approx(figure1.no_contention_excess(1 << d))
