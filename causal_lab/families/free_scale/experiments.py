"""Experiments of the free-scale paper (seed 001 §3.2): overhead versus N (Figures 4-6) and
scalability at a fixed total rate (Figures 7-9), one experiment per delay range.

* ``p2p_overhead_<delays>``: every peer sends every 70-90 ms (spec §6.2); variants
  ``protocol = free_scale`` (the proposed protocol, with the DS8 model of the Dependency
  Sequences baseline computed on its external group) and ``protocol = idr`` (the IDR baseline,
  run as a protocol of its own on the same workload and delays).  Rows: communication and
  storage overhead per group, both byte accountings (amendment 2).
* ``p2p_scalability_<delays>``: the total generation rate ``rate`` is fixed, each peer sends
  with mean gap N / rate (spec §6.6); rows: internal and external communication overhead.

Windows (``workload.window``): warm-up and measurement of spec §6.4, lengthened to 3 and 10 mean
generation gaps (amendment 1) and to ``min_messages`` messages in the window (amendment 5).
Every run goes through ``Run.verify`` (the causality oracle and the protocol's invariants):
a violation or an undelivered message stops the sweep.
"""

from __future__ import annotations

import math
import time

import numpy as np

from causal_lab.experiment import Experiment
from causal_lab.families.free_scale import channel, idr, kernel, workload
from causal_lab.params import Param, ParameterError, non_negative, positive

PROTOCOLS = ("free_scale", "idr")
DELAYS = {"0_50": (0.0, 50.0), "50_250": (50.0, 250.0), "50_550": (50.0, 550.0)}
WARMUP_S = {"0_50": 1.0, "50_250": 1.5, "50_550": 2.0}  # spec §6.4
PAPER_N = {"0_50": 900, "50_250": 500, "50_550": 400}  # Table 1
RATES = [2500, 2000, 1500, 1000]  # msg/s, paper §3.2 scalability analysis
LARGE_N = 300  # spec §6.4: above it the measurement window is measure_large_n
# every metric a row may have (NaN where a protocol has none): one schema for every row
METRICS = (
    "comm_int_A", "comm_int_B", "comm_ext_A", "comm_ext_B", "comm_ds_A", "comm_ds_B",
    "comm_int_up", "comm_int_relay", "comm_int_trans", "comm_ext_peer", "comm_ext_sp",
    "stor_int", "stor_ext", "stor_sp", "tt_entries", "comm_ds12", "comm_ds_np",
    "comm_ds_np_early", "comm_ds_np_late", "ds_runs", "comm_idr_A", "comm_idr_B", "stor_idr",
)
COUNTS = (
    "messages_int", "messages_ext", "messages_idr", "samples_stor_int", "samples_stor_ext",
    "samples_stor_idr", "multi_match", "ci_removed_below", "tt_collections", "tt_collected",
    "max_buffered_internal", "max_buffered_external", "max_buffered_sp_internal",
    "max_buffered_sp_external", "max_buffered_idr",
)


def _even_peers(n: int) -> bool:
    return n >= 2 and n % 2 == 0


def n_grid(largest: int, step: int = 50) -> list[int]:
    """The spec's N grid (§6.3): 10, then every ``step`` up to ``largest``."""
    return [10, *range(step, largest + 1, step)]


def _window_params(warmup: float, measure: float, min_messages: int, measure_large_n: float):
    return (
        Param("warmup", float, warmup, "warm-up before the measurement window (s; spec §6.4)",
              check=non_negative, allowed=">= 0"),
        Param("measure", float, measure, "measurement window (s; spec §6.4); generation stops "
              "at its end, then the network drains", check=positive, allowed="> 0"),
        Param("measure_large_n", float, measure_large_n, f"measurement window for N > {LARGE_N} "
              "(s; spec §6.4)", check=positive, allowed="> 0"),
        Param("warmup_gaps", float, 3.0, "the warm-up lasts at least this many mean generation "
              "gaps (amendment 1)", check=non_negative, allowed=">= 0"),
        Param("measure_gaps", float, 10.0, "the measurement lasts at least this many mean "
              "generation gaps (amendment 1)", check=non_negative, allowed=">= 0"),
        Param("min_messages", int, min_messages, "the measurement window holds at least this many "
              "messages (amendment 5)", check=lambda x: x >= 0, allowed=">= 0"),
    )


def _peer_params():
    return (
        Param("n_peers", int, 100, "peers N, split equally between the internal and the external "
              "group (the super peer is not counted)", check=_even_peers, allowed="even, >= 2"),
        Param("start", str, "random_phase", "first message of a peer: Uniform(0, mean gap), or "
              "after one gap (amendment 6)", choices=workload.STARTS),
        Param("tt_gc", bool, True, "garbage-collect the super peer's translation table (§3.7)"),
        Param("gc_interval", float, 10.0, "TT collection at most every ... ms (spec §3.7)",
              check=positive, allowed="> 0"),
    )


def _check(point) -> None:
    """Impossible combinations, before any work."""
    problems = channel.problems(point)
    if "gap_min" in point and not point["gap_min"] <= point["gap_mean"] <= point["gap_max"]:
        problems.append(f"need gap_min <= gap_mean <= gap_max, got {point['gap_min']:g}, "
                        f"{point['gap_mean']:g}, {point['gap_max']:g} ms")
    if problems:
        raise ParameterError("; ".join(problems))


def _measure_s(point) -> float:
    return point["measure"] if point["n_peers"] <= LARGE_N else point["measure_large_n"]


def _window(point, gap_mean_ms: float) -> workload.Window:
    return workload.window(point["n_peers"], gap_mean_ms, point["warmup"], _measure_s(point),
                           point["warmup_gaps"], point["measure_gaps"], point["min_messages"])


def _run(point, schedule: workload.Schedule, seed: np.random.SeedSequence, protocol: str) -> dict:
    """Simulate, verify (raises on any violation) and flatten one run into a row."""
    started = time.perf_counter()
    net = channel.from_point(point, seed)
    if protocol == "free_scale":
        run = kernel.simulate(schedule, net=net, seed=seed, tt_gc=point["tt_gc"],
                              gc_interval=point["gc_interval"])
    else:
        run = idr.simulate(schedule, net=net, seed=seed)
    simulated = time.perf_counter()
    report = run.verify()
    row = {m: math.nan for m in METRICS} | {c: 0 for c in COUNTS}
    row.update({k: (float(v) if k in METRICS else int(v)) for k, v in run.metrics().items()})
    row.update({
        "messages": len(schedule.times), "window_start_ms": schedule.window.start,
        "window_end_ms": schedule.window.end, "events": run.events,
        "deliveries": report.deliveries, "oracle_errors": report.errors,
        "oracle_duplicates": report.duplicates, "oracle_missing": report.missing,
        "simulation_seconds": simulated - started,  # with the next one, the non-deterministic columns
        "wall_seconds": time.perf_counter() - started,
    })
    return row


def fixed_rate_gaps(n_peers: int, rate: float, half_width: float, sigma_share: float):
    """Spec §6.6: mean gap T = N / R (ms), interval [(1 - h) T, (1 + h) T], sigma = s T."""
    t = 1000.0 * n_peers / rate
    return t, sigma_share * t, (1 - half_width) * t, (1 + half_width) * t


def gaps(point) -> tuple[float, float, float, float]:
    """A point's generation gaps (ms): mean, sigma, shortest, longest; a fixed total rate
    (``rate``, Figures 7-9) or the 70-90 ms of Figures 4-6."""
    if "rate" in point:
        return fixed_rate_gaps(point["n_peers"], point["rate"], point["gap_half_width"],
                               point["gap_sigma_share"])
    return point["gap_mean"], point["gap_sigma"], point["gap_min"], point["gap_max"]


def schedule(point, seed: np.random.SeedSequence) -> workload.Schedule:
    """Who sends when in a point's run, and its window."""
    mean, sigma, lo, hi = gaps(point)
    return workload.Schedule.periodic(point["n_peers"], mean, sigma, lo, hi, _window(point, mean),
                                      point["start"], seed)


def arrival_events(point) -> float:
    """About how many arrival events a point's run has (spec §9): its messages times N + 1
    copies (an internal message: 1 at the SP, N / 2 relays, N / 2 translations)."""
    mean = gaps(point)[0]
    n = point["n_peers"]
    return n * _window(point, mean).end / mean * (n + 1)


def replicate_overhead(point, seed: np.random.SeedSequence) -> dict:
    """One run of Figures 4-6: 70-90 ms generation gaps, the protocol of the point."""
    return _run(point, schedule(point, seed), seed, point["protocol"])


def replicate_scalability(point, seed: np.random.SeedSequence) -> dict:
    """One run of Figures 7-9: the total rate is fixed, the free-scale protocol."""
    return _run(point, schedule(point, seed), seed, "free_scale")


def overhead(delays: str, grids: dict, reps: dict) -> Experiment:
    lo, hi = DELAYS[delays]
    return Experiment(
        name=f"p2p_overhead_{delays}",
        description=f"Communication and storage overhead vs N, delays {lo:g}-{hi:g} ms: free-scale "
                    "protocol (with the DS8 model) and IDR",
        source=f"001 §3.2 Table 1 and Figure {4 + list(DELAYS).index(delays)}; spec §6, §7",
        params=(
            Param("protocol", str, "free_scale", "free_scale (with the DS8 model of Dependency "
                  "Sequences) or idr (the IDR baseline, SP transparent)", choices=PROTOCOLS),
            *_peer_params(),
            Param("gap_mean", float, 80.0, "mean generation gap (ms; paper: 70-90 ms, N(80, 5))",
                  check=positive, allowed="> 0"),
            Param("gap_sigma", float, 5.0, "standard deviation of the gap (ms; spec A1: width / 4)",
                  check=non_negative, allowed=">= 0"),
            Param("gap_min", float, 70.0, "shortest gap (ms; draws below are clamped)",
                  check=positive, allowed="> 0, <= gap_mean"),
            Param("gap_max", float, 90.0, "longest gap (ms; draws above are clamped)",
                  check=positive, allowed=">= gap_mean"),
            *_window_params(WARMUP_S[delays], 2.0, 20000, 1.0),
            *channel.parameters(lo, hi),
        ),
        grid=grids, reps=reps, replicate=replicate_overhead, validate_point=_check,
        variant_params=("protocol", "tt_gc", "gc_interval"),
    )


def scalability(delays: str, grids: dict, reps: dict) -> Experiment:
    lo, hi = DELAYS[delays]
    return Experiment(
        name=f"p2p_scalability_{delays}",
        description=f"Free-scale protocol at a fixed total rate, delays {lo:g}-{hi:g} ms",
        source=f"001 §3.2 scalability analysis, Figure {7 + list(DELAYS).index(delays)}; spec §6.6",
        params=(
            Param("rate", float, 1000.0, "total generation rate R of the system (msg/s)",
                  check=positive, allowed="> 0"),
            *_peer_params(),
            Param("gap_half_width", float, 0.125, "gap interval half-width as a share of the mean "
                  "N / R (spec §6.6: 70-90 ms scaled)", check=lambda x: 0 <= x < 1, allowed="0 <= x < 1"),
            Param("gap_sigma_share", float, 1 / 16, "gap standard deviation as a share of the mean "
                  "(spec §6.6: T / 16)", check=non_negative, allowed=">= 0"),
            *_window_params(WARMUP_S[delays], 2.0, 0, 2.0),
            *channel.parameters(lo, hi),
        ),
        grid=grids, reps=reps, replicate=replicate_scalability, validate_point=_check,
        variant_params=("tt_gc", "gc_interval"),
    )


# smoke: seconds per notebook; default: the budget of ``make figures`` (N up to 300, the warm-ups
# of spec §6.4 but a 1-s measurement, the same grid for both experiments so that Figures 7-9
# reuse the original runs of Figures 4-6); paper: the paper's N ranges with the windows of spec
# §6.4 and the amendments
SMOKE = {"n_peers": [10, 20, 40], "warmup": [0.3], "measure": [0.5], "measure_large_n": [0.5],
         "min_messages": [0]}
DEFAULT = {"n_peers": [10, 50, 100, 200, 300], "measure": [1.0], "measure_large_n": [1.0]}


def _overhead_grids(delays: str) -> dict:
    return {
        "smoke": {**SMOKE, "protocol": list(PROTOCOLS)},
        "default": {**DEFAULT, "protocol": list(PROTOCOLS), "min_messages": [2000]},
        "paper": {"n_peers": n_grid(PAPER_N[delays]), "protocol": list(PROTOCOLS)},
    }


def _scalability_grids(delays: str) -> dict:
    return {
        "smoke": {**SMOKE, "rate": RATES, "warmup_gaps": [1.0], "measure_gaps": [2.0]},
        "default": {**DEFAULT, "rate": RATES},
        "paper": {"n_peers": n_grid(PAPER_N[delays]), "rate": RATES},
    }


REPS = {"smoke": 1, "default": 1, "paper": 1}
EXPERIMENTS = (
    *(overhead(d, _overhead_grids(d), REPS) for d in DELAYS),
    *(scalability(d, _scalability_grids(d), REPS) for d in DELAYS),
)
