"""The worked examples of seed 002, step by step on the compiled kernel: Figure 1 (causal
broadcast with probabilistic clocks, spec §1.7 T-PC-1/T-PC-2), Figure 3 and Figure 4 (DCS
broadcast and expansion, spec §2.12 T-DCS-1/T-DCS-2), the deactivation round (T-DCS-3), the
remove round (§2.10) and the comparison operators (T-DCS-4).

Processes p1, p2, p3, p4 of the paper are ids 0, 1, 2, 3.  Every copy's delay is fixed by the
scenario (``Workload.delays``), so ``until`` replays the run up to a step and the state is read
there."""

import numpy as np
import pytest

from causal_lab.engine import network
from causal_lab.families.probabilistic_clocks import clocks, kernel
from causal_lab.families.probabilistic_clocks.workload import (
    OP_BROADCAST as B, OP_DEACTIVATION_ROUND as DEACT, OP_EXPAND as EXPAND,
    OP_REMOVE_ROUND as REMOVE, Workload)

NET = network.Network(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=0.1, tpp_sigma=0.02,
                      tpp_negative="clip")
FIG1_F = [(0, 1), (0, 2), (1, 2)]  # f(p1) = {0,1}, f(p2) = {0,2}, f(p3) = {1,2}


def scenario(ops, delays, duration=30.0, n=None):
    """ops: (time, process, kind); delays[b][r]: delay of broadcast b's copy to r."""
    times, nodes, kinds = zip(*ops)
    delays = np.asarray(delays, np.float64)
    return Workload(n or delays.shape[1], np.asarray(times, float), np.asarray(nodes),
                    np.asarray(kinds), duration, delays=delays)


def run(w, config, until=np.inf, **kw):
    return kernel.simulate(w, net=NET, seed=np.random.SeedSequence(0), config=config,
                           until=until, keep_state=True, **kw)


def pc_clocks(r):
    return r.state.clock.reshape(r.n_nodes, -1).tolist()


# ------------------------------------------------------------------------------------------
# Figure 1: probabilistic clocks (T-PC-1, T-PC-2)
# ------------------------------------------------------------------------------------------

# p1 broadcasts m at 0 (p2 at 1, p3 at 4); p2 broadcasts m' at 2 (p3 at 3, p1 at 5)
FIG1 = scenario([(0.0, 0, B), (2.0, 1, B)], [[0, 1.0, 4.0], [3.0, 0, 1.0]])
PC3 = kernel.Config.pc(3)


@pytest.mark.parametrize("until, v1, v2, v3, pending_at_p3", [
    (0.5, [1, 1, 0], [0, 0, 0], [0, 0, 0], 0),  # 1: p1 broadcasts m
    (1.5, [1, 1, 0], [1, 1, 0], [0, 0, 0], 0),  # 2: p2 delivers m
    (2.5, [1, 1, 0], [2, 1, 1], [0, 0, 0], 0),  # 3: p2 broadcasts m'
    (3.5, [1, 1, 0], [2, 1, 1], [0, 0, 0], 1),  # 4: m' pending at p3 (needs [1,1,0])
    (4.5, [1, 1, 0], [2, 1, 1], [2, 1, 1], 0),  # 5: p3 delivers m, then m'
    (5.5, [2, 1, 1], [2, 1, 1], [2, 1, 1], 0),  # 6: p1 delivers m'
])
def test_figure1_causal_broadcast_with_probabilistic_clocks(until, v1, v2, v3, pending_at_p3):
    r = run(FIG1, PC3, until, f=FIG1_F)
    assert pc_clocks(r) == [v1, v2, v3]
    assert r.state.p_len[2] == pending_at_p3
    if until == 2.5:
        assert kernel.message_clock(r.state, 1) == [[2, 1, 1]]  # m'.V


def test_figure1_order_at_p3_and_no_error():
    r = run(FIG1, PC3, f=FIG1_F)
    at_p3 = r.log_msg[(r.log_node == 2) & (r.log_kind == 1)]
    assert at_p3.tolist() == [0, 1]  # m, then m'
    report = r.verify()
    assert report.errors == 0 and report.deliveries == 6 and r.counters["waited"] == 1


def test_figure1_latencies_are_the_worked_instants():
    """Receptions: m at p2 after 1 s and at p3 after 4 s, m' at p3 after 1 s and at p1 after
    3 s (mean 9/4).  Deliveries are the same instants except m' at p3, pending from 3 to 4: 2 s
    after its broadcast (mean 10/4).  The senders' own deliveries do not count."""
    r = run(FIG1, PC3, f=FIG1_F)
    assert r.counters["receptions"] == r.counters["deliveries"] == 4
    assert r.mean_reception_latency() == pytest.approx(9 / 4, abs=1e-9)
    assert r.mean_delivery_latency() == pytest.approx(10 / 4, abs=1e-9)


def test_figure1_false_delivery_is_counted_by_the_oracle():
    """T-PC-2: p4 (f = {0,1}) broadcasts m4 concurrently; p3 delivers m4, then m' passes the
    clock test although m is missing: one out-of-order delivery, counted by the oracle (the
    protocol's measured error rate, not a violation of our code)."""
    w = scenario([(0.0, 0, B), (0.5, 3, B), (2.0, 1, B)],
                 [[0, 1.0, 20.0, 1.5], [1.5, 2.0, 0.7, 0], [4.0, 0, 1.0, 1.0]])
    r = run(w, PC3, f=FIG1_F + [(0, 1)])
    report = r.verify(per_delivery=True)
    assert report.errors == 1 and report.error_example == ((2, 2),)  # m' at p3
    assert r.violations(report) == 0 and r.known_flaws(report)
    flagged = np.flatnonzero(report.delivery_error)
    assert (r.log_node[flagged], r.log_msg[flagged]) == (2, 2)
    assert r.invariants(report) == []


# ------------------------------------------------------------------------------------------
# Figure 3: DCS broadcast (T-DCS-1)
# ------------------------------------------------------------------------------------------


def dcs_config(**kw):
    return kernel.Config(m_c=1, k=1, c_max=4, policy="none", rounds=False, **kw)


ONE_ENTRY = [(0,), (0,), (0,)]  # M_c = 1, f(p) = {0}


def two_components_p3_on_c1(st):
    st.sincr[:] = [1, 1, 2]  # S_incr(p1) = S_incr(p2) = {0}, S_incr(p3) = {1}


# p1 broadcasts m at 0 (p3 at 1, p2 at 5); p3 broadcasts m' at 2 (p2 at 4, p1 at 6)
FIG3 = scenario([(0.0, 0, B), (2.0, 2, B)], [[0, 5.0, 1.0], [4.0, 2.0, 0]])


@pytest.mark.parametrize("until, d1, d2, d3, pending_at_p2", [
    (0.5, [[1], [0]], [[0], [0]], [[0], [0]], 0),
    (1.5, [[1], [0]], [[0], [0]], [[1], [0]], 0),
    (2.5, [[1], [0]], [[0], [0]], [[1], [1]], 0),
    (4.5, [[1], [0]], [[0], [0]], [[1], [1]], 1),  # m' pending at p2: C_0 not in S, 1 > 0
    (5.5, [[1], [0]], [[1], [1]], [[1], [1]], 0),  # m, then m'
    (6.5, [[1], [1]], [[1], [1]], [[1], [1]], 0),
])
def test_figure3_causal_broadcast_with_dcs(until, d1, d2, d3, pending_at_p2):
    r = run(FIG3, dcs_config(initial_components=2), until, f=ONE_ENTRY,
            prepare=two_components_p3_on_c1)
    st = r.state
    assert [kernel.components(st, i) for i in range(3)] == [d1, d2, d3]
    assert st.p_len[1] == pending_at_p2
    if until == 0.5:
        assert kernel.message_clock(st, 0) == [[1], [0]] and st.m_sincr[0] == 1  # (1)
    if until == 2.5:
        assert kernel.message_clock(st, 1) == [[1], [1]] and st.m_sincr[1] == 2  # (2)


def test_figure3_delivery_order_at_p2():
    r = run(FIG3, dcs_config(initial_components=2), f=ONE_ENTRY, prepare=two_components_p3_on_c1)
    assert r.log_msg[(r.log_node == 1) & (r.log_kind == 1)].tolist() == [0, 1]
    assert r.verify().errors == 0


# ------------------------------------------------------------------------------------------
# Figure 4: expansion (T-DCS-2); scripted draws: p1 picks 1, p2 picks 0, p3 picks 1
# ------------------------------------------------------------------------------------------

FIG4 = scenario(
    [(0.0, 0, EXPAND), (1.0, 0, B), (2.0, 2, B), (6.0, 1, B)],
    [[0, 4.0, 7.0],  # m from p1 at 1: p2 at 5, p3 at 8
     [7.0, 1.0, 0],  # m' from p3 at 2: p2 at 3, p1 at 9
     [4.0, 0, 1.0]],  # m'' from p2 at 6: p3 at 7, p1 at 10
)
FIG4_SCRIPT = [[1], [0], [1]]


@pytest.mark.parametrize("until, d1, d2, d3, pending_at_p3", [
    (0.5, [[0], [0]], [[0]], [[0]], 0),  # 1: p1 expands (Activate false -> Add), S1 = {1}
    (1.5, [[0], [1]], [[0]], [[0]], 0),  # 2: p1 broadcasts m = {[0],[1]}, {1}
    (2.5, [[0], [1]], [[0]], [[1]], 0),  # 3: p3 broadcasts m' = {[1]}, {0}
    (3.5, [[0], [1]], [[1]], [[1]], 0),  # 4: p2 delivers m'
    (5.5, [[0], [1]], [[1], [1]], [[1]], 0),  # 5: p2 adds C_1, S2 = {0}, delivers m
    (6.5, [[0], [1]], [[2], [1]], [[1]], 0),  # 6: p2 broadcasts m'' = {[2],[1]}, {0}
    (7.5, [[0], [1]], [[2], [1]], [[1], [0]], 1),  # 7: p3 adds, S3 = {1}; C_1: 1 > 0, pending
    (8.5, [[0], [1]], [[2], [1]], [[2], [1]], 0),  # 8: p3 delivers m, then m''
    (10.5, [[2], [1]], [[2], [1]], [[2], [1]], 0),  # 9: p1 delivers m', then m''
])
def test_figure4_expansion(until, d1, d2, d3, pending_at_p3):
    r = run(FIG4, dcs_config(), until, f=ONE_ENTRY, script=FIG4_SCRIPT)
    st = r.state
    assert [kernel.components(st, i) for i in range(3)] == [d1, d2, d3]
    assert st.p_len[2] == pending_at_p3
    if until == 1.5:
        assert kernel.message_clock(st, 0) == [[0], [1]] and st.m_sincr[0] == 2
    if until == 6.5:
        assert kernel.message_clock(st, 2) == [[2], [1]] and st.m_sincr[2] == 1
    if until >= 7.5:
        assert st.sincr.tolist()[1:] == [1, 2]  # S2 = {0}, S3 = {1}


def test_figure4_p1_order_does_not_matter():
    """Step 9 in the other order: m'' reaches p1 before m' and waits for it."""
    delays = np.array(FIG4.delays)
    delays[1, 0], delays[2, 0] = 9.0, 2.0  # m' at 11, m'' at 8
    w = Workload(3, FIG4.times, FIG4.nodes, FIG4.ops, FIG4.duration, delays=delays)
    r = run(w, dcs_config(), f=ONE_ENTRY, script=FIG4_SCRIPT)
    assert kernel.components(r.state, 0) == [[2], [1]]
    assert r.log_msg[(r.log_node == 0) & (r.log_kind == 1)].tolist() == [1, 2]
    assert r.verify().errors == 0 and r.counters["adds"] == 3


# ------------------------------------------------------------------------------------------
# Deactivation round (T-DCS-3) and remove round (§2.10)
# ------------------------------------------------------------------------------------------

ROUND_CONFIG = kernel.Config(m_c=2, k=1, c_max=4, policy="none", rounds=True,
                             initial_components=2, remove_rounds=True)
ROUND_F = [(0,), (0,), (0,)]


def c1_equal(values=(3, 1), sincr=(1, 1, 1)):
    def prepare(st):
        clock = st.clock.reshape(3, 4, 2)
        clock[:, 1] = values
        st.sincr[:] = sincr
    return prepare


def deact_rounds(times, extra_ops=(), extra_delays=()):
    ops = [(t, 0, DEACT) for t in times] + list(extra_ops)
    ops.sort()
    return Workload(3, np.array([o[0] for o in ops]), np.array([o[1] for o in ops]),
                    np.array([o[2] for o in ops]), 20.0,
                    delays=np.asarray(extra_delays, float).reshape(-1, 3))


def test_deactivation_round_succeeds_and_keeps_the_values():
    r = run(deact_rounds([1.0]), ROUND_CONFIG, f=ROUND_F, prepare=c1_equal())
    assert r.rounds.tolist() == [[1, 1, 1]]  # a deactivation of C_1 that succeeded
    assert r.state.active.tolist() == [1, 1, 1] and r.state.n_comp.tolist() == [2, 2, 2]
    assert [kernel.components(r.state, i)[1] for i in range(3)] == [[3, 1]] * 3
    assert r.counters["control_messages"] == 6  # 2 DEACT + 2 ACK + 2 DECIDE
    assert r.left_blocked == 0 and r.verify().deliveries == 0


def test_deactivation_round_fails_when_a_process_is_ahead():
    def ahead(st):
        c1_equal()(st)
        st.clock.reshape(3, 4, 2)[2, 1] = [4, 1]
    r = run(deact_rounds([1.0]), ROUND_CONFIG, f=ROUND_F, prepare=ahead)
    assert r.rounds.tolist() == [[1, 1, 0]] and r.counters["deact_fail_cond2"] == 1
    assert r.state.active.tolist() == [2, 2, 2]


def test_deactivation_round_fails_while_someone_increments_then_the_retry_succeeds():
    r = run(deact_rounds([1.0, 5.0]), ROUND_CONFIG, f=ROUND_F, prepare=c1_equal(sincr=(1, 2, 1)),
            script=[[-1], [0], [-1]])
    assert r.rounds[:, 2].tolist() == [0, 1] and r.counters["deact_fail_cond3"] == 1
    assert r.state.sincr.tolist() == [1, 1, 1]  # p2 contracted softly: S_incr = {0}
    assert r.state.active.tolist() == [1, 1, 1]


def test_a_message_with_news_reactivates_the_component():
    """After the round, p3 expands (Activate: C_1 again, S = {1}) and broadcasts twice: the
    second message carries C_1 = [5, 1]; p1 re-activates C_1 and re-assigns S_incr."""
    ops = [(6.0, 2, EXPAND), (7.0, 2, B), (8.0, 2, B)]
    w = deact_rounds([1.0], ops, [[5.0, 1.0, 0], [3.0, 1.0, 0]])  # to p1 at 12 and 11
    r = run(w, ROUND_CONFIG, f=ROUND_F, prepare=c1_equal(), script=[[1], [0], [1]], until=10.5)
    st = r.state
    assert st.active.tolist() == [1, 2, 2] and kernel.message_clock(st, 1)[1] == [5, 1]
    r = run(w, ROUND_CONFIG, f=ROUND_F, prepare=c1_equal(), script=[[1], [0], [1]])
    assert r.state.active.tolist() == [2, 2, 2] and r.state.sincr[0] == 2  # scripted draw 1
    assert kernel.components(r.state, 0)[1] == [5, 1] and r.counters["reactivations"] == 2
    assert r.verify().errors == 0


def test_remove_round_frees_the_inactive_component_everywhere():
    w = deact_rounds([1.0], [(3.0, 0, REMOVE)])
    r = run(w, ROUND_CONFIG, f=ROUND_F, prepare=c1_equal())
    assert r.rounds[:, [0, 2]].tolist() == [[1, 1], [2, 1]]
    assert r.state.n_comp.tolist() == [1, 1, 1] and r.counters["removals"] == 3
    assert r.state.gen.reshape(3, 4)[:, 1].tolist() == [1, 1, 1]  # a new generation of C_1


def test_remove_round_waits_for_messages_not_yet_delivered():
    """p1 broadcast a message (with C_1 inactive) that p3 has not delivered when the REMOVE
    arrives: p3's prefix of p1 is short, the round fails."""
    ops = [(2.0, 0, B), (3.0, 0, REMOVE)]
    w = deact_rounds([1.0], ops, [[0, 0.5, 9.0]])
    r = run(w, ROUND_CONFIG, f=ROUND_F, prepare=c1_equal())
    assert r.rounds[:, [0, 2]].tolist() == [[1, 1], [2, 0]]
    assert r.state.n_comp.tolist() == [2, 2, 2]
    assert r.verify().errors == 0


# ------------------------------------------------------------------------------------------
# Comparison (T-DCS-4) and the generic rules
# ------------------------------------------------------------------------------------------


def test_dcs_comparison():
    assert clocks.dcs_leq([[1, 0]], [[1, 0], [0, 0]]) and not clocks.dcs_less([[1, 0]], [[1, 0], [0, 0]])
    assert clocks.dcs_less([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    assert clocks.dcs_concurrent([[1, 0]], [[0, 1]])
    equal = [[2, 1], [0, 3]]
    assert clocks.dcs_leq(equal, equal) and not clocks.dcs_less(equal, equal)
    assert not clocks.dcs_leq([[0], [0]], [[5]])  # more components is never <=


def test_generic_rules():
    assert clocks.pc_r1([0, 0, 0], (0, 1)) == [1, 1, 0]
    assert clocks.pc_r2([1, 0, 0], [0, 2, 1], (1, 2)) == [1, 3, 2]
    assert clocks.pc_less([1, 1, 0], [2, 1, 1]) and not clocks.pc_less([1, 1, 0], [1, 1, 0])
    # R2 for DCS: Add() up to |D_m|, maximum, then R1 on S_incr
    assert clocks.dcs_r2([[1]], [[0], [2]], (0,), {1}) == [[1], [3]]
