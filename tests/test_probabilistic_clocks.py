"""Seed 002's probabilistic clocks and DCS on the compiled kernel: workloads against the spec's
test vectors, the model behind the size policy and Figure 5, the rounds and the balancing rule,
and random runs that must terminate with every message delivered everywhere (the worked examples
are in test_probabilistic_clocks_scenarios.py, the clock vectors in test_pc_clocks.py)."""

import dataclasses

import numpy as np
import pytest

from causal_lab.engine import network
from causal_lab.families.probabilistic_clocks import clocks, kernel, policy, shadow, workload as wl
from causal_lab.families.probabilistic_clocks.artifacts import figure5

NET = network.Network(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=0.1, tpp_sigma=0.02,
                      tpp_negative="clip")


def simulate(w, config, seed=1, **kw):
    return kernel.simulate(w, net=NET, seed=np.random.SeedSequence(seed), config=config, **kw)


# ------------------------------------------------------------------------------------------
# Workloads (spec §6.2, §6.3, A.7, A.8, amendments 3-4)
# ------------------------------------------------------------------------------------------


def test_bell_pattern_vectors():
    p = wl.pattern("bell")
    assert np.round(p.rate(np.array([0, 175, 350, 750, 849.0])), 3).tolist() == [10.013, 200.0, 10.032, 10.735, 10.915]
    assert p.mean() == pytest.approx(68.822, abs=1e-3) and p.mean() * 850 == pytest.approx(58499, abs=1)
    assert (p.rate((np.arange(85000) + 0.5) / 100) >= 100).mean() == pytest.approx(0.302, abs=1e-3)


def test_random_pattern_vectors():
    times, values = wl.knot_values()
    assert len(times) == 44 and times[-1] == 860
    assert np.round(values[:6], 3).tolist() == [16.486, 16.817, 15.65, 29.701, 15.471, 26.014]
    assert np.round(values[[10, 23, 35, 42, 43]], 3).tolist() == [173.1, 154.184, 166.282, 12.303, 16.066]
    p = wl.pattern("random")
    assert p.mean() == pytest.approx(29.790, abs=1e-3) and p.mean() * 850 == pytest.approx(25322, abs=1)


def test_authors_patterns_and_send_model():
    r = wl.pattern("random_authors").per_second()
    assert len(r) == 850 and set(np.unique(r[:190])) <= set(range(10, 31))
    assert r[190:200].tolist() == list(wl.AUTHORS_RAMP) and r[200:250].min() >= 150
    times, senders = wl.schedule(wl.pattern("bell_authors"), 7, "deterministic_rr", np.random.SeedSequence(0))
    assert len(times) / 850 == pytest.approx(62.5, abs=0.05)  # amendment 4
    assert senders[:9].tolist() == [0, 1, 2, 3, 4, 5, 6, 0, 1]


@pytest.mark.parametrize("model", wl.SEND_MODELS)
def test_send_models_follow_the_load(model):
    times, senders = wl.schedule(wl.pattern("bell"), 50, model, np.random.SeedSequence(3))
    assert np.all(np.diff(times) >= 0) and senders.min() >= 0 and senders.max() < 50
    assert len(times) == pytest.approx(58499, rel=0.02)
    per_second = np.bincount(times.astype(int), minlength=850)
    assert per_second[170:180].mean() > 150 and per_second[340:360].mean() < 20


def test_poisson_rr_spreads_senders_and_variants_share_instants():
    seed = np.random.SeedSequence(4)
    t1, s1 = wl.schedule(wl.pattern("constant", 100, 10), 20, "poisson_rr", seed)
    t2, s2 = wl.schedule(wl.pattern("constant", 100, 10), 20, "poisson_indep", seed)
    assert np.array_equal(t1, t2)  # the same instants: only the senders differ
    assert np.bincount(s1).max() - np.bincount(s1).min() <= 1  # round robin


def test_weighted_groups_skew_the_senders():
    t, s = wl.weighted_groups(100, 130, 200, 4, 50, 0.25, 0.75, np.random.SeedSequence(1))
    g0 = s % 4 == 0
    assert g0[t < 50].mean() == pytest.approx(0.25, abs=0.03) and g0[t >= 50].mean() == pytest.approx(0.75, abs=0.03)


# ------------------------------------------------------------------------------------------
# The model: sizing policy and Figure 5's reference (spec §2.8, §6.1, A.9)
# ------------------------------------------------------------------------------------------


def test_policy_thresholds_give_c_target():
    table = policy.thresholds("model", 1000, 2, 50, 32, 1e-5)
    for load in [0.5, 20, 33, 50, 90, 120, 150, 199, 200, 260]:
        assert policy.c_target_of(table, load) == clocks.c_target(load, 1000)
    formula = policy.thresholds("formula_only", 1000, 2, 50, 32, 0.003)
    assert all(clocks.p_cond(c * 50, t * clocks.DELAY_MEAN, 2) == pytest.approx(0.003, rel=1e-6)
               for c, t in enumerate(formula[:5], start=1))


@pytest.mark.parametrize("load, expected", [
    (10, [3, 4, 9, 13, 28]), (100, [79, 116, 271, 387, 877]), (200, [231, 335, 774, 1102, 2488]),
])
def test_model_required_sizes_match_the_spec_table(load, expected):
    """The spec's table lists the smallest integer size meeting the target."""
    got = [figure5.analytic(load, p) for p in (1e-4, 5e-5, 1e-5, 5e-6, 1e-6)]
    assert np.ceil(got).astype(int).tolist() == expected


def test_pc_formula_values_t_pc_3():
    """T-PC-3 (to the printed digits: half a unit of the sixth decimal)."""
    assert clocks.p_cond(50, 10, 2) == pytest.approx(0.110484, abs=5e-7)
    assert clocks.p_cond(50, 10, 4) == pytest.approx(0.094401, abs=5e-7)
    assert clocks.m_required(0.01, 10, 2) == pytest.approx(190.32487, rel=1e-6)


# ------------------------------------------------------------------------------------------
# Runs: termination, invariants, rounds, balancing
# ------------------------------------------------------------------------------------------


def ramp(n=60, high=200.0, seconds=(20.0, 60.0), seed=1):
    """High load, then low load: the DCS must grow, then contract through rounds."""
    t1, s1 = wl.schedule(wl.pattern("constant", high, seconds[0]), n, "poisson_rr", np.random.SeedSequence(seed))
    t2, s2 = wl.schedule(wl.pattern("constant", 10, seconds[1]), n, "poisson_rr", np.random.SeedSequence(seed + 1))
    return wl.Workload.broadcasts(n, np.r_[t1, t2 + seconds[0]], np.r_[s1, s2], sum(seconds))


@pytest.mark.parametrize("policy_name, p_star", [("model", 1e-5), ("authors_table", 1e-5),
                                                 ("formula_only", 0.003)])
def test_dcs_grows_contracts_and_terminates_with_rounds(policy_name, p_star):
    """Termination with rounds active: every message delivered everywhere, nothing left blocked,
    pending or deferred, every round decided, clocks = the sum of the delivered increments."""
    run = simulate(ramp(), kernel.Config(policy=policy_name, p_star=p_star))
    report = run.verify()
    assert report.missing == 0 and report.duplicates == 0 and run.invariants(report) == []
    # grew at 200 msg/s; one component per round back down at 10 msg/s (spec §2.9: 15-40 s)
    assert run.sec_max[15] >= 400 and run.sec_max[78] <= 100
    deact = run.rounds[run.rounds[:, 0] == 1]
    assert (deact[:, 2] == 1).sum() >= 5 and (deact[:, 2] >= 0).all()
    assert run.counters["control_messages"] == 3 * (run.n_nodes - 1) * len(deact)
    assert run.left_blocked == run.left_pending == run.left_deferred == 0


def test_remove_rounds_in_a_stress_run():
    """§2.10: remove rounds enabled under load changes; a re-created index is a new generation,
    and the run still terminates."""
    config = kernel.Config(remove_rounds=True, t_remove_hold=2.0)
    run = simulate(ramp(n=40, seconds=(15.0, 45.0)), config)
    report = run.verify()
    assert report.missing == 0 and run.counters["removals"] > 0
    assert run.counters["stale_generations"] == 0


@pytest.mark.parametrize("seed", range(6))
def test_random_small_runs_terminate(seed):
    g = np.random.default_rng(seed)
    n = int(g.integers(2, 40))
    w = wl.Workload.from_pattern(wl.pattern("constant", float(g.uniform(20, 400)), 6.0), n,
                                 str(g.choice(wl.SEND_MODELS)), np.random.SeedSequence(seed))
    config = kernel.Config(m_c=int(g.integers(2, 30)), k=2, policy=str(g.choice(policy.DCS_POLICIES)),
                           p_star=float(g.choice([1e-3, 1e-5])), hysteresis=float(g.uniform(0, 0.3)),
                           sincr_mode=str(g.choice(["random", "modulo"])))
    for c in (config, kernel.Config.pc(int(g.integers(2, 60)))):
        run = simulate(w, c, seed)
        report = run.verify()
        assert report.missing == 0 and report.duplicates == 0


@pytest.mark.parametrize("config", [kernel.Config.pc(20), kernel.Config()], ids=["pc", "dcs"])
def test_latencies_under_a_constant_delay(config):
    """Every copy takes 0.25 s: every process receives the messages in broadcast order, so none
    waits and both latencies are the delay.  The DCS's round messages keep the network's delays
    (about 0.1 s): counted as receptions, they would pull the mean below 0.25 s."""
    w = ramp()
    run = simulate(dataclasses.replace(w, delays=np.full((len(w.times), w.n_nodes), 0.25)), config)
    run.verify()
    assert run.counters["waited"] == 0
    assert run.counters["control_messages"] > 0 or config.policy == "static"
    assert run.mean_reception_latency() == pytest.approx(0.25, abs=1e-12)
    assert run.mean_delivery_latency() == pytest.approx(0.25, abs=1e-12)


def test_latencies_under_random_delays():
    """Receptions average the network's delay (normal, mean 0.1 s, sd 0.02 s); deliveries come
    later on average, by the time the messages that failed the clock test waited."""
    run = simulate(ramp(), kernel.Config())
    run.verify()
    assert run.counters["waited"] > 0
    assert run.mean_reception_latency() == pytest.approx(0.1, abs=1e-3)
    assert run.mean_reception_latency() < run.mean_delivery_latency() < 0.2


def test_latencies_are_nan_without_receptions():
    run = simulate(wl.Workload.broadcasts(1, [0.5], [0], 1.0), kernel.Config.pc(4))
    assert np.isnan(run.mean_reception_latency()) and np.isnan(run.mean_delivery_latency())


def test_out_of_order_is_a_measured_rate_but_loss_and_duplicates_are_violations():
    run = simulate(wl.Workload.from_pattern(wl.pattern("constant", 300, 5), 200, "poisson_indep",
                                            np.random.SeedSequence(2)), kernel.Config.pc(8))
    report = run.verify()
    assert report.errors > 0 and run.violations(report) == 0 and run.known_flaws(report)
    dup = dataclasses.replace(run, log_kind=np.append(run.log_kind, 1), log_node=np.append(run.log_node, run.log_node[-1]),
                              log_msg=np.append(run.log_msg, run.log_msg[-1]))
    assert dup.violations(dup.oracle_report()) == 1 and dup.invariants(dup.oracle_report())
    lost = dataclasses.replace(run, log_kind=run.log_kind[:-1], log_node=run.log_node[:-1], log_msg=run.log_msg[:-1])
    assert lost.undelivered(lost.oracle_report()) == 1 and lost.invariants(lost.oracle_report())


def test_the_counting_invariant_catches_a_wrong_clock():
    run = simulate(wl.Workload.from_pattern(wl.pattern("constant", 50, 3), 10, "poisson_rr",
                                            np.random.SeedSequence(5)), kernel.Config())
    report = run.verify()
    clocks_ = run.final_clocks.copy()
    clocks_[3, 0] += 1
    broken = dataclasses.replace(run, final_clocks=clocks_)
    assert any("counting invariant" in p for p in broken.invariants(report))


def test_variants_of_one_replication_replay_the_same_copies():
    w = wl.Workload.from_pattern(wl.pattern("constant", 100, 4), 30, "poisson_rr", np.random.SeedSequence(6))
    a, b = simulate(w, kernel.Config.pc(20)), simulate(w, kernel.Config())
    arrivals_a = a.log_kind == 1
    assert a.counters["receptions"] == b.counters["receptions"]
    # the first copy of each message reaches the same process first in both runs
    first = lambda r: [int(r.log_node[(r.log_msg == m) & (r.log_kind == 1)][0]) for m in range(20)]
    assert first(a) == first(b) and arrivals_a.sum() == (b.log_kind == 1).sum()


def test_load_balancing_timeline():
    """§2.11 / §6.4 at N = 200: moves at the 70 s and 90 s checks only."""
    t, s = wl.weighted_groups(100, 130, 200, 4, 50, 0.25, 0.75, np.random.SeedSequence(7))
    config = kernel.Config(c_max=4, policy="none", rounds=False, initial_components=4,
                           initial_sincr="modulo", balancing=True)
    run = simulate(wl.Workload.broadcasts(200, t, s, 130), config)
    run.verify()
    moved = {int(t): int(m) for t, m in run.moves if m > 0}
    assert sorted(moved) == [70, 90] and 15 <= moved[70] <= 35
    shares = run.sec_components[95:130].sum(axis=0) / run.sec_broadcasts[95:130].sum()
    assert shares.max() < 0.32


def test_evaluator_against_a_direct_run():
    """The Figure 5 evaluator (exact execution + shadow clock tests) counts about what a direct
    run of the protocol on the same replication counts with the oracle (spec §6.1 step 5)."""
    seed = np.random.SeedSequence(8)
    w = wl.Workload.from_pattern(wl.pattern("constant", 150, 12), 150, "poisson_rr", seed)
    ev = shadow.evaluate(w, [15, 40], net=NET, seed=seed, t_warm=2.0)
    assert ev.report.ok  # the exact execution is causal and complete
    for m, shadow_errors in zip([15, 40], ev.errors):
        run = kernel.simulate(w, net=NET, seed=seed, config=kernel.Config.pc(m))
        report = run.verify(per_delivery=True)
        direct = int((report.delivery_error & (run.msg_time[run.log_msg] >= 2.0)).sum())
        assert shadow_errors > 0 and abs(direct - shadow_errors) <= max(3, 0.1 * shadow_errors)


def test_evaluator_counts_the_figure1_false_delivery():
    """T-PC-2 through the evaluator: the clock of size 3 with Figure 1's map (plus p4 = {0,1})
    would deliver m' at p3 before m: one would-be error."""
    delays = np.array([[0, 1.0, 20.0, 1.5], [1.5, 2.0, 0.7, 0], [4.0, 0, 1.0, 1.0]])
    w = wl.Workload(4, np.array([0.0, 0.5, 2.0]), np.array([0, 3, 1]), np.zeros(3, np.int64), 25.0, delays=delays)
    ev = shadow.evaluate(w, [3], net=NET, seed=np.random.SeedSequence(0), t_warm=0.0,
                         maps=[[(0, 1), (0, 2), (1, 2), (0, 1)]])
    assert ev.errors.tolist() == [1] and ev.waited == 1 and ev.report.ok
