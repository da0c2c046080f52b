"""Experiments of seed 002 §V (probabilistic_clocks spec §6.1-6.4, amendments 2-4).

* ``load_pattern``    Figures 6 and 8: the load patterns and the broadcasts each send model
                      draws from them (workloads only, nothing simulated);
* ``pc_clock_size``   Figure 5: per load, one exact execution at N = 2000 evaluating every clock
                      size of ``SIZES`` (``shadow``), plus a direct probabilistic-clock run of one
                      size on the same replication (the evaluator's check, spec §6.1 step 5);
* ``dcs_vs_pc``       Figures 7 and 9: one replication runs the DCS (R1), then a probabilistic
                      clock of the DCS's time-averaged size (R2, the paper's procedure) and, for
                      the ``spec`` variant, one of the paper's size (R3), all on the same
                      broadcasts and delays.  ``variant`` names the policy and send model:
                      ``spec`` (§2.8 policy, poisson_rr), ``authors_policy`` (authors_table,
                      amendment 2), ``deterministic_rr`` and ``poisson_indep`` (send models,
                      amendment 4 and §6.2);
* ``dcs_balancing``   Figure 10: four components, the skew at 50 s, load balancing on or off.

Every run goes through the oracle and the family's invariants (``Run.verify``): duplicates, lost
messages, non-termination and broken counting invariants stop the sweep; out-of-order
deliveries are the measured error rate.  Per-second series are list columns of the row.
"""

from __future__ import annotations

import time

import numpy as np

from causal_lab.engine import network
from causal_lab.experiment import Experiment
from causal_lab.families.probabilistic_clocks import kernel, shadow, workload
from causal_lab.params import Param, ParameterError, non_negative, positive

SIZES = (25, 35, 50, 70, 100, 140, 200, 280, 400, 560, 800, 1120, 1600, 2240, 3200)  # §6.1
LOADS = (10.0, 25.0, 50.0, 75.0, 100.0, 150.0, 200.0)
DIRECT_SIZE = {100.0: 100, 200.0: 280}  # §6.1 step 5: the direct runs that check the evaluator
PAPER_SIZE = {"bell": 260, "bell_authors": 260, "random": 97, "random_authors": 97}
VARIANTS = {  # name -> (policy, send model, run R3 with the paper's size)
    "spec": ("model", "poisson_rr", True),
    "authors_policy": ("authors_table", "poisson_rr", False),
    "deterministic_rr": ("model", "deterministic_rr", False),
    "poisson_indep": ("model", "poisson_indep", False),
}
T_WARM = 5.0  # §5.3


def _nodes(default: int) -> Param:
    return Param("n_nodes", int, default, "number of processes N", check=lambda n: 1 <= n < kernel.NODE_LIMIT,
                 allowed=f"1..{kernel.NODE_LIMIT - 1}")


def _probability(x: float) -> bool:
    return 0.0 < x < 1.0


NET = network.parameters(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=0.1, tpp_sigma=0.02)
K = Param("k", int, 2, "entries per process |f(p)|", check=lambda k: k >= 1, allowed=">= 1")
M_C = Param("m_c", int, 50, "entries per DCS component M_c", check=lambda m: m >= 1, allowed=">= 1")


def _net(point) -> network.Network:
    return network.from_point(point, tpp_negative="clip")


def _check_network(point) -> None:
    if point["t_pc"] != 0 or point["t_t"] != 0:
        raise ParameterError("parameters 't_pc' and 't_t': direct broadcast without sending queue "
                             "(spec §5.1); allowed: 0")


def _check_sizes(point, *names) -> None:
    """Clock sizes must hold the k entries of a process."""
    _check_network(point)
    for name in names:
        m = point[name]
        if m > 0 and m < point["k"]:
            raise ParameterError(f"parameter {name!r}: {m} entries is below the k = {point['k']} "
                                 f"entries per process; allowed: >= k (or 0: none)")


def _verified(run: kernel.Run):
    report = run.verify(per_delivery=True)
    return run, report


def _run_metrics(prefix: str, run: kernel.Run, report, seconds: int) -> dict:
    """Oracle counts and per-second series of one run."""
    return {
        f"{prefix}_errors": report.errors,
        f"{prefix}_messages_with_error": report.messages_with_error,
        f"{prefix}_deliveries": report.deliveries,
        f"{prefix}_waited": run.counters["waited"],
        f"{prefix}_errors_s": run.errors_per_second(report)[:seconds].tolist(),
    }


def _dcs_metrics(run: kernel.Run, seconds: int) -> dict:
    """The DCS's sizes (amendment 2: three definitions of "average size") and its rounds."""
    c = run.counters
    rounds = run.rounds
    deact = rounds[rounds[:, 0] == 1] if len(rounds) else rounds
    return {
        "size_time_mean": float(run.sec_mean[:seconds].mean()),
        "size_time_max": float(run.sec_max[:seconds].mean()),
        "size_message_mean": c["attached_entries"] / max(c["broadcasts"], 1),
        "size_max": int(run.sec_max[:seconds].max()),
        "deact_rounds": int(len(deact)), "deact_ok": int((deact[:, 2] == 1).sum()) if len(deact) else 0,
        **{f"deact_fail_cond{k}": c[f"deact_fail_cond{k}"] for k in range(1, 5)},
        "expansions": c["expansions"], "reactivations": c["reactivations"],
        "control_messages": c["control_messages"], "control_integers": c["control_integers"],
        "deferred": c["deferred"], "blocked_seconds": run.blocked_time,
        "size_mean_s": run.sec_mean[:seconds].tolist(), "size_min_s": run.sec_min[:seconds].tolist(),
        "size_max_s": run.sec_max[:seconds].tolist(),
        "attached_s": (run.sec_attached[:seconds] / np.maximum(run.sec_broadcasts[:seconds], 1)).tolist(),
    }


# ------------------------------------------------------------------------------------------
# Figures 6 and 8: the load patterns
# ------------------------------------------------------------------------------------------


def replicate_load(point, seed: np.random.SeedSequence) -> dict:
    p = workload.pattern(point["pattern"])
    w = workload.Workload.from_pattern(p, 1000, point["send_model"], seed)
    seconds = int(np.ceil(p.duration))
    per_second = np.bincount(w.times.astype(np.int64), minlength=seconds)[:seconds]
    target = p.rate(np.arange(seconds) + 0.5)
    return {
        "broadcasts": len(w.times), "mean_load": p.mean(), "min_load": float(target.min()),
        "max_load": float(target.max()), "high_load_share": float((p.rate((np.arange(seconds * 100) + 0.5) / 100) >= 100).mean()),
        "broadcasts_high_load": int(per_second[target >= 100].sum()),
        "target_s": target.tolist(), "broadcasts_s": per_second.tolist(),
    }


LOAD_PATTERN = Experiment(
    name="load_pattern",
    description="Load patterns of seed 002 §V-B and the broadcasts the send models draw (no simulation)",
    source="002 §V-B Figures 6 and 8; spec §5.2, §6.2, §6.3, A.7, A.8, amendments 3-4",
    params=(
        Param("pattern", str, "bell", "load pattern", choices=tuple(p for p in workload.PATTERNS if p != "constant")),
        Param("send_model", str, "poisson_rr", "how instants are drawn from the load", choices=workload.SEND_MODELS),
        *NET,
    ),
    grid={scale: {"pattern": ["bell", "bell_authors", "random", "random_authors"],
                  "send_model": list(workload.SEND_MODELS)} for scale in ("smoke", "default", "paper")},
    reps={"smoke": 1, "default": 1, "paper": 3},
    replicate=replicate_load,
    validate_point=_check_network,
)


# ------------------------------------------------------------------------------------------
# Figure 5: required clock size vs load
# ------------------------------------------------------------------------------------------


def replicate_size(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    n, load = point["n_nodes"], point["load"]
    duration = T_WARM + point["broadcasts"] / load
    w = workload.Workload.from_pattern(workload.pattern("constant", load, duration), n,
                                       "poisson_rr", seed)
    net = _net(point)
    ev = shadow.evaluate(w, SIZES, net=net, seed=seed, k=point["k"], t_warm=T_WARM)
    if not ev.report.ok:
        raise AssertionError(f"the exact execution is not causal or incomplete: {ev.report}")
    row = {"deliveries": ev.deliveries, "waited": ev.waited, "evaluations": ev.evaluations,
           **{f"errors_M{m}": int(e) for m, e in zip(SIZES, ev.errors)}}
    size = point["direct_size"] or DIRECT_SIZE.get(load, 0)
    row["checked_size"] = size
    row["direct_errors"] = -1
    if size:
        run, report = _verified(kernel.simulate(w, net=net, seed=seed, config=kernel.Config.pc(size, point["k"])))
        warm = run.msg_time[run.log_msg] >= T_WARM
        row["direct_errors"] = int((report.delivery_error & warm).sum())
        row["direct_deliveries"] = int(((run.log_kind == 1) & warm).sum())
    row["wall_seconds"] = time.perf_counter() - started
    return row


PC_CLOCK_SIZE = Experiment(
    name="pc_clock_size",
    description="Per-delivery error rate of probabilistic clocks of every size, per load (Figure 5)",
    source="002 §V-A Figure 5; spec §6.1, §8.4",
    params=(
        _nodes(2000),
        Param("load", float, 100.0, "system load λ (broadcasts per second)", check=positive, allowed="> 0"),
        Param("broadcasts", int, 5003, "broadcasts after the 5-s warm-up", check=lambda x: x >= 1, allowed=">= 1"),
        K,
        Param("direct_size", int, 0, "clock size of the direct check run (0: the spec's, at loads 100 and 200)",
              check=lambda x: x >= 0, allowed=">= 0"),
        *NET,
    ),
    grid={
        "smoke": {"n_nodes": [300], "load": [50.0, 200.0], "broadcasts": [150]},
        "default": {"load": list(LOADS), "broadcasts": [1500]},
        "paper": {"load": list(LOADS), "broadcasts": [5003]},
    },
    reps={"smoke": 1, "default": 1, "paper": 1},
    replicate=replicate_size,
    validate_point=lambda p: _check_sizes(p, "direct_size"),
    variant_params=("direct_size",),
)


# ------------------------------------------------------------------------------------------
# Figures 7 and 9: DCS against probabilistic clocks on a load pattern
# ------------------------------------------------------------------------------------------


def _config(point, policy_name: str, independent: bool) -> kernel.Config:
    return kernel.Config(m_c=point["m_c"], k=point["k"], c_max=point["c_max"], policy=policy_name,
                         p_star=point["p_star"], hysteresis=point["hysteresis"],
                         independent_senders=independent)


def replicate_pattern(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    policy_name, send_model, reference = VARIANTS[point["variant"]]
    p = workload.pattern(point["pattern"])
    w = workload.Workload.from_pattern(p, point["n_nodes"], send_model, seed)
    keep = w.times < point["duration"]
    w = workload.Workload.broadcasts(w.n_nodes, w.times[keep], w.nodes[keep], point["duration"])
    seconds = int(np.ceil(point["duration"]))
    net = _net(point)
    config = _config(point, policy_name, send_model == "poisson_indep")
    dcs, report = _verified(kernel.simulate(w, net=net, seed=seed, config=config))
    row = {"broadcasts": len(w.times), "broadcasts_s": dcs.sec_broadcasts[:seconds].tolist(),
           **_run_metrics("dcs", dcs, report, seconds), **_dcs_metrics(dcs, seconds)}
    del dcs, report
    size = max(point["k"], int(round(row["size_time_mean"])))
    pc, report = _verified(kernel.simulate(w, net=net, seed=seed, config=kernel.Config.pc(size, point["k"])))
    row.update(pc_size=size, **_run_metrics("pc", pc, report, seconds))
    del pc, report
    row["ref_size"] = 0
    if reference and point["reference_size"] >= 0:
        size = point["reference_size"] or PAPER_SIZE[point["pattern"]]
        ref, report = _verified(kernel.simulate(w, net=net, seed=seed, config=kernel.Config.pc(size, point["k"])))
        row.update(ref_size=size, **_run_metrics("ref", ref, report, seconds))
    row["wall_seconds"] = time.perf_counter() - started
    return row


def _check_pattern(point) -> None:
    _check_sizes(point, "reference_size", "m_c")
    p = workload.pattern(point["pattern"])
    if point["duration"] > p.duration:
        raise ParameterError(f"parameter 'duration': {point['duration']} s is longer than the "
                             f"pattern; allowed: (0, {p.duration:g}]")


DCS_VS_PC = Experiment(
    name="dcs_vs_pc",
    description="DCS (R1) vs a probabilistic clock of its average size (R2) and of the paper's (R3)",
    source="002 §V-B Figures 7 and 9; spec §6.2, §6.3, amendments 2-4",
    params=(
        Param("pattern", str, "bell", "load pattern", choices=tuple(PAPER_SIZE)),
        Param("variant", str, "spec", "policy and send model: " + "; ".join(
            f"{k} = {v[0]}, {v[1]}" for k, v in VARIANTS.items()), choices=tuple(VARIANTS)),
        _nodes(1000),
        Param("duration", float, 850.0, "seconds of the pattern to run (the pattern lasts 850 s)",
              check=positive, allowed="> 0 and at most the pattern's 850 s"),
        K, M_C,
        Param("c_max", int, 32, "most DCS components", check=lambda c: 1 <= c <= kernel.C_MAX_LIMIT,
              allowed=f"1..{kernel.C_MAX_LIMIT}"),
        Param("p_star", float, 1e-5, "target error probability per delivery P* of the sizing policy",
              check=_probability, allowed="0 < P* < 1"),
        Param("hysteresis", float, 0.15, "hysteresis h of the sizing policy", check=lambda h: 0 <= h < 1,
              allowed="0 <= h < 1"),
        Param("reference_size", int, 0, "R3's clock size (0: the paper's, 260 or 97; -1: no R3 run)",
              check=lambda x: x >= -1, allowed="-1, 0 or >= k"),
        *NET,
    ),
    grid={
        "smoke": {"n_nodes": [200], "duration": [240.0], "variant": ["spec"]},
        # the first bell / the first peak at the paper's N (the error level depends on N
        # beyond proportion: processes sharing both entries hide each other's deficits); the
        # sensitivities of amendments 2-4 need the paper scale's budget
        "default": {"duration": [350.0], "variant": ["spec"]},
        "paper": {"variant": list(VARIANTS)},
    },
    reps={"smoke": 1, "default": 1, "paper": 3},
    replicate=replicate_pattern,
    validate_point=_check_pattern,
    variant_params=("variant", "p_star", "hysteresis", "reference_size", "c_max"),
)


# ------------------------------------------------------------------------------------------
# Figure 10: load balancing
# ------------------------------------------------------------------------------------------


def replicate_balancing(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    n, groups = point["n_nodes"], point["components"]
    times, senders = workload.weighted_groups(point["load"], point["duration"], n, groups,
                                              point["skew_at"], 1.0 / groups, point["skewed_share"], seed)
    w = workload.Workload.broadcasts(n, times, senders, point["duration"])
    config = kernel.Config(m_c=point["m_c"], k=point["k"], c_max=groups, policy="none",
                           rounds=False, initial_components=groups, initial_sincr="modulo",
                           balancing=point["balancing"], balance_ratio=point["ratio"])
    run, report = _verified(kernel.simulate(w, net=_net(point), seed=seed, config=config))
    seconds = int(np.ceil(point["duration"]))
    checks = run.moves[run.moves[:, 0] > 0]
    shares = run.sec_components[:seconds] / np.maximum(run.sec_broadcasts[:seconds, None], 1)
    return {
        **_run_metrics("run", run, report, seconds), "broadcasts": len(times),
        "moves": run.counters["balancing_moves"], "check_times": checks[:, 0].tolist(),
        "check_movers": checks[:, 1].astype(int).tolist(),
        **{f"share_c{c}_s": shares[:, c].tolist() for c in range(groups)},
        "wall_seconds": time.perf_counter() - started,
    }


DCS_BALANCING = Experiment(
    name="dcs_balancing",
    description="Load balancing of DCS components after a skew (Figure 10), with its control run",
    source="002 §V-C Figure 10; spec §2.11, §6.4",
    params=(
        _nodes(1000),
        Param("load", float, 100.0, "system load λ (broadcasts per second)", check=positive, allowed="> 0"),
        Param("duration", float, 130.0, "seconds of broadcasts", check=positive, allowed="> 0"),
        Param("skew_at", float, 50.0, "when group G0 starts sending more", check=non_negative, allowed=">= 0"),
        Param("skewed_share", float, 0.75, "G0's share of broadcasts after the skew", check=_probability,
              allowed="0 < share < 1"),
        Param("components", int, 4, "active components from the start", check=lambda c: 2 <= c <= kernel.C_MAX_LIMIT,
              allowed=f"2..{kernel.C_MAX_LIMIT}"),
        K, M_C,
        Param("ratio", float, 1.3, "over-use ratio ρ of the detector", check=lambda r: r > 1, allowed="> 1"),
        Param("balancing", bool, True, "load balancing on (off: the control run)"),
        *NET,
    ),
    grid={
        "smoke": {"n_nodes": [200], "balancing": [True, False]},
        "default": {"balancing": [True, False]},
        "paper": {"balancing": [True, False]},
    },
    reps={"smoke": 1, "default": 1, "paper": 3},
    replicate=replicate_balancing,
    validate_point=lambda p: _check_sizes(p, "m_c"),
    variant_params=("balancing", "ratio"),
)

EXPERIMENTS = (LOAD_PATTERN, PC_CLOCK_SIZE, DCS_VS_PC, DCS_BALANCING)
