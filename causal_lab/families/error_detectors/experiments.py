"""Experiments of seed 004 (spec probabilistic_clocks §6.5-6.7 and its amendments).

* ``ed_table1`` (Table 1): N = 200, one message every 2 s each (100 msg/s), M = 50, 100 000
  broadcasts after the warm-up.  One replication runs, on the same workload, R1 = Algorithm 1
  with every detector evaluated in shadow (no detector acts: the errors of the probabilistic
  clock alone, and which of them each detector would have flagged), then R2 = the hash detector
  with dependency requests in the authors' mode and in our residual mode.  k = 4, the value the
  authors' code derives (spec amendment 5; ``k = 2`` is the spec's original reading).
* ``ed_figure1`` (Figure 1): request rate of the hash detector with recovery against the load,
  for M = 20, 25, 50.  The authors vary the load through N at a fixed 2-s period (N = 2λ,
  ``scaling = "nodes"``); ``scaling = "period"`` keeps N = 200 and shortens the period.
* ``ed_table2`` (Table 2): the same runs at a constant 110 msg/s for N = 500 ... 5000, M = 50, k = 2.

Each hash run is in the authors' mode or ours (``hash_mode``, a variant parameter: both see the
same workload and APP delays).  Errors, detections and the needed/false-alarm split of requests
are the oracle's (``ground_truth``).  The request rate is #REQ / (#broadcasts × N) over the
messages broadcast after the warm-up (seed 004 §6, spec §3.2).
"""

from __future__ import annotations

import math
import time

import numpy as np

from causal_lab.engine import network
from causal_lab.experiment import Experiment
from causal_lab.families.error_detectors import ground_truth, kernel
from causal_lab.families.error_detectors.workload import JITTER_SD, Schedule
from causal_lab.families.probabilistic_clocks import clocks
from causal_lab.params import Param, ParameterError, non_negative, positive

K_MODES = ("fixed", "formula")
SCALINGS = ("nodes", "period")


def _at_least(lo):
    return lambda x: x >= lo


def k_formula(clock_size: int, load: float) -> int:
    """k of the authors' code: min(4, ⌈ln 2 · M / X⌉) with X = 0.1 s × load (spec amendment 5)."""
    return int(min(4, math.ceil(math.log(2) * clock_size / (clocks.DELAY_MEAN * load))))


def _common(n_nodes, clock_size, k) -> tuple[Param, ...]:
    return (
        Param("n_nodes", int, n_nodes, "number of processes N", check=_at_least(2), allowed="integers >= 2"),
        Param("clock_size", int, clock_size, "probabilistic clock entries M", check=_at_least(1), allowed="integers >= 1"),
        Param("k", int, k, "entries a process increments per broadcast (k_mode fixed)", check=_at_least(1), allowed="integers >= 1 (and <= clock_size)"),
        Param("k_mode", str, "fixed", "k as given, or the authors' formula min(4, ceil(ln2 M / (0.1 load)))", choices=K_MODES),
        Param("warmup", float, 5.0, "seconds of broadcasts before the counted ones (spec §5.3)", check=non_negative, allowed=">= 0"),
        Param("jitter", float, JITTER_SD, "standard deviation of a broadcast instant around its slot (s)", check=non_negative, allowed=">= 0"),
        Param("hash_bits", int, 64, "hash width (bits compared)", check=lambda b: 1 <= b <= kernel.MAX_HASH_BITS, allowed=f"integers 1..{kernel.MAX_HASH_BITS}"),
        Param("l_authors", int, kernel.L_AUTHORS, "bound l on hashes per test, authors' mode", check=_at_least(1), allowed="integers >= 1"),
        Param("l_residual", int, kernel.L_RESIDUAL, "bound l on hashes per test, residual mode", check=_at_least(1), allowed="integers >= 1"),
        Param("tau", float, kernel.TAU, "seconds of deliveries a hash test looks back at", check=positive, allowed="> 0"),
        Param("recovery", str, "serial", "one outstanding dependency request per process (authors' code) or several (spec §3.2)", choices=kernel.RECOVERY),
        *network.parameters(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=clocks.DELAY_MEAN, tpp_sigma=clocks.DELAY_SD),
    )


def _k(point, load) -> int:
    return point["k"] if point["k_mode"] == "fixed" else k_formula(point["clock_size"], load)


def validate(point) -> None:
    """Combinations a single parameter cannot reject: k must fit in the clock."""
    load = point.get("load", point["n_nodes"] / point.get("period", 1.0))
    if _k(point, load) > point["clock_size"]:
        raise ParameterError(f"k = {_k(point, load)} exceeds clock_size = {point['clock_size']}; "
                             "allowed: 1 <= k <= clock_size")


def _run(point, seed, schedule, k, **options) -> kernel.Run:
    return kernel.simulate(
        schedule, net=network.from_point(point, tpp_negative="clip"), seed=seed,
        clock_size=point["clock_size"], k=k, hash_bits=point["hash_bits"],
        l_authors=point["l_authors"], l_residual=point["l_residual"], tau=point["tau"],
        recovery=point["recovery"], **options)


def recovery_metrics(run: kernel.Run, prefix: str = "") -> dict:
    """Counts of a run with the hash detector acting: broadcasts, errors left (and those a hash
    collision let through), requests and the oracle's needed / false-alarm verdict on every one
    of them, test costs."""
    truth = ground_truth.delivery_truth(run)
    collided = truth.counted & ((run.flags & kernel.F_COLLISION) != 0)
    counted = ground_truth.counted_messages(run)
    req_counted = counted[run.req_msg]
    verdict = ground_truth.requests_needed(run)[req_counted]
    broadcasts = int(counted.sum())
    reqs = int(req_counted.sum())
    needed = int((verdict == 1).sum())
    clusters = np.unique(run.req_msg[req_counted], return_counts=True)[1]
    # serial recovery can leave a process so far behind that it requests its backlog message by
    # message long after the last broadcast slot: those requests, and how many processes sent them
    late = req_counted & (run.req_time > run.schedule.end)
    mode = run.options["hash_mode"]
    tests = run.counters[f"tests_{mode}"]
    hist = run.hist_auth if mode == "authors" else run.hist_res
    c = run.counters
    return {f"{prefix}{k}": v for k, v in {
        "broadcasts": broadcasts, "deliveries": truth.deliveries, "errors": truth.errors,
        "messages_with_error": truth.messages_with_error(run),
        "duplicates": truth.report.duplicates, "undelivered": truth.report.missing,
        "collisions": c["collisions"], "collision_errors": int((collided & truth.error).sum()),
        "req": reqs, "req_needed": needed, "req_false": reqs - needed,
        # requests come in clusters, one per requested message: the sum of the clusters' squared
        # sizes gives the rate's interval (artifacts.common)
        "req_messages": len(clusters),
        "req_cluster_sq": int((clusters.astype(np.int64) ** 2).sum()),
        "req_cluster_max": int(clusters.max(initial=0)),
        "req_after_end": int(late.sum()), "req_nodes_after_end": len(np.unique(run.req_node[late])),
        "request_rate": reqs / (broadcasts * run.n_nodes) if broadcasts else float("nan"),
        "skipped_slots": c["skipped_slots"], "parked": c["parked"], "rsp_ids": c["rsp_ids"],
        "tests": tests, "mean_hashes": float((hist * np.arange(len(hist))).sum() / max(tests, 1)),
        "max_hashes": int(np.flatnonzero(hist).max()) if hist.any() else 0,
        "fast_share": c[f"fast_{mode}"] / max(tests, 1),
        "mean_p_size": c["p_size_total"] / max(tests, 1),
        "budget_flags": c["flag_budget"],
    }.items()}


# ------------------------------------------------------------------------------------------
# Table 1
# ------------------------------------------------------------------------------------------


def replicate_table1(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    load = point["n_nodes"] / point["period"]
    schedule = Schedule.periodic(point["n_nodes"], point["period"], point["broadcasts"] / load,
                                 point["warmup"], point["jitter"], seed)
    k = _k(point, load)
    plain = _run(point, seed, schedule, k, shadow=True)
    truth = ground_truth.delivery_truth(plain)
    counted = ground_truth.counted_messages(plain)
    row = {"k_used": k, "load": load, "r1_broadcasts": int(counted.sum()),
           "r1_deliveries": truth.deliveries, "r1_errors": truth.errors,
           "r1_messages_with_error": truth.messages_with_error(plain),
           "r1_duplicates": truth.report.duplicates, "r1_undelivered": truth.report.missing,
           **{f"r1_{k_}": v for k_, v in ground_truth.detection(plain, truth).items()}}
    del plain, truth
    for mode in kernel.HASH_MODES:
        run = _run(point, seed, schedule, k, detector="hash", hash_mode=mode)
        run.verify()
        row.update(recovery_metrics(run, f"r2_{mode}_"))
    row["wall_seconds"] = time.perf_counter() - started
    return row


TABLE1 = Experiment(
    name="ed_table1",
    description="Table 1: errors without detector, left by Mostéfaoui's, and with the hash detector",
    source="004 §6 Table 1; spec probabilistic_clocks §6.5 and amendments 1, 5",
    params=(
        *_common(200, 50, 4),
        Param("period", float, 2.0, "seconds between two broadcasts of a process", check=positive, allowed="> 0"),
        Param("broadcasts", int, 100_000, "broadcasts after the warm-up", check=_at_least(1), allowed="integers >= 1"),
    ),
    grid={
        "smoke": {"broadcasts": [1000]},
        "default": {"broadcasts": [10_000]},
        "paper": {"broadcasts": [100_000], "k": [4, 2]},
    },
    reps={"smoke": 1, "default": 1, "paper": 3},
    replicate=replicate_table1,
    validate_point=validate,
    variant_params=("hash_mode", "hash_bits", "l_authors", "l_residual", "recovery"),
)


# ------------------------------------------------------------------------------------------
# Figure 1 and Table 2: request rates
# ------------------------------------------------------------------------------------------


def rate_setting(point) -> tuple[int, float]:
    """(N, period) of a rate point: N = load × period (the authors' Figure 1) or period = N / load."""
    if point["scaling"] == "nodes":
        return max(2, int(round(point["load"] * point["period"]))), point["period"]
    return point["n_nodes"], point["n_nodes"] / point["load"]


def validate_rates(point) -> None:
    n, period = rate_setting(point)
    validate({**point, "n_nodes": n, "period": period})


def replicate_rates(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    n, period = rate_setting(point)
    schedule = Schedule.periodic(n, period, point["duration"], point["warmup"], point["jitter"], seed)
    k = _k(point, point["load"])
    run = _run(point, seed, schedule, k, detector="hash", hash_mode=point["hash_mode"])
    run.verify()
    return {"n_used": n, "period_used": period, "k_used": k, **recovery_metrics(run),
            "wall_seconds": time.perf_counter() - started}


def _rates(n_nodes, duration) -> tuple[Param, ...]:
    return (
        *_common(n_nodes, 50, 2),
        Param("duration", float, duration, "seconds of broadcasts counted, after the warm-up", check=positive, allowed="> 0"),
        Param("hash_mode", str, "authors", "hash detector: the authors' recent window and subset order (spec amendment 1), or our residual-guided search (spec §3.4.2)", choices=tuple(kernel.HASH_MODES)),
        Param("load", float, 110.0, "system load λ (broadcasts per second)", check=positive, allowed="> 0"),
        Param("scaling", str, "period", "reach the load through N = load × period, or through period = N / load", choices=SCALINGS),
        Param("period", float, 2.0, "seconds between two broadcasts of a process (scaling nodes)", check=positive, allowed="> 0"),
    )


LOADS = [20.0, 40.0, 60.0, 80.0, 100.0, 120.0, 140.0, 160.0, 180.0]
# Figure 1's setting (the authors': N = 2λ, k = 2) and the paper scale's sensitivities, each
# changing one setting: N = 200 with a shorter period, and the authors' formula for k.  They run
# in the authors' hash mode only; our residual mode is compared with it on the main setting.
FIGURE1_MAIN = {"scaling": "nodes", "k_mode": "fixed"}
FIGURE1_SENSITIVITIES = {"n200": {"scaling": "period", "k_mode": "fixed"},
                         "kformula": {"scaling": "nodes", "k_mode": "formula"}}
FIGURE1 = Experiment(
    name="ed_figure1",
    description="Figure 1: dependency-request rate vs messages per second, M = 20, 25, 50",
    source="004 App. A Figure 1; spec probabilistic_clocks §6.6 and amendments 1, 5",
    params=tuple(p if p.name != "scaling" else Param("scaling", str, "nodes", p.doc, choices=SCALINGS)
                 for p in _rates(200, 200.0)),
    grid={
        "smoke": {"load": [40.0, 120.0], "clock_size": [20, 50], "duration": [4.0], "warmup": [2.0]},
        # loads above 140 cost most (N = 2λ: receptions grow as λ²) and are left to the paper scale
        "default": {"load": [20.0, 60.0, 100.0, 120.0, 140.0], "clock_size": [20, 25, 50],
                    "duration": [10.0], "hash_mode": ["authors", "residual"]},
        "paper": [{"load": LOADS, "clock_size": [20, 25, 50], "hash_mode": ["authors", "residual"],
                   **{k: [v] for k, v in FIGURE1_MAIN.items()}},
                  *({"load": LOADS, "clock_size": [20, 25, 50], "hash_mode": ["authors"],
                     **{k: [v] for k, v in setting.items()}} for setting in FIGURE1_SENSITIVITIES.values())],
    },
    reps={"smoke": 1, "default": 1, "paper": 1},
    replicate=replicate_rates,
    validate_point=validate_rates,
    variant_params=("hash_mode", "hash_bits", "l_authors", "l_residual", "recovery"),
)

TABLE2_NODES = [500, 1000, 2000, 3000, 5000]
TABLE2 = Experiment(
    name="ed_table2",
    description="Table 2: request rate at 110 msg/s for 500 ... 5000 processes (M = 50, k = 2)",
    source="004 §6 Table 2; spec probabilistic_clocks §6.7 and amendment 1",
    params=_rates(500, 60.0),
    grid={
        "smoke": {"n_nodes": [500, 1000], "duration": [2.0], "warmup": [1.0]},
        # a rate of a few 10^-4 carried by rare messages flagged at every receiver needs about
        # 2000 broadcasts to be resolved (artifacts.table2.resolved): the default runs 20 s at
        # the two cheapest sizes, the larger ones are left to the paper scale
        "default": {"n_nodes": [500, 1000], "duration": [20.0], "hash_mode": ["authors", "residual"]},
        "paper": {"n_nodes": TABLE2_NODES, "hash_mode": ["authors", "residual"]},
    },
    reps={"smoke": 1, "default": 1, "paper": 1},
    replicate=replicate_rates,
    validate_point=validate_rates,
    variant_params=("hash_mode", "hash_bits", "l_authors", "l_residual", "recovery"),
)

EXPERIMENTS = (TABLE1, FIGURE1, TABLE2)
