"""Experiments on causal broadcast over VCube per-source trees (seed 000 §5, thesis §4.5).

``vcube_broadcast``: every node broadcasts once; one replication returns the counts and means
behind Table 1 (packets), Figure 7 (latencies) and Figure 9 (buffers).  Every run is checked by
the causality oracle and must be error-free, duplicate-free and complete.
"""

from __future__ import annotations

import time

import numpy as np

from causal_lab import network, oracle, workload
from causal_lab.experiments.base import (
    Experiment,
    Param,
    non_negative,
    positive,
    power_of_two,
    register,
)
from causal_lab.protocols import vcube_broadcast

_N_CHECK, _N_ALLOWED = power_of_two(2, 1 << 13)
SIZES = [8, 16, 32, 64, 128, 256, 512, 1024]

NETWORK_PARAMS = (
    Param("t_pc", float, 1.0, "processing time before the sending queue (u.t.)", check=non_negative, allowed=">= 0"),
    Param("t_t", float, 1.0, "transmission time per packet: the queue's service time (u.t.)", check=non_negative, allowed=">= 0"),
    Param("tpp", str, "normal", "propagation delay distribution", choices=tuple(network.TPP_DISTRIBUTIONS)),
    Param("tpp_mean", float, 100.0, "mean propagation delay (u.t.)", check=non_negative, allowed=">= 0"),
    Param("tpp_sigma", float, 25.0, "standard deviation of the propagation delay (u.t.)", check=non_negative, allowed=">= 0"),
)


def network_of(point) -> network.Network:
    return network.Network(
        t_pc=point["t_pc"],
        t_t=point["t_t"],
        tpp=point["tpp"],
        tpp_mean=point["tpp_mean"],
        tpp_sigma=point["tpp_sigma"],
    )


def replicate(point, seed: np.random.SeedSequence) -> dict:
    started = time.perf_counter()
    n = point["n_nodes"]
    run = vcube_broadcast.simulate(
        d=n.bit_length() - 1,
        window=point["window"],
        sources=point["sources"],
        payload=point["payload"],
        net=network_of(point),
        seed=seed,
    )
    report = oracle.check(n, run.log_kind, run.log_node, run.log_msg)
    report.assert_ok()
    others = ~np.eye(n, dtype=bool)[run.sources]  # (message, node) pairs except the source
    recv = run.recv_time[others] - np.repeat(run.times, n - 1)
    deliv = run.deliv_time[others] - np.repeat(run.times, n - 1)
    return {
        "packets": run.packets,
        "messages_carried": int(run.packet_messages.sum()),
        "aggregated_packets": int((run.packet_messages > 1).sum()),
        "mean_reception_latency": float(recv.mean()),
        "mean_delivery_latency": float(deliv.mean()),
        "mean_holding_time": float((deliv - recv).mean()),
        "mean_queue_wait": float(run.queue_wait.mean()),
        "max_pending": int(run.max_pending.max()),
        "oracle_errors": report.errors,
        "oracle_duplicates": report.duplicates,
        "oracle_missing": report.missing,
        "events": run.events,
        "wall_seconds": time.perf_counter() - started,  # the one non-deterministic column
    }


EXPERIMENT = register(
    Experiment(
        name="vcube_broadcast",
        description="Causal broadcast over VCube per-source trees, every node broadcasts once",
        source="000 §5.1 Table 1, §5.3 Figure 7; 003 §4.5",
        params=(
            Param("n_nodes", int, 16, "number of nodes N (VCube of dimension log2 N)", check=_N_CHECK, allowed=_N_ALLOWED),
            Param("aggregation", bool, False, "aggregate causally related messages (Algorithm 2; issue 3)", choices=(False,)),
            Param("window", float, 500.0, "broadcast instants are Uniform(0, window) (spec W1)", check=positive, allowed="> 0"),
            Param("sources", str, "permutation", "who broadcasts (spec W2)", choices=workload.SOURCE_MODES),
            Param("payload", int, 50, "application payload per message (bytes)", check=lambda x: x >= 0, allowed=">= 0"),
            *NETWORK_PARAMS,
        ),
        grid={
            "smoke": {"n_nodes": [8, 16, 32]},
            "default": {"n_nodes": SIZES},
            "paper": {"n_nodes": SIZES},
        },
        reps={"smoke": 2, "default": 3, "paper": 30},
        replicate=replicate,
        variant_params=("aggregation",),
    )
)
