"""``make bench`` for seed 004: the Table 1 configuration (N = 200, 100 msg/s, M = 50, k = 4) with
and without the hash detector, on a tenth of the paper's run (10 000 broadcasts, 2 x 10^6
receptions; the paper's 2 x 10^7 per algorithm extrapolates linearly), and the cost of a hash
test against a plain delivery check.

The plain run is Algorithm 1 alone: each of its receptions is one delivery check (pop the copy,
test the clock condition, deliver).  A hash run does the same receptions plus one hash test per
delivery and the detector's bookkeeping (pool, delivered sets, dependency requests), so
``(hash run − plain run) / tests`` is the average cost of a test, everything included, and its
ratio to the plain run's cost per reception is the number the issue bounds by 2.  CPU time
(the kernel is single-threaded), median of the repeats, same workload in every run.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from causal_lab.families.error_detectors import kernel
from causal_lab.families.error_detectors.workload import Schedule

PAPER_RECEPTIONS = 2e7  # Table 1: 100 000 broadcasts x 199 receivers


def _cpu(schedule, repeats, **options) -> tuple[float, kernel.Run]:
    times, run = [], None
    for _ in range(repeats):
        started = time.process_time()
        run = kernel.simulate(schedule, seed=np.random.SeedSequence(2024), clock_size=50, k=4, **options)
        times.append(time.process_time() - started)
    return statistics.median(times), run


def run(repeats: int) -> list[dict]:
    schedule = Schedule.periodic(200, 2.0, 100.0, warmup=0.0, seed=np.random.SeedSequence(2024))
    kernel.simulate(Schedule.periodic(20, 2.0, 2.0), shadow=True)  # load the compiled code
    plain, base = _cpu(schedule, repeats)
    receptions = base.messages * (base.n_nodes - 1)
    per_check = plain / receptions
    rows = [{"name": "ed Table 1 configuration, no detector (Algorithm 1), 10^4 broadcasts",
             "cpu_seconds": plain, "receptions": receptions, "ns_per_reception": 1e9 * per_check,
             "paper_scale_cpu_seconds": plain * PAPER_RECEPTIONS / receptions,
             "target": "paper scale (2e7 receptions) <= 60 s CPU",
             "ok": plain * PAPER_RECEPTIONS / receptions <= 60}]
    for mode in kernel.HASH_MODES:
        cpu, hashed = _cpu(schedule, repeats, detector="hash", hash_mode=mode)
        tests = hashed.counters[f"tests_{mode}"]
        per_test = (cpu - plain) / tests
        rows.append({
            "name": f"ed Table 1 configuration, hash detector ({mode}) with recovery, 10^4 broadcasts",
            "cpu_seconds": cpu, "tests": tests, "requests": hashed.counters["req"],
            "ns_per_test": 1e9 * per_test, "ns_per_plain_check": 1e9 * per_check,
            "test_over_check": per_test / per_check, "run_over_plain": cpu / plain,
            "paper_scale_cpu_seconds": cpu * PAPER_RECEPTIONS / receptions,
            "target": "hash test <= 2 x plain delivery check; paper scale <= 120 s CPU",
            "ok": per_test <= 2 * per_check and cpu * PAPER_RECEPTIONS / receptions <= 120,
        })
    return rows


BENCHMARKS = (run,)
