"""The free-scale family: bit vectors and byte sizes (spec §2.1, §5.4), Listing 14's literal
"Exit For", the channel and the workloads, random small runs of both protocols through the
causality oracle (spec §3.8), and their reception and delivery latencies."""

import math

import numba
import numpy as np
import pandas as pd
import pytest

from causal_lab import catalog, cross_family
from causal_lab.engine import events
from causal_lab.families.free_scale import (accounting, bitvec, channel, cross, experiments, idr, kernel,
                                            workload)
from causal_lab.families.free_scale.artifacts import overhead, scalability
from causal_lab.params import ParameterError
from causal_lab.sweep import task_seed


def _point(lo=0.0, hi=50.0, **extra):
    return dict(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=(lo + hi) / 2, tpp_sigma=(hi - lo) / 4,
                delay_min=lo, delay_max=hi, link_delay="per_message") | extra


# ------------------------------------------------------------------------------------------
# bit vectors and byte sizes
# ------------------------------------------------------------------------------------------


def _dep(positions, words=4):
    bm, lo, hi = np.zeros((1, words), np.uint64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    for x in positions:
        bitvec.dep_put(bm, lo, hi, 0, x)
    return bm, lo, hi


def test_dependency_vector_bytes_and_span():
    """Spec §11: bv_dep of bits {5, 12} = 4 + 1 bytes; empty = 0; position 0 is never stored."""
    bm, lo, hi = _dep([12, 5, 0])
    assert (lo[0], hi[0]) == (5, 12) and bitvec.dep_bytes(lo[0], hi[0]) == 5
    assert not bitvec.get(bm, 0, 0)
    assert bitvec.dep_bytes(0, 0) == 0
    bm, lo, hi = _dep([1, 200])
    assert bitvec.dep_bytes(lo[0], hi[0]) == 4 + 25  # 200 bits


def test_dependency_vector_clearing_refits_the_span():
    bm, lo, hi = _dep([3, 70, 130])
    bitvec.dep_drop(bm, lo, hi, 0, 3)
    assert (lo[0], hi[0]) == (70, 130)
    bitvec.dep_drop(bm, lo, hi, 0, 0)  # DV[Last] := 0 with Last = 0: a no-op
    bitvec.dep_drop(bm, lo, hi, 0, 130)
    assert (lo[0], hi[0]) == (70, 70)
    other, _, _ = _dep([70, 99])
    bitvec.dep_andnot(bm, lo, hi, 0, other[0], 0, 0, other.shape[1])
    assert (lo[0], hi[0]) == (0, 0) and not bm.any()


def test_receive_vector_keeps_first_cleared_to_last_set():
    """Spec §11: a pure prefix costs its 4-byte offset; bit 0 is always set."""
    bm, f0, l1 = np.zeros((1, 4), np.uint64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    bitvec.recv_init(bm, f0, 0)
    assert bitvec.get(bm, 0, 0) and f0[0] == 1
    for x in (1, 2, 3):
        bitvec.recv_put(bm, f0, l1, 0, x)
    assert (f0[0], l1[0], bitvec.recv_bytes(f0[0], l1[0])) == (4, 3, 4)
    bitvec.recv_put(bm, f0, l1, 0, 70)  # a ragged tail: positions 4..70 charged
    assert bitvec.recv_bytes(f0[0], l1[0]) == 4 + math.ceil(67 / 8)
    for x in range(4, 70):
        bitvec.recv_put(bm, f0, l1, 0, x)
    assert (f0[0], bitvec.recv_bytes(f0[0], l1[0])) == (71, 4)


def test_first_missing_resumes_where_the_check_stopped():
    have = np.zeros((1, 4), np.uint64)
    want, _, _ = _dep([5, 66, 140])
    for x in (5, 140):
        have[0, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    missing, word = bitvec.first_missing(want[0], 0, 0, 4, have, 0, 0)
    assert (missing, word) == (66, 1)
    have[0, 1] |= np.uint64(1) << np.uint64(2)
    assert bitvec.first_missing(want[0], 0, 0, 4, have, 0, word) == (0, 4)


def test_message_sizes_follow_spec_5_4():
    """m_int = 12 + bv_dep(DV), m_ext = 8 + pairs + I, IDR = 8 + 8 |h|; accounting B drops the
    fixed header and averages the internal group over the SP's messages."""
    up, relay, trans = (170.0, 10.0), (150.0, 10.0), (190.0, 10.0)  # (sum, count), accounting A
    assert accounting.internal_comm(up, relay, trans, "A") == pytest.approx(510 / 30)
    assert accounting.internal_comm(up, relay, trans, "B") == pytest.approx((340 - 12 * 20) / 20)
    assert accounting.headerless(100.0, accounting.IDR_HEADER, "B") == 92.0


# ------------------------------------------------------------------------------------------
# Listing 14: one external dependency per peer ("Exit For"), literally
# ------------------------------------------------------------------------------------------


def test_listing_14_keeps_an_older_hit_of_the_same_peer_as_an_sp_bit():
    """Spec §3.4: if an internal DV ever named two translations of one external peer, the literal
    loop translates the newest into a pair and leaves the older one set in CI[SP]."""
    s = workload.Schedule.scripted(4, [2, 2, 1])  # P(e)2 twice, then P(i)2
    st = kernel.new_state(s, channel.from_point(_point(), np.random.SeedSequence(0)), tt_gc=False)
    e1, = kernel.step(st, 0, -1, -1, 1.0, True)
    t1, = kernel.step(st, -1, e1, 4, 2.0, True)
    e2, = kernel.step(st, 1, -1, -1, 3.0, True)
    t2, = kernel.step(st, -1, e2, 4, 4.0, True)
    # P(i)2 delivers t1 only, then its DV is forced to name both translations (1 and 2)
    kernel.step(st, -1, t1, 1, 5.0, True)
    bitvec.dep_put(st.dv, st.dv_lo, st.dv_hi, 1, 2)
    up, = kernel.step(st, 2, -1, -1, 6.0, True)
    relay, ext = kernel.step(st, -1, up, 4, 7.0, True)
    row = st.wires[ext]
    pairs = list(st.pairs[row[kernel.W_CI_OFF]:row[kernel.W_CI_OFF] + 2 * row[kernel.W_CI_N]])
    assert pairs == [2, 2]  # <P(e)2, 2>: the newest translation
    sp_bits = st.bits[row[kernel.W_DV_OFF]:row[kernel.W_DV_OFF] + row[kernel.W_DV_NW]]
    assert int(sp_bits[0]) == 1 << 1  # the older one (SP number 1) stays an SP bit
    assert st.cnt[kernel.C_MULTI_MATCH] == 1


# ------------------------------------------------------------------------------------------
# channel and workloads
# ------------------------------------------------------------------------------------------


def test_delays_are_clamped_normal_and_shared_by_variants():
    c = channel.from_point(_point(50.0, 250.0), np.random.SeedSequence(3))
    d = np.array([channel.propagation(c, a, 0, k) for a in range(200) for k in range(50)])
    assert d.min() >= 50 and d.max() <= 250 and abs(d.mean() - 150) < 2
    assert abs(d.std() - 48.5) < 2  # sigma 50, slightly less after clamping at +-2 sigma
    assert (d == 250).mean() == pytest.approx(0.0228, abs=0.006)  # P(Z > 2)
    assert channel.propagation(c, 7, 1, 3) == channel.propagation(c, 7, 99, 3)  # (message, dest)
    per_link = channel.from_point(_point(50.0, 250.0, link_delay="per_link"), np.random.SeedSequence(3))
    assert channel.propagation(per_link, 1, 5, 3) == channel.propagation(per_link, 2, 5, 3)


def test_generation_gaps_and_window():
    win = workload.window(100, 80.0, 1.0, 2.0, 3, 10, 20000)  # amendment 5: 20000 / 1.25 msg/ms
    assert (win.start, win.end) == (1000.0, 1000.0 + 16000.0)
    s = workload.Schedule.periodic(20, 80.0, 5.0, 70.0, 90.0, workload.Window(0, 5000), "random_phase",
                                   np.random.SeedSequence(1))
    for p in range(20):
        t = s.times[s.senders == p]
        gaps = np.diff(t)
        assert t[0] < 80 and gaps.min() > 70 - 1e-9 and gaps.max() < 90 + 1e-9
        assert list(s.seqs[s.senders == p]) == list(range(1, len(t) + 1))
    assert np.all(np.diff(s.times) >= 0) and len(s.times) == pytest.approx(20 * 5000 / 80, rel=0.02)


def test_an_integer_window_is_stored_as_floats():
    """The kernels' state type follows the window's types: an int window compiled them anew."""
    w = workload.Window(300, 1500)
    assert (type(w.start), type(w.end)) == (float, float) and (w.start, w.end) == (300.0, 1500.0)


def test_fixed_rate_gaps_meet_the_original_at_n_star():
    """Spec §6.6: at N* = R / 12.5 the fixed-rate gap law is the original one."""
    assert experiments.fixed_rate_gaps(80, 1000.0, 0.125, 1 / 16) == (80.0, 5.0, 70.0, 90.0)


@pytest.mark.parametrize("name, extra", [("p2p_overhead_0_50", {}), ("p2p_scalability_50_250", {"rate": 1000.0})])
def test_arrival_events_estimate_the_run(name, extra):
    """The estimate behind the bench's paper-grid row (spec §9: N + 1 arrivals per message)."""
    e = catalog.get(name)
    point = {**e.points("smoke", {"n_peers": [20]})[0], **extra}
    seed = np.random.SeedSequence(4)
    run = kernel.simulate(experiments.schedule(point, seed), net=channel.from_point(point, seed))
    assert run.events == pytest.approx(experiments.arrival_events(point), rel=0.05)


@pytest.mark.parametrize("count", [2, 3, 450, 1000])
def test_block_copies_sorted_by_arrival_ties_in_destination_order(count):
    """A broadcast's copies leave in arrival order (``broadcasts._sort_copies``), exactly: times
    equal in their high bits (hidden under the index bits of the integer sort) and exact ties,
    as the clipped delay ranges make, included; ties keep the order of the destinations."""
    g = np.random.default_rng(count)
    base = 1000.0 + np.clip(g.normal(25.0, 12.5, count), 0.0, 50.0)
    base[::7] = np.nextafter(base[::7], np.inf)  # one ulp above a clipped bound: ulp neighbours
    arrivals = np.where(g.random(count) < 0.2, 1000.0, base)  # exact ties
    dests = g.permutation(count).astype(np.int64)
    times, out = np.empty(count), np.empty(count, np.int64)
    kernel.broadcasts._sort_copies(arrivals, dests, count, np.empty(count, np.uint64), times, out)
    order = np.argsort(arrivals, kind="stable")
    assert np.array_equal(times, arrivals[order])
    assert np.array_equal(out, dests[order])


# ------------------------------------------------------------------------------------------
# runs through the oracle (spec §3.8)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("delays", ["0_50", "50_250", "50_550"])
@pytest.mark.parametrize("n_peers", [2, 4, 10, 20])
def test_random_runs_are_causal_and_complete(delays, n_peers):
    """Both protocols, every delay range: the oracle finds no violation, every message reaches
    every peer, nothing stays buffered, and the two runs see the same workload."""
    lo, hi = experiments.DELAYS[delays]
    seed = np.random.SeedSequence([n_peers, int(hi)])
    s = workload.Schedule.periodic(n_peers, 80.0, 5.0, 70.0, 90.0, workload.Window(300, 1500),
                                   "random_phase", seed)
    net = channel.from_point(_point(lo, hi), seed)
    for run in (kernel.simulate(s, net=net), idr.simulate(s, net=net)):
        report = run.verify()
        assert report.errors == report.missing == report.duplicates == 0
        assert report.deliveries == len(s.times) * n_peers
    metrics = kernel.simulate(s, net=net).metrics()
    assert metrics["multi_match"] == 0 and metrics["ci_removed_below"] == 0  # spec §10: never seen


def test_translation_table_collection_changes_no_metric():
    """Spec §3.7 [V]: TT garbage collection only bounds the SP's memory."""
    seed = np.random.SeedSequence(5)
    s = workload.Schedule.periodic(20, 80.0, 5.0, 70.0, 90.0, workload.Window(500, 2000), "random_phase", seed)
    net = channel.from_point(_point(50.0, 550.0), seed)
    on, off = kernel.simulate(s, net=net, tt_gc=True), kernel.simulate(s, net=net, tt_gc=False)
    on.verify()
    a, b = on.metrics(), off.metrics()
    assert a["tt_collected"] > 0 and b["tt_collected"] == 0 and a["tt_entries"] < b["tt_entries"]
    for k in ("comm_int_A", "comm_ext_A", "stor_int", "stor_ext", "comm_ds_A"):
        assert a[k] == b[k], k


def test_a_broken_delivery_rule_is_caught_by_the_oracle():
    """The property test can fail: skip Listing 5's causal test and the oracle objects."""
    seed = np.random.SeedSequence(2)
    s = workload.Schedule.periodic(10, 80.0, 5.0, 70.0, 90.0, workload.Window(200, 1000), "random_phase", seed)
    st = kernel.new_state(s, channel.from_point(_point(), seed))
    _blind_loop(st)
    run = kernel.finish(st, 10)
    with pytest.raises(AssertionError, match="causality oracle"):
        run.verify()


@numba.njit
def _blind_loop(st):
    """The kernel's loop, with every copy's dependency bit vector lost on arrival."""
    q = events.new_queue()
    times = st.app_time
    i = 0
    while True:
        if i < len(times) and (events.empty(q) or times[i] <= events.next_time(q)):
            now = times[i]
            kernel.send(st, i, now)
            i += 1
        elif not events.empty(q):
            now, w, dest = kernel.broadcasts.next_arrival(st, q)
            st.wires[w, kernel.W_DV_NW] = 0  # the dependency vector is lost in transit
            kernel.receive_copy(st, w, dest, now)
            kernel.recheck(st, now)
        else:
            return
        kernel._fan_out(st, q, now)


# ------------------------------------------------------------------------------------------
# latencies: from the broadcast to each peer other than the sender, the super peer not counted
# ------------------------------------------------------------------------------------------

SIMULATORS = pytest.mark.parametrize("simulate", [kernel.simulate, idr.simulate], ids=["free_scale", "idr"])


@SIMULATORS
@pytest.mark.parametrize("sender, hops", [(0, 2.0), (2, 5 / 3)], ids=["internal", "external"])
def test_one_message_takes_its_path_delay(simulate, sender, hops):
    """N = 4, every hop 10 ms: an internal peer's message reaches the three others through the SP
    (2 hops each); an external peer's reaches the other external peer directly (1 hop) and the
    two internal peers through the SP (2 hops): 5/3 hops on average.  One message never waits."""
    net = channel.from_point(_point(tpp="constant", tpp_mean=10.0), np.random.SeedSequence(0))
    run = simulate(workload.Schedule.scripted(4, [sender]), net=net)
    assert run.mean_reception_latency() == pytest.approx(10.0 * hops)
    assert run.mean_delivery_latency() == pytest.approx(10.0 * hops)


def _path_draws(s: workload.Schedule, net: channel.Channel) -> float:
    """Mean over (message sent in the window, peer other than its sender) of its hops' delay
    draws: direct between external peers, else through the SP (node N).  With no sending queue
    that is IDR's reception latency, and a lower bound of the free-scale protocol's, whose SP
    holds an internal peer's message for FIFO order and an external one for its dependencies."""
    n, total, pairs = s.n_peers, 0.0, 0
    for a in np.flatnonzero((s.window.start <= s.times) & (s.times < s.window.end)):
        p = s.senders[a]
        for q in range(n):
            if q == p:
                continue
            if p < s.internal or q < s.internal:
                total += channel.propagation(net, a, p, n) + channel.propagation(net, a, n, q)
            else:
                total += channel.propagation(net, a, p, q)
            pairs += 1
    return total / pairs


def test_latencies_follow_the_delay_draws_of_the_window():
    """Wide delays (50-550 ms), 20 peers, a window: each protocol counts one reception and one
    delivery per (message sent in the window, peer other than its sender), none at the SP; IDR's
    reception latency is exactly its hops' draws, the free-scale protocol's no less (its SP may
    wait), and buffering makes both delivery latencies longer."""
    seed = np.random.SeedSequence(11)
    s = workload.Schedule.periodic(20, 80.0, 5.0, 70.0, 90.0, workload.Window(300, 1500), "random_phase", seed)
    net = channel.from_point(_point(50.0, 550.0), seed)
    fs, base = kernel.simulate(s, net=net), idr.simulate(s, net=net)
    owed = int(((s.times >= 300) & (s.times < 1500)).sum()) * 19
    assert 0 < owed < len(s.times) * 19
    for run, module in ((fs, kernel), (base, idr)):
        assert run.acc[module.A_RECEPTION + 1] == run.acc[module.A_DELIVERY + 1] == owed
        assert run.mean_delivery_latency() > run.mean_reception_latency()
    expected = _path_draws(s, net)
    assert base.mean_reception_latency() == pytest.approx(expected, rel=1e-12)
    assert fs.mean_reception_latency() >= expected * (1 - 1e-12)


def test_cross_rows_report_the_latencies():
    """The cross-family adapters fill both latencies (ms, as the common schedule): reception at
    least one Normal(100, 25) hop on average, delivery no shorter, the free-scale protocol's SP
    adding to IDR's transparent relay."""
    point = cross_family.Point.of({"n_nodes": 16, "load": 1000.0, "broadcasts": 120,
                                   "tpp_mean": 100.0, "tpp_sigma": 25.0})
    fs, base = (f(point, np.random.SeedSequence(7)) for f in (cross.run_free_scale, cross.run_idr))
    for row in (fs, base):
        assert 100.0 < row["reception_latency"] <= row["delivery_latency"] < math.inf
    assert fs["reception_latency"] >= base["reception_latency"] * (1 - 1e-12)


# ------------------------------------------------------------------------------------------
# experiments and artifacts
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad, message", [
    ({"n_peers": 9}, "parameter 'n_peers': 9 not allowed; allowed: even, >= 2"),
    ({"n_peers": 0}, "parameter 'n_peers': 0 not allowed"),
    ({"delay_min": 60.0}, "delay_min (60 ms) must be <= delay_max (50 ms)"),
    ({"gap_min": 95.0}, "need gap_min <= gap_mean <= gap_max"),
])
def test_impossible_points_are_parameter_errors(bad, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        catalog.get("p2p_overhead_0_50").points("smoke", {k: [v] for k, v in bad.items()})


def test_protocol_variants_share_the_seed():
    e = catalog.get("p2p_overhead_0_50")
    point = e.points("smoke")[0]
    a, b = ({**point, "protocol": v} for v in experiments.PROTOCOLS)
    assert task_seed(1, e, a, 0).entropy == task_seed(1, e, b, 0).entropy


def test_replicate_returns_one_schema_for_both_protocols():
    e = catalog.get("p2p_overhead_0_50")
    fs, bl = (e.replicate({**e.points("smoke")[0], "protocol": p}, np.random.SeedSequence(1))
              for p in experiments.PROTOCOLS)
    assert fs.keys() == bl.keys()
    assert math.isnan(fs["comm_idr_A"]) and math.isnan(bl["comm_int_A"])
    assert fs["messages"] == bl["messages"] and fs["oracle_errors"] == bl["oracle_errors"] == 0


def test_least_squares_fit():
    table = pd.DataFrame({"y": [3.0, 5.0, 7.5, 20.0]}, index=[10, 20, 30, 200])
    line = overhead.fit(table, "y", 0, 30)
    assert (line["slope"], line["n"], line["range"]) == (pytest.approx(0.225), 3, "N = 10..30")
    assert overhead.fit(table, "y", scalability.LINEAR_FROM)["n"] == 1  # too few points: NaN slope
    assert math.isnan(overhead.fit(table, "y", scalability.LINEAR_FROM)["slope"])
