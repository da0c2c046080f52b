"""Error detectors of seed 004: the spec's test vectors (probabilistic_clocks §1.7, §3.3, §3.4.3)
as scripted runs of the kernel, Algorithm 2's request / reply exchange, serial recovery, and the
oracle's classification of requests.

Scenarios follow the spec's processes p1, p2, ... as ids 0, 1, ...; their broadcasts are
scripted and every copy's delay is set by hand (``delays[slot, receiver]``), so the order of
receptions is exactly the one the spec describes.  Control messages take 0.5 s."""

import math

import numpy as np
import pytest

from causal_lab import cross_family, oracle
from causal_lab.engine import network
from causal_lab.families.error_detectors import cross, ground_truth, kernel
from causal_lab.families.error_detectors.experiments import k_formula
from causal_lab.families.error_detectors.workload import Schedule
from causal_lab.families.probabilistic_clocks import clocks

G = clocks.causal_past_term
LATE = 1.5  # a copy that arrives after everything of interest (within the 2-s pool)
CTRL = network.Network(t_pc=0.0, t_t=0.0, tpp="constant", tpp_mean=0.5)


def scripted(f, m_size, broadcasts, delays, **options):
    """Run broadcasts [(time, process)] with delays {(slot, receiver): delay} (default LATE)."""
    n = len(f)
    schedule = Schedule.scripted([t for t, _ in broadcasts], [p for _, p in broadcasts], n)
    table = np.full((len(broadcasts), n), LATE)
    for (slot, receiver), d in delays.items():
        table[slot, receiver] = d
    return kernel.simulate(schedule, net=CTRL, clock_size=m_size, k=len(f[0]), f=f,
                           delays=table, **options)


def deliveries(run, process):
    """Messages a process delivered (its own broadcasts included), in order."""
    return [int(m) for m in run.log_msg[run.log_node == process]]


def verdict(run, process, message):
    """The detector bits of the delivery of ``message`` at ``process``."""
    k = np.flatnonzero((run.log_node == process) & (run.log_msg == message)
                       & (run.log_kind == oracle.DELIVER))
    return int(run.flags[k[0]])


# T-PC-1 setting: M = 3, k = 2, f(p1) = {0,1}, f(p2) = {0,2}, f(p3) = {1,2}; T-PC-2 adds p4 = {0,1}
F_PC = [(0, 1), (0, 2), (1, 2), (0, 1)]
# m = (p1, 1) at 0, m' = (p2, 1) at 0.5 after p2 delivered m, m4 = (p4, 1) at 0: slots 0, 1, 2
M, M4, MP = 0, 1, 2  # message ids are broadcast ranks
BROADCASTS_PC = [(0.0, 0), (0.0, 3), (0.5, 1)]


def test_causal_past_hash_vectors():
    assert int(kernel.past_term(0, 1)) == G(0, 1) == 0xF42F86FD59BAB480
    assert int(kernel.past_term(3, 1)) == G(3, 1) == 0xC86E66F65A127230
    assert int(kernel.past_term(1, 2)) == G(1, 2) == 0x67496371B70B11E9
    assert (G(0, 1) + G(1, 2)) % 2**64 == 0x5B78EA6F10C5C669  # H({0: 1, 1: 2})
    assert (G(2, 1) + G(3, 1)) % 2**64 == 0x2CA8028EE5548FB1  # H_m of T-HD-3
    assert int(kernel.past_term(5, 0)) == 0


def test_t_pc_1_causal_broadcast():
    """p3 receives m' before m: m' waits, then both are delivered in causal order."""
    run = scripted(F_PC[:3], 3, [(0.0, 0), (0.5, 1)],
                   {(0, 1): 0.1, (0, 2): 1.0, (1, 2): 0.1, (1, 0): 0.2})
    assert run.msg_V.tolist() == [[1, 1, 0], [2, 1, 1]]
    assert deliveries(run, 2) == [0, 1]
    assert run.clocks.tolist() == [[2, 1, 1]] * 3
    assert run.verify().errors == 0


def t_pc_2(**options):
    """p3 delivers m4 (0.2), then m' (0.6) although m arrives only at 1.0 (T-PC-2)."""
    return scripted(F_PC, 3, BROADCASTS_PC,
                    {(0, 1): 0.1, (0, 2): 1.0, (1, 2): 0.2, (2, 2): 0.1}, **options)


def test_t_pc_2_false_delivery_is_counted_by_the_oracle_not_raised():
    run = t_pc_2()
    assert deliveries(run, 2) == [M4, MP, M]
    report = run.verify()  # out-of-order deliveries are the protocol's error rate, not a bug
    assert report.errors == 1 and report.error_example == ((MP, 2),)
    assert run.known_flaws(report) == {"delivered out of causal order (probabilistic clocks)": 1}


def test_t_mw_1_and_t_hd_1_verdicts_in_shadow():
    """T-MW-1: A holds when p3 delivers m' (entry 0: 1 = 2 − 1), so the normative polarity does
    not flag it (a missed error), the literal one does.  T-HD-1: both hash detectors flag it."""
    run = t_pc_2(shadow=True)
    bits = verdict(run, 2, MP)
    assert not bits & kernel.F_MW_NORMATIVE and bits & kernel.F_MW_LITERAL
    assert bits & kernel.F_HASH_AUTHORS and bits & kernel.F_HASH_RESIDUAL
    truth = ground_truth.delivery_truth(run)
    caught = ground_truth.detection(run, truth)
    assert caught["mw_normative_caught"] == 0 and caught["mw_literal_caught"] == 1
    assert caught["hash_authors_caught"] == caught["hash_residual_caught"] == 1


def test_t_mw_1_after_m():
    """In T-PC-1, p3 delivers m' after m: A holds, the normative polarity stays silent."""
    run = scripted(F_PC[:3], 3, [(0.0, 0), (0.5, 1)],
                   {(0, 1): 0.1, (0, 2): 0.2, (1, 2): 0.1, (1, 0): 0.2}, shadow=True)
    bits = verdict(run, 2, 1)
    assert not bits & kernel.F_MW_NORMATIVE and bits & kernel.F_MW_LITERAL
    assert not bits & (kernel.F_HASH_AUTHORS | kernel.F_HASH_RESIDUAL)


@pytest.mark.parametrize("mode", ["authors", "residual"])
@pytest.mark.parametrize("recovery", ["serial", "parallel"])
def test_t_hd_1_request_reply_then_delivery_after_the_dependencies(mode, recovery):
    """Algorithm 2: p3 flags m' (0.6), sends REQ to p2 (arrives 1.1), whose RSP carries
    Dep_msg(m') = {m} (arrives 1.6); m arrived at 1.0, so p3 delivers m, then m' at 1.6."""
    run = t_pc_2(detector="hash", hash_mode=mode, recovery=recovery)
    assert deliveries(run, 2) == [M4, M, MP]
    assert run.counters["req"] == run.counters["rsp"] == 1 and run.req_deps.tolist() == [1]
    assert (run.req_msg.tolist(), run.req_node.tolist()) == ([MP], [2])
    assert run.req_time.tolist() == [pytest.approx(0.6)]
    assert verdict(run, 2, MP) & kernel.F_RECOVERED
    assert run.verify().errors == 0
    assert ground_truth.requests_needed(run).tolist() == [1]


def test_reply_waits_for_dependencies_still_missing():
    """m reaches p3 only at 3.0: m' waits after its reply (1.6) until m is delivered."""
    run = scripted(F_PC, 3, BROADCASTS_PC, {(0, 1): 0.1, (0, 2): 3.0, (1, 2): 0.2, (2, 2): 0.1},
                   detector="hash", hash_mode="residual")
    assert deliveries(run, 2) == [M4, M, MP]
    k = np.flatnonzero(run.log_node == 2)
    assert run.req_delivered.tolist() == [k[-1]]
    assert run.verify().errors == 0


def test_t_hd_2_forced_removal_explains_the_surplus():
    """p3 delivers m, then m4 (concurrent, no past): m is removed, δ = 0, H = 0 = H_m4."""
    run = scripted(F_PC, 3, BROADCASTS_PC, {(0, 2): 0.1, (1, 2): 0.3}, shadow=True)
    assert deliveries(run, 2)[:2] == [M, M4]
    assert not verdict(run, 2, M4) & (kernel.F_HASH_AUTHORS | kernel.F_HASH_RESIDUAL)
    assert run.hist_res[1] + run.hist_res[2] >= 1


# T-HD-3 / T-HD-4: M = 4, k = 2; e = (p0, 1), x = (p2, 1), y = (p3, 1), z = (p5, 1) at t = 0,
# m = (p1, 1) at t = 1 after p1 delivered x and y; p4 receives m at 1.2 (slots and message ids
# follow the schedule's order: time, then process)
F_HD = [(0, 1), (2, 3), (0, 2), (1, 3), (0, 1), (0, 2)]
BROADCASTS_HD = [(0.0, 0), (0.0, 2), (0.0, 3), (0.0, 5), (1.0, 1)]
E, X, Y, Z, MH = 0, 1, 2, 3, 4


@pytest.mark.parametrize("order", [(X, E, Y), (E, X, Y), (Y, X, E)])
def test_t_hd_3_search_removes_the_hidden_concurrent_message(order):
    delays = {(X, 1): 0.1, (Y, 1): 0.1, (MH, 4): 0.2}
    delays.update({(slot, 4): 0.1 * (rank + 1) for rank, slot in enumerate(order)})
    run = scripted(F_HD, 4, BROADCASTS_HD, delays, shadow=True)
    assert run.msg_V[MH].tolist() == [1, 1, 2, 2]
    assert deliveries(run, 4)[:4] == [*order, MH]
    assert not verdict(run, 4, MH) & (kernel.F_HASH_AUTHORS | kernel.F_HASH_RESIDUAL)


@pytest.mark.parametrize("mode", ["authors", "residual"])
def test_t_hd_4_missing_predecessor_hidden_by_a_twin(mode):
    """p4 delivered y, e, z (z's entries are x's): same clock as T-HD-3, but x is missing.  The
    hash detectors flag m, Mostéfaoui does not (entry 2: 1 = 2 − 1); the request brings Dep_msg
    = {x, y}, x arrives at 3.0 and m is delivered after it: no error, and the request was needed."""
    delays = {(X, 1): 0.1, (Y, 1): 0.1, (Y, 4): 0.1, (E, 4): 0.2, (Z, 4): 0.3, (MH, 4): 0.2,
              (X, 4): 3.0}
    shadow = scripted(F_HD, 4, BROADCASTS_HD, delays, shadow=True)
    bits = verdict(shadow, 4, MH)
    assert bits & kernel.F_HASH_AUTHORS and bits & kernel.F_HASH_RESIDUAL
    assert not bits & kernel.F_MW_NORMATIVE
    assert shadow.verify().errors >= 1
    run = scripted(F_HD, 4, BROADCASTS_HD, delays, detector="hash", hash_mode=mode)
    assert deliveries(run, 4) == [Y, E, Z, X, MH]
    at_p4 = run.req_node == 4
    assert run.req_msg[at_p4].tolist() == [MH] and run.req_deps[at_p4].tolist() == [2]  # {x, y}
    assert run.verify().errors == 0
    assert ground_truth.requests_needed(run)[at_p4].tolist() == [1]


def test_false_alarm_is_classified_by_the_oracle():
    """Mostéfaoui's normative polarity flags m4 at p3 after m (no sender entry at m4.V − 1):
    the request is answered with an empty Dep_msg and was not needed."""
    run = scripted(F_PC, 3, BROADCASTS_PC, {(0, 2): 0.1, (1, 2): 0.3}, detector="mostefaoui")
    at_p3 = run.req_node == 2
    assert run.req_msg[at_p3].tolist() == [M4] and run.req_time[at_p3].tolist() == [pytest.approx(0.3)]
    assert run.req_deps[at_p3].tolist() == [0]
    assert ground_truth.requests_needed(run)[at_p3].tolist() == [0]
    assert run.verify().errors == 0


def test_serial_recovery_parks_retests_and_skips_slots():
    """With p5 = {0, 1} too: p3 delivers m (0.1), flags m4 (REQ at 0.3, RSP at 1.3), flags m5 at
    0.4 and parks it (serial recovery), skips its own slot at 0.8, and re-tests m5 at 1.3: flagged
    again, requested then.  In parallel mode both are requested at once and the slot is used."""
    f = [*F_PC, (0, 1)]
    broadcasts = [(0.0, 0), (0.0, 3), (0.0, 4), (0.5, 1), (0.8, 2)]
    delays = {(0, 2): 0.1, (1, 2): 0.3, (2, 2): 0.4}
    serial = scripted(f, 3, broadcasts, delays, detector="mostefaoui")
    at_p3 = serial.req_node == 2
    assert serial.req_msg[at_p3].tolist() == [1, 2]
    assert serial.req_time[at_p3].tolist() == [pytest.approx(0.3), pytest.approx(1.3)]
    assert serial.counters["parked"] >= 1 and serial.counters["retests"] >= 1
    assert 2 not in serial.msg_src.tolist() and serial.counters["skipped_slots"] >= 1
    parallel = scripted(f, 3, broadcasts, delays, detector="mostefaoui", recovery="parallel")
    at_p3 = parallel.req_node == 2
    assert parallel.req_time[at_p3].tolist()[:2] == [pytest.approx(0.3), pytest.approx(0.4)]
    assert 2 in parallel.msg_src.tolist() and parallel.counters["skipped_slots"] == 0
    for run in (serial, parallel):
        run.verify()
        assert (ground_truth.requests_needed(run)[run.req_node == 2] == 0).all()


def test_overlapping_requests_of_one_process_use_different_phantoms():
    copy = ground_truth._phantom_copies(3, np.array([1, 1, 2, 1]), np.array([10, 20, 25, 40]),
                                        np.array([30, 35, -1, 50]))
    assert copy.tolist() == [0, 1, 0, 0]


def periodic(n=60, period=1.0, duration=6.0, seed=3):
    return Schedule.periodic(n, period, duration, warmup=1.0, seed=np.random.SeedSequence(seed))


def test_periodic_schedule():
    s = periodic(n=10, period=2.0, duration=20.0)
    assert s.load == 5.0
    for p in range(10):
        times = s.times[s.sources == p]
        assert abs(times[0] - p * 0.2) < 0.06 and np.allclose(np.diff(times), 2.0, atol=0.1)
        assert s.slots[s.sources == p].tolist() == list(range(len(times)))
    again = periodic(n=10, period=2.0, duration=20.0)
    assert np.array_equal(s.times, again.times)  # the workload is a function of the seed
    assert k_formula(50, 100.0) == 4 and k_formula(20, 180.0) == 1 and k_formula(25, 20.0) == 4


@pytest.mark.parametrize("options", [
    {}, {"shadow": True},
    {"detector": "hash", "hash_mode": "authors"}, {"detector": "hash", "hash_mode": "residual"},
    {"detector": "hash", "hash_mode": "residual", "recovery": "parallel"},
    {"detector": "mostefaoui"}, {"detector": "mostefaoui", "mw_polarity": "literal", "recovery": "parallel"},
])
@pytest.mark.parametrize("seed", [1, 2])
def test_random_runs_terminate_and_deliver_everything(options, seed):
    """Small clocks under load: errors happen, yet everything is delivered exactly once."""
    run = kernel.simulate(periodic(seed=seed), seed=np.random.SeedSequence(seed), clock_size=10,
                          k=2, **options)
    report = run.verify()
    assert report.missing == 0 and report.duplicates == 0 and not run.stopped
    assert report.deliveries == run.messages * run.n_nodes
    if options.get("hash_mode") == "residual":
        assert report.errors == 0  # a 64-bit match proves the whole causal past was delivered


def test_shadow_and_plain_runs_deliver_identically():
    schedule, seed = periodic(), np.random.SeedSequence(5)
    plain = kernel.simulate(schedule, seed=seed, clock_size=10, k=2)
    shadow = kernel.simulate(schedule, seed=seed, clock_size=10, k=2, shadow=True)
    assert np.array_equal(plain.log_msg, shadow.log_msg) and np.array_equal(plain.log_node, shadow.log_node)
    assert plain.verify().errors == shadow.verify().errors > 0


@pytest.mark.parametrize("mode", ["residual", "authors"])
def test_narrow_hashes_collide_and_the_oracle_counts_what_they_let_through(mode):
    """A 1-bit hash matches wrong candidate sets: the collisions are counted, the deliveries they
    let through are marked, and the oracle finds errors among them.  In the residual mode, where
    the hash covers the whole causal past, the first error of a run can only be a collision's."""
    schedule, seed = periodic(n=80, period=0.5), np.random.SeedSequence(4)
    wide = kernel.simulate(schedule, seed=seed, clock_size=6, k=2, detector="hash", hash_mode=mode)
    narrow = kernel.simulate(schedule, seed=seed, clock_size=6, k=2, detector="hash",
                             hash_mode=mode, hash_bits=1)
    assert wide.verify().errors == 0 and wide.counters["collisions"] == 0
    assert not (wide.flags & kernel.F_COLLISION).any()
    truth = ground_truth.delivery_truth(narrow)
    collided = (narrow.flags & kernel.F_COLLISION) != 0
    assert narrow.counters["collisions"] >= collided.sum() > 0
    assert truth.report.errors > 0 and narrow.counters["req"] < wide.counters["req"]
    assert (collided & truth.error).sum() > 0
    if mode == "residual":
        assert collided[np.flatnonzero(truth.error)[0]]


def test_rejects_impossible_options():
    schedule = periodic(n=4, duration=1.0)
    for bad in [dict(k=0), dict(clock_size=2, k=3), dict(hash_bits=65), dict(hash_bits=0),
                dict(l_authors=0), dict(l_residual=0), dict(detector="magic"), dict(tau=0.0)]:
        with pytest.raises(ValueError):
            kernel.simulate(schedule, **bad)
    assert math.isclose(kernel.diff_bound(100.0, 4), 100.0)


def test_clustered_request_interval():
    """The rate interval is Garwood's when every requested message is requested once (spec
    §7.1), and a cluster of requests for one message widens it (§7.3)."""
    from scipy import stats

    from causal_lab.families.error_detectors.artifacts import common

    lo, hi = common.weighted_poisson(5, 5, 1)
    assert lo == pytest.approx(stats.chi2.ppf(0.025, 10) / 2) and hi == pytest.approx(stats.chi2.ppf(0.975, 12) / 2)
    assert common.weighted_poisson(0, 0, 1) == (0.0, pytest.approx(stats.chi2.ppf(0.975, 2) / 2))
    one_big = common.weighted_poisson(104, 100 ** 2 + 4, 199)  # one message requested 100 times
    assert one_big[0] < 104 / 10 and one_big[1] > 3 * 104


# Latencies (cross-family metrics): receptions and deliveries at processes other than the sender.


def test_latencies_of_t_hd_1_include_the_wait_for_the_reply():
    """T-PC-2's nine receptions (m: 0.1, 1.0, 1.5; m4: 0.2, 1.5, 1.5; m': 0.1, 1.5, 1.5) sum to
    8.9 s.  Without a detector each message is delivered on arrival; with the hash detector m'
    waits at p3 from 0.6 to its reply at 1.6, which adds 1.0 s to the deliveries only."""
    plain = t_pc_2()
    hashed = t_pc_2(detector="hash", hash_mode="authors", recovery="parallel")
    for run in (plain, hashed):
        assert run.lat_count.tolist() == [9, 9]
        assert run.mean_reception_latency() == pytest.approx(8.9 / 9)
    assert plain.mean_delivery_latency() == pytest.approx(8.9 / 9)
    assert hashed.mean_delivery_latency() == pytest.approx(9.9 / 9)


def test_constant_delay_run_receives_after_the_delay_and_never_waits():
    """With one constant delay the copies arrive in causal order: every (message, other
    process) pair is received after exactly that delay and delivered on arrival."""
    net = network.Network(t_pc=0.0, t_t=0.0, tpp="constant", tpp_mean=0.25)
    run = kernel.simulate(periodic(n=8, duration=3.0), net=net, seed=np.random.SeedSequence(1),
                          clock_size=10, k=2)
    pairs = run.messages * (run.n_nodes - 1)
    assert run.messages > 0 and run.lat_count.tolist() == [pairs, pairs]
    assert run.mean_reception_latency() == pytest.approx(0.25)
    assert run.mean_delivery_latency() == pytest.approx(0.25)


def test_requests_delay_deliveries_not_receptions():
    """Small clocks under load: the hash detector requests thousands of messages.  REQ / RSP
    transit is no reception, so the receptions are those of the run without a detector; each
    request holds a delivery for a round trip, so the deliveries come later than there."""
    schedule, seed = periodic(seed=2), np.random.SeedSequence(2)
    plain = kernel.simulate(schedule, seed=seed, clock_size=6, k=2)
    hashed = kernel.simulate(schedule, seed=seed, clock_size=6, k=2, detector="hash",
                             recovery="parallel")
    pairs = hashed.messages * (hashed.n_nodes - 1)
    assert hashed.counters["req"] > 1000 and hashed.lat_count.tolist() == [pairs, pairs]
    reception = hashed.mean_reception_latency()
    assert clocks.DELAY_MEAN * 0.8 < reception == pytest.approx(plain.mean_reception_latency())
    assert plain.mean_delivery_latency() < hashed.mean_delivery_latency()
    assert reception + clocks.DELAY_MEAN / 2 < hashed.mean_delivery_latency() < math.inf


def test_empty_run_has_no_latency():
    """No reception, no delivery: NaN (how the cross-family table marks what was not measured)."""
    run = kernel.simulate(Schedule.scripted([], [], 3))
    assert math.isnan(run.mean_reception_latency()) and math.isnan(run.mean_delivery_latency())


@pytest.mark.parametrize("protocol", ["pc_mostefaoui", "pc_hash"])
def test_cross_adapter_reports_the_kernel_latencies_in_ms(protocol):
    """The benchmark's rows carry both latencies in ms: about one 100-ms propagation delay."""
    point = cross_family.Point.of({"n_nodes": 8, "load": 500.0, "broadcasts": 60,
                                   "tpp_mean": 100.0, "tpp_sigma": 25.0})
    adapter = {p.name: p for p in cross.PROTOCOLS}[protocol]
    row = adapter.run(point, np.random.SeedSequence(7))
    assert 80.0 < row["reception_latency"] <= row["delivery_latency"] < 1e3


def test_blocked_messages_wake_in_arrival_order_when_their_last_entry_fills():
    """M = 2, k = 1, f = {0}, {1}, {0}, {1}, {0}: a (p0) and b (p1) at 0; p2 delivers both and
    broadcasts c (needs [1, 1]) at 0.2; p4 delivers b and broadcasts d (needs [0, 1]) at 0.2.
    p3 receives d at 0.25 (waits on entry 1), c at 0.3 (waits on entry 0), a at 0.5 (c now waits
    on entry 1, behind d in arrival but first on that entry's wake list) and b at 0.7: both meet
    the clock condition, and d, received first, is delivered first."""
    f = [(0,), (1,), (0,), (1,), (0,)]
    broadcasts = [(0.0, 0), (0.0, 1), (0.2, 2), (0.2, 4)]
    delays = {(0, 2): 0.1, (1, 2): 0.1, (1, 4): 0.1, (3, 3): 0.05, (2, 3): 0.1, (0, 3): 0.5, (1, 3): 0.7}
    run = scripted(f, 2, broadcasts, delays)
    run.verify()
    assert deliveries(run, 3) == [0, 1, 3, 2]
    assert run.oracle_report().errors == 0
