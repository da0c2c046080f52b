"""Probabilistic clocks with an error detector in the cross-family benchmark
(``causal_lab.cross_family``): the Mostéfaoui-Weiss detector and the hash detector (authors'
mode), each acting through dependency requests (REQ / RSP, real messages through the delay
model), on the common schedule broadcast directly to the N - 1 others.

Recovery is ``parallel`` (spec §3.2), not the authors' serial one: a serial process skips its
broadcast slots while it waits for a reply, which would change the common schedule.  Time is in
seconds in this kernel (the adapter divides the schedule's instants by 1000 and multiplies the
latencies by 1000), and the schedule's nominal load (which sizes the detectors' delivery pool and
the authors' clock-difference bound) is the common load.
Clocks have ``CLOCK_ENTRIES`` entries, k = 2 (as in the probabilistic-clock adapter).

Bytes, in the common accounting: a message carries its source id and the clock (4 bytes per
entry), the hash detector's messages also their 8-byte dependency hash.  A process stores its
clock and the detector's pool of the deliveries of the last ``kernel.TAU`` seconds, four integers
per delivery (plus its hash for the hash detector); the pool's size is estimated as the
deliveries of that horizon at the common load (``min(load * TAU, broadcasts)``), which the kernel
does not report.  REQ / RSP messages count in the packets, not in ``control_bytes``.

Latencies (ms), over (message, process other than its sender): reception is the arrival of the
message's broadcast copy (a reply RSP carries ids only, so the copy is always its first arrival,
and REQ / RSP transit is no reception), delivery is the delivery instant, which includes the wait
for the clock condition and, for a flagged message, for its request, reply and dependencies; both
minus the broadcast instant (``kernel.Run.mean_reception_latency`` / ``mean_delivery_latency``).
"""

from __future__ import annotations

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
        "reception_latency": 1e3 * run.mean_reception_latency(),
        "delivery_latency": 1e3 * run.mean_delivery_latency(),
        "packets_per_broadcast": (n - 1) + (c["req"] + c["rsp"]) / run.messages,
        **cross_family.oracle_counts(run, report),
    }


PROTOCOLS = (
    cross_family.Protocol("pc_mostefaoui", "PC + Mostéfaoui-Weiss detector", "004", False,
                          lambda point, seed: _run(point, seed, "mostefaoui")),
    cross_family.Protocol("pc_hash", "PC + hash detector", "004", False,
                          lambda point, seed: _run(point, seed, "hash")),
)
