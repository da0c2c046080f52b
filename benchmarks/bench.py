"""``make bench``: throughput of the engine, the oracle and whole protocol runs on this machine.

Medians of several runs (the machine is shared and noisy).  Shared parts: the bare scheduling loop
>= 2 M events/s of CPU (ring of 1000 nodes, 100 messages in flight, 10^5 hops) and the oracle on a
synthetic all-to-all log of 2000 processes (the size of the probabilistic-clock papers;
``--oracle-messages 100000`` gives their 2 x 10^8 deliveries).  Every family adds its own runs
with their targets in its ``bench.py`` (``BENCHMARKS``: functions of the repeat count returning
result rows), found through ``causal_lab.catalog``; ``--family`` keeps one.
Results also go to ``build/bench.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from causal_lab import catalog, oracle, paths
from causal_lab.engine import events


def bench_ring(repeats: int) -> dict:
    events.ring_benchmark(10, 2, 10)  # compile (or load from cache) outside the timing
    rates = []
    for _ in range(repeats):
        started = time.process_time()
        n = events.ring_benchmark(1000, 100, 100_000)
        rates.append(n / (time.process_time() - started))
    return {"name": "ring: bare scheduling loop (1000 nodes, 100 in flight, 1e5 hops)",
            "events_per_cpu_second": statistics.median(rates), "target": ">= 2e6",
            "ok": statistics.median(rates) >= 2e6}


def synthetic_log(n: int, m: int, seed: int = 1):
    """Direct broadcast to everyone, 200 broadcasts/s, Normal(100 ms, 20 ms) non-FIFO delays."""
    g = np.random.default_rng(seed)
    t_b = np.arange(m) / 200.0
    src = g.permutation(n)[np.arange(m) % n]
    t_d = t_b[:, None] + np.clip(g.normal(0.1, 0.02, (m, n)), 0, None)
    t_d[np.arange(m), src] = np.inf  # the source delivers at its broadcast
    kind = np.r_[np.zeros(m, np.int8), np.ones(m * n, np.int8)]
    node = np.r_[src, np.tile(np.arange(n), m)]
    msg = np.r_[np.arange(m), np.repeat(np.arange(m), n)]
    when = np.r_[t_b, t_d.ravel()]
    keep = np.isfinite(when)
    order = np.lexsort((kind[keep], when[keep]))  # a broadcast before deliveries at the same instant
    return kind[keep][order], node[keep][order], msg[keep][order]


def bench_oracle(n: int, m: int) -> dict:
    kind, node, msg = synthetic_log(n, m)
    started = time.perf_counter()
    report = oracle.check(n, kind, node, msg)
    seconds = time.perf_counter() - started
    return {"name": f"oracle on a synthetic log: {n} processes x {m} messages",
            "deliveries": report.deliveries, "errors_found": report.errors, "seconds": seconds,
            "deliveries_per_second": report.deliveries / seconds, "target": ">= 1e6 deliveries/s",
            "ok": report.deliveries / seconds >= 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--oracle-messages", type=int, default=20_000)
    parser.add_argument("--family", help="only this family's benchmarks (and the shared ones)")
    args = parser.parse_args()
    results = [bench_ring(args.repeats), bench_oracle(2000, args.oracle_messages)]
    for family in [args.family] if args.family else catalog.families():
        for bench in getattr(catalog.family_module(family, "bench"), "BENCHMARKS", ()):
            results += bench(args.repeats)
    for r in results:
        numbers = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in r.items() if k not in ("name", "target", "ok"))
        print(f"{'PASS' if r['ok'] else 'MISS'}  {r['name']}\n      {numbers}  (target {r['target']})")
    out = paths.repo_root() / "build" / "bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
