"""VCube causal broadcast with and without aggregation in the cross-family benchmark
(``causal_lab.cross_family``): the common schedule over the per-source VCube trees.

Byte accounting converted to the common one: the family counts a message's source id in 2 bytes
(thesis accounting, spec W7) and 4 bytes per Birman-compressed vector-clock entry; here the id
takes 4 bytes like every integer, so a message carries ``4 + 4 * entries``.  A process stores its
delivered vector clock VC and its received one VMAX: 2 N integers.
"""

from __future__ import annotations

import numpy as np

from causal_lab import cross_family
from causal_lab.families.vcube_broadcast import kernel


def _run(point: cross_family.Point, seed, aggregate: bool) -> dict:
    common = cross_family.schedule(point, seed)
    d = point.n_nodes.bit_length() - 1
    run = kernel.simulate(kernel.Schedule(d, common.times, common.senders), net=point.net,
                          seed=seed, aggregate=aggregate)
    report = run.verify()
    n = point.n_nodes
    others = ~np.eye(n, dtype=bool)[run.sources]  # (message, receiver) pairs, the source excluded
    sent = np.repeat(run.times, n - 1)
    return {
        "control_bytes": float(cross_family.INTEGER * (1 + run.entries).mean()),
        "stored_bytes": float(2 * cross_family.INTEGER * n),
        "reception_latency": float((run.recv_time[others] - sent).mean()),
        "delivery_latency": float((run.deliv_time[others] - sent).mean()),
        "packets_per_broadcast": run.packets / len(run.sources),
        **cross_family.oracle_counts(run, report),
    }


PROTOCOLS = (
    cross_family.Protocol("vcube", "VCube (vector clocks)", "000", True,
                          lambda point, seed: _run(point, seed, False)),
    cross_family.Protocol("vcube_agg", "VCube + aggregation", "000", True,
                          lambda point, seed: _run(point, seed, True)),
)
