"""Experiments on causal broadcast over VCube trees (seed 000 §5, thesis §4.5).

``vcube_broadcast``: every node broadcasts once; one replication returns the counts, means and
histograms behind Tables 1-3 and Figures 6, 7, 9, 10 and 11 (one flat row, so Spark SQL can
aggregate any column).  Every run is checked by the causality oracle and must be error-free,
duplicate-free and complete, and the protocol invariants of spec §2.5 are asserted.
"""

from __future__ import annotations

import time

import numpy as np

from causal_lab import oracle
from causal_lab.engine import network, workload
from causal_lab.experiment import Experiment
from causal_lab.families.vcube_broadcast import kernel
from causal_lab.params import Param, positive, power_of_two

_N_CHECK, _N_ALLOWED = power_of_two(2, 1 << 13)
SIZES = [8, 16, 32, 64, 128, 256, 512, 1024]


# histogram bins (upper edges inclusive), named as in the papers' tables and figures
MESSAGES_PER_PACKET = {"1": (1, 1), "2": (2, 2), "3": (3, 3), "4": (4, 4), "5": (5, 5), "6_15": (6, 15), "gt15": (16, 10**9)}
PACKET_SIZE = {"le100": (0, 100), "100_200": (101, 200), "200_300": (201, 300), "300_400": (301, 400), "gt400": (401, 10**9)}
DEPENDENCIES = {"0": (0, 0), "1_4": (1, 4), **{f"{a}_{a + 4}": (a, a + 4) for a in range(5, 55, 5)}, "ge55": (55, 10**9)}
MAX_PENDING = {"le50": (0, 50), "50_100": (51, 100), "100_150": (101, 150), "150_200": (151, 200), "200_250": (201, 250), "gt250": (251, 10**9)}


def _histogram(prefix: str, values: np.ndarray, bins: dict) -> dict:
    return {f"{prefix}_{name}": int(((values >= lo) & (values <= hi)).sum()) for name, (lo, hi) in bins.items()}


def causal_barrier_sizes(run: kernel.Run) -> tuple[np.ndarray, np.ndarray]:
    """Direct predecessors per message, and the candidates they are chosen from (thesis §2.2.3,
    spec Figure 3.1); candidates minus direct ones are the indirect dependencies.

    The candidates of m are, for every source l with ``m.vc[l] > 0`` (l = m's source: its
    previous message), the message (l, m.vc[l]); a candidate x is indirect when another
    candidate y already knows it: ``y.vc[x.s] >= x.vc[x.s]``.
    """
    vcs, src = run.vector_clocks, run.sources
    by_key = {(int(s), int(vcs[m, s])): m for m, s in enumerate(src)}
    sizes = np.zeros(len(src), np.int64)
    candidates = np.zeros(len(src), np.int64)
    for m, s in enumerate(src):
        own = vcs[m].copy()
        own[s] -= 1
        cand = np.array([by_key[(l, int(own[l]))] for l in np.flatnonzero(own)], np.int64)
        candidates[m] = len(cand)
        if len(cand) == 0:
            continue
        known = vcs[cand][:, src[cand]] >= vcs[cand, src[cand]][None, :]  # [y, x]: y knows x
        np.fill_diagonal(known, False)
        sizes[m] = int((~known.any(axis=0)).sum())
    return sizes, candidates


def _verified_run(point, seed, aggregate) -> tuple[kernel.Run, oracle.Report]:
    """One simulated run, checked by the oracle and the invariants (raises otherwise)."""
    schedule = kernel.Schedule.one_shot(point["n_nodes"].bit_length() - 1, point["window"],
                                        point["sources"], seed)
    run = kernel.simulate(schedule, net=network.from_point(point), seed=seed, aggregate=aggregate,
                          trees=point["trees"], payload=point["payload"], tpp_per=point["tpp_per"])
    return run, run.verify()


def replicate_pairs(point, seed: np.random.SeedSequence) -> dict:
    """Figure 8: the (message, receiver) pairs that AGG delivered in two-message packets,
    and the same pairs in the NO_AGG run of the same replication (same schedule, spec W13)."""
    started = time.perf_counter()
    (agg, _), (plain, _) = _verified_run(point, seed, True), _verified_run(point, seed, False)
    carried = agg.recv_packet >= 0
    in_two = np.zeros_like(carried)
    in_two[carried] = agg.packet_messages[agg.recv_packet[carried]] == 2
    t0 = agg.times[:, None]
    metrics = {"two_message_packets": int((agg.packet_messages == 2).sum()), "pairs": int(in_two.sum()),
               "packets_aggr": agg.packets, "packets_no_aggr": plain.packets}
    for name, run in (("aggr", agg), ("no_aggr", plain)):
        recv = (run.recv_time - t0)[in_two]
        deliv = (run.deliv_time - t0)[in_two]
        metrics[f"reception_latency_{name}"] = float(recv.mean()) if len(recv) else float("nan")
        metrics[f"delivery_latency_{name}"] = float(deliv.mean()) if len(recv) else float("nan")
        metrics[f"holding_time_{name}"] = float((deliv - recv).mean()) if len(recv) else float("nan")
    metrics["wall_seconds"] = time.perf_counter() - started
    return metrics


def replicate(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    n = point["n_nodes"]
    run, report = _verified_run(point, seed, point["aggregation"])
    others = ~np.eye(n, dtype=bool)[run.sources]  # (message, node) pairs except the source
    recv = run.recv_time[others] - np.repeat(run.times, n - 1)
    deliv = run.deliv_time[others] - np.repeat(run.times, n - 1)
    per_sender_max = np.zeros(n, np.int64)
    np.maximum.at(per_sender_max, run.packet_sender, run.packet_messages)
    aggregated = run.packet_messages > 1
    barrier, candidates = causal_barrier_sizes(run)
    return {
        "packets": run.packets,
        "messages_carried": int(run.packet_messages.sum()),
        "aggregated_packets": int(aggregated.sum()),
        "aggregated_messages": int(run.packet_messages[aggregated].sum()),
        "mtu_closed_packets": int(run.packet_mtu_closed.sum()),
        "packets_over_1400": int((run.packet_sizes > 1400).sum()),
        "max_messages_per_packet": int(run.packet_messages.max()),
        **_histogram("mpp", run.packet_messages, MESSAGES_PER_PACKET),
        **_histogram("size", run.packet_sizes, PACKET_SIZE),
        **_histogram("deps", run.entries - 1, DEPENDENCIES),
        "deps_gt12": int((run.entries - 1 > 12).sum()),
        "max_dependencies": int(run.entries.max() - 1),
        "mean_vc_entries": float(run.entries.mean()),
        "mean_causal_barrier": float(barrier.mean()),
        "max_causal_barrier": int(barrier.max()),
        "max_indirect_dependencies": int((candidates - barrier).max()),
        "barrier_above_entries": int((barrier > run.entries).sum()),
        "mean_reception_latency": float(recv.mean()),
        "max_reception_latency": float(recv.max()),
        "mean_delivery_latency": float(deliv.mean()),
        "mean_holding_time": float((deliv - recv).mean()),
        "delayed_pairs": int((deliv > recv).sum()),
        "mean_queue_wait": float(run.queue_wait.mean()),
        "max_pending": int(run.max_pending.max()),
        "median_max_pending": float(np.median(run.max_pending)),
        "std_max_pending": float(run.max_pending.std()),
        "p10_max_pending": float(np.percentile(run.max_pending, 10)),
        "p90_max_pending": float(np.percentile(run.max_pending, 90)),
        **_histogram("pend", run.max_pending, MAX_PENDING),
        "mean_max_aggregation": float(per_sender_max.mean()),
        **{f"maxagg_{k}": int((per_sender_max == k).sum()) for k in range(1, 21)},
        "maxagg_gt20": int((per_sender_max > 20).sum()),
        "oracle_errors": report.errors,
        "oracle_duplicates": report.duplicates,
        "oracle_missing": report.missing,
        "events": run.events,
        "wall_seconds": time.perf_counter() - started,  # the one non-deterministic column
    }


COMMON_PARAMS = (
    Param("n_nodes", int, 16, "number of nodes N (VCube of dimension log2 N)", check=_N_CHECK, allowed=_N_ALLOWED),
    Param("trees", str, "per_source", "one VCube tree per source, or the single tree of node 0 (§5.5)", choices=tuple(kernel.TREES)),
    Param("window", float, 500.0, "broadcast instants are Uniform(0, window) (spec W1)", check=positive, allowed="> 0"),
    Param("sources", str, "permutation", "who broadcasts (spec W2)", choices=workload.SOURCE_MODES),
    Param("payload", int, 50, "application payload per message (bytes)", check=lambda x: x >= 0, allowed=">= 0"),
    *network.parameters(),
    Param("tpp_per", str, "packet", "propagation delay drawn per packet (every use of a link, the spec's model) "
          "or once per directed link for the whole run (seed 000 §5.5 says only the single tree's links varied "
          "at each use)", choices=kernel.TPP_PER),
)

EXPERIMENT = Experiment(
    name="vcube_broadcast",
    description="Causal broadcast over VCube per-source trees, every node broadcasts once",
    source="000 §5.1 Table 1, §5.3 Figure 7; 003 §4.5",
    params=(
        COMMON_PARAMS[0],
        Param("aggregation", bool, False, "aggregate causally related messages (Algorithm 2)"),
        *COMMON_PARAMS[1:],
    ),
    grid={
        "smoke": {"n_nodes": [8, 16, 32], "aggregation": [False, True]},
        "default": {"n_nodes": SIZES, "aggregation": [False, True]},
        "paper": {"n_nodes": SIZES, "aggregation": [False, True]},
    },
    reps={"smoke": 2, "default": 3, "paper": 30},
    replicate=replicate,
    variant_params=("aggregation", "trees", "payload", "tpp_per"),
)

PAIRS = Experiment(
    name="vcube_pairs",
    description="Messages carried in two-message packets: AGG and NO_AGG runs of one replication",
    source="000 §5.3 Figure 8; 003 §4.5.4 Figure 4.5",
    params=COMMON_PARAMS,
    grid={
        "smoke": {"n_nodes": [8, 16, 32]},
        "default": {"n_nodes": SIZES},
        "paper": {"n_nodes": SIZES},
    },
    reps={"smoke": 2, "default": 3, "paper": 30},
    replicate=replicate_pairs,
    variant_params=("trees", "payload", "tpp_per"),
)

EXPERIMENTS = (EXPERIMENT, PAIRS)
