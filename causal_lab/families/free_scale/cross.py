"""The free-scale protocol and IDR in the cross-family benchmark (``causal_lab.cross_family``):
the common schedule on the paper's topology, N / 2 internal peers behind one super peer and N / 2
external peers (peer p of the common schedule is global peer p, so senders below N / 2 are
internal).  The super peer is an extra node, not an application process.

Delays: the common law through ``channel.from_network`` (same Normal law and clip, this family's
own per-(message, destination) draws).  Bytes: the family's accounting A (spec §5.4: integers 4
bytes, an (id, integer) pair 8, a bit vector a 4-byte offset plus its packed span) *is* the
common accounting, over the whole run (the measurement window is [0, inf)): ``control_bytes`` is
the mean over every wire message (peer to SP, relays, translations, external sends), storage the
family's samples after every delivery, averaged over the N application processes (internal and
external groups weighted by their size; the super peer's own storage is not in the mean).

Packets are counted from the topology's fan-out, which the kernels do not count: an internal
message goes to the SP (1), is relayed to the L internal peers (its sender included) and
translated to the E external peers: N + 1; an external message goes to the E - 1 other external
peers and the SP, which translates it to the L internal peers: N.  IDR (SP transparent): N either
way.

Latencies, in ms as the kernels count (no conversion), from the broadcast instant, over every
(message, application process other than its sender): ``reception_latency`` to the arrival of
the message's one copy there (internal peer to internal peer: peer -> SP -> peer, two hops; to an
external peer the SP's translation, also two hops; external to external: one hop; IDR the same
paths, the SP relaying), ``delivery_latency`` to its delivery (the reception plus the wait in
the buffers).  The super peer is no application process: its receptions do not count.
"""

from __future__ import annotations

import math


from causal_lab import cross_family
from causal_lab.families.free_scale import channel, idr, kernel, workload

_WIRE_STREAMS = (kernel.A_UP, kernel.A_RELAY, kernel.A_TRANS, kernel.A_EXT_PEER, kernel.A_EXT_SP)


def _schedule(point: cross_family.Point, seed) -> workload.Schedule:
    common = cross_family.schedule(point, seed)
    return workload.Schedule(point.n_nodes, common.times, common.senders, common.seqs(),
                             workload.Window(0.0, math.inf))


def _row(run, report, control: float, stored: float, packets: float) -> dict:
    return {"control_bytes": control, "stored_bytes": stored,
            "reception_latency": float(run.mean_reception_latency()),
            "delivery_latency": float(run.mean_delivery_latency()), "packets_per_broadcast": packets,
            **cross_family.oracle_counts(run, report)}


def run_free_scale(point: cross_family.Point, seed) -> dict:
    schedule = _schedule(point, seed)
    run = kernel.simulate(schedule, net=channel.from_network(point.net, seed), seed=seed)
    report = run.verify()
    acc, n = run.acc, point.n_nodes
    control = sum(acc[i] for i in _WIRE_STREAMS) / sum(acc[i + 1] for i in _WIRE_STREAMS)
    m = run.metrics()
    internal = int((schedule.senders < schedule.internal).sum())
    return _row(run, report, float(control), float(m["stor_int"] + m["stor_ext"]) / 2,
                (internal * (n + 1) + (len(schedule.senders) - internal) * n) / len(schedule.senders))


def run_idr(point: cross_family.Point, seed) -> dict:
    schedule = _schedule(point, seed)
    run = idr.simulate(schedule, net=channel.from_network(point.net, seed), seed=seed)
    report = run.verify()
    m = run.metrics()
    return _row(run, report, float(m["comm_idr_A"]), float(m["stor_idr"]), float(point.n_nodes))


PROTOCOLS = (
    cross_family.Protocol("free_scale", "free-scale (groups + super peer)", "001", True, run_free_scale),
    cross_family.Protocol("idr", "IDR (immediate dependencies)", "001", True, run_idr),
)
