"""``make bench`` for VCube causal broadcast: one N = 1024 all-nodes-broadcast replication, simulation
plus oracle, without aggregation (about 10^6 packets; target <= 15 s wall) and with it (<= 60 s)."""

from __future__ import annotations

import statistics
import time

import numpy as np

from causal_lab import oracle
from causal_lab.families.vcube_broadcast import kernel as vcube_broadcast


def _broadcast(d, seed, aggregate=False):
    return vcube_broadcast.simulate(vcube_broadcast.Schedule.one_shot(d, seed=seed), seed=seed,
                                    aggregate=aggregate)


def bench_broadcast(d: int, repeats: int, target_s: float, aggregate: bool) -> dict:
    _broadcast(3, np.random.SeedSequence(0))  # compile outside the timing
    oracle.check(2, [0, 0], [0, 1], [0, 1])
    walls, sims, checks, packets, n_events = [], [], [], 0, 0
    for rep in range(repeats):
        started = time.perf_counter()
        run = _broadcast(d, np.random.SeedSequence([2018, rep]), aggregate)
        simulated = time.perf_counter()
        oracle.check(run.n_nodes, run.log_kind, run.log_node, run.log_msg).assert_ok()
        done = time.perf_counter()
        walls.append(done - started)
        sims.append(simulated - started)
        checks.append(done - simulated)
        packets, n_events = run.packets, run.events
    wall = statistics.median(walls)
    variant = "with" if aggregate else "no"
    return {"name": f"vcube_broadcast {variant} aggregation, N={1 << d} (one replication incl. oracle)",
            "wall_seconds": wall, "simulation_seconds": statistics.median(sims),
            "oracle_seconds": statistics.median(checks), "packets": packets, "events": n_events,
            "events_per_second": n_events / statistics.median(sims),
            "target": f"<= {target_s} s wall", "ok": wall <= target_s}


def run(repeats: int) -> list[dict]:
    runs = max(1, repeats // 2 + 1)
    return [bench_broadcast(10, runs, 15.0, aggregate=False),
            bench_broadcast(10, runs, 60.0, aggregate=True)]


BENCHMARKS = (run,)
