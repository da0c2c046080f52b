"""Probabilistic clocks with an error detector in the cross-family benchmark
(``causal_lab.cross_family``): the Mostéfaoui-Weiss detector and the hash detector (authors'
mode), each acting through dependency requests (REQ / RSP, real messages through the delay
model), on the common schedule broadcast directly to the N - 1 others.

Recovery is ``parallel`` (spec §3.2), not the authors' serial one: a serial process skips its
broadcast slots while it waits for a reply, which would change the common schedule.  Time is in
seconds in this kernel (the adapter divides by 1000), and the schedule's nominal load (which
sizes the detectors' delivery pool and the authors' clock-difference bound) is the common load.
Clocks have ``CLOCK_ENTRIES`` entries, k = 2 (as in the probabilistic-clock adapter).

Bytes, in the common accounting: a message carries its source id and the clock (4 bytes per
entry), the hash detector's messages also their 8-byte dependency hash.  A process stores its
clock and the detector's pool of the deliveries of the last ``kernel.TAU`` seconds, four integers
per delivery (plus its hash for the hash detector); the pool's size is estimated as the
deliveries of that horizon at the common load (``min(load * TAU, broadcasts)``), which the kernel
does not report.  REQ / RSP messages count in the packets, not in ``control_bytes``.  Latencies
are NaN: the kernel logs deliveries in order but not their instants.
"""

from __future__ import annotations

import math

from causal_lab import cross_family
from causal_lab.families.error_detectors import kernel, workload

CLOCK_ENTRIES = 50


def _run(point: cross_family.Point, seed, detector: str) -> dict:
    common = cross_family.schedule(point, seed)
    n, integer = point.n_nodes, cross_family.INTEGER
    schedule = workload.Schedule.scripted(common.times / 1e3, common.senders, n,
                                          period=n / point.load)
    run = kernel.simulate(schedule, net=point.net_seconds(), seed=seed, clock_size=CLOCK_ENTRIES,
                          detector=detector, recovery="parallel")
    report = run.verify()
    c = run.counters
    hashed = cross_family.HASH if detector == "hash" else 0
    pool = min(point.load * kernel.TAU, point.broadcasts) * (4 * integer + hashed)
    return {
        "control_bytes": float(integer + integer * CLOCK_ENTRIES + hashed),
        "stored_bytes": float(integer * CLOCK_ENTRIES + pool),
        "reception_latency": math.nan,
        "delivery_latency": math.nan,
        "packets_per_broadcast": (n - 1) + (c["req"] + c["rsp"]) / run.messages,
        **cross_family.oracle_counts(run, report),
    }


PROTOCOLS = (
    cross_family.Protocol("pc_mostefaoui", "PC + Mostéfaoui-Weiss detector", "004", False,
                          lambda point, seed: _run(point, seed, "mostefaoui")),
    cross_family.Protocol("pc_hash", "PC + hash detector", "004", False,
                          lambda point, seed: _run(point, seed, "hash")),
)
