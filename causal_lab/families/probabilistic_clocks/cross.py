"""Probabilistic clocks and the Dynamic Clock Set in the cross-family benchmark
(``causal_lab.cross_family``): the common schedule broadcast directly to the N - 1 others (this
family's model: no overlay, no sending queue).

This kernel counts time in seconds: the adapter divides the common schedule's instants and the
delay law's parameters by 1000, and multiplies the latencies by 1000.  Clocks: ``CLOCK_ENTRIES``
entries of k = 2 per process for the probabilistic clock, components of that size under the
family's default (model) size policy for the DCS.  Bytes, in the common accounting: a message
carries its source id and the clock entries attached to it (4 bytes each; a DCS message also its
S_incr set, a ``c_max``-bit mask); a process stores its active entries (the family's per-second
samples, mean over the run).  Packets: the N - 1 copies plus the DCS's deactivation and remove
rounds, which are messages too.
Out-of-order deliveries are the oracle's count (the protocol's measured error rate, by design),
not a failure of the run; duplicates and undelivered messages are.

Latencies (ms), over (application message, process other than its sender), minus the broadcast
instant: reception is the copy's arrival (its propagation delay: no sending queue), delivery is
the delivery instant, which adds the wait for the clock test and, for the DCS, a reception
deferred during a round until its decision.  Round messages are no reception
(``kernel.Run.mean_reception_latency`` / ``mean_delivery_latency``).
"""

from __future__ import annotations

import math

from causal_lab import cross_family
from causal_lab.families.probabilistic_clocks import kernel, workload

CLOCK_ENTRIES = 50  # M: the family's (and seed 004's) default clock size


def _run(point: cross_family.Point, seed, config: kernel.Config) -> dict:
    common = cross_family.schedule(point, seed)
    w = workload.Workload.broadcasts(point.n_nodes, common.times / 1e3, common.senders,
                                     point.duration_ms / 1e3)
    run = kernel.simulate(w, net=point.net_seconds(), seed=seed, config=config)
    report = run.verify()
    c = run.counters
    integer = cross_family.INTEGER
    sincr = math.ceil(config.c_max / 8) if config.c_max > 1 else 0
    stored = run.sec_mean.mean() if len(run.sec_mean) else config.m_c
    return {
        "control_bytes": integer + sincr + integer * c["attached_entries"] / c["broadcasts"],
        "stored_bytes": float(integer * stored),
        "reception_latency": 1e3 * run.mean_reception_latency(),
        "delivery_latency": 1e3 * run.mean_delivery_latency(),
        "packets_per_broadcast": (c["broadcasts"] * (point.n_nodes - 1) + c["control_messages"])
        / c["broadcasts"],
        **cross_family.oracle_counts(run, report),
    }


PROTOCOLS = (
    cross_family.Protocol("pc", f"probabilistic clock (M = {CLOCK_ENTRIES})", "002", False,
                          lambda point, seed: _run(point, seed, kernel.Config.pc(CLOCK_ENTRIES))),
    cross_family.Protocol("dcs", "Dynamic Clock Set", "002", False,
                          lambda point, seed: _run(point, seed, kernel.Config(m_c=CLOCK_ENTRIES))),
)
