"""VCube-PS causal barriers in the cross-family benchmark (``causal_lab.cross_family``): one
topic, every process subscribed from t = 0, the common schedule as PUBLISH calls, the VCube-PS
tree of the topic.  SRPT-S is not part of the benchmark.

The family keeps no byte accounting; in the common one a publication carries its source and
counter (2 integers) and its causal barrier, one (source, counter) pair per entry: ``8 + 8 *
barrier``.  A process stores, for the topic, its view, ``first_rec`` and ``last_delvs`` (N
integers each) and its causal barrier (taken as the mean barrier the publications carried).
Packets count every copy: PUBs and their ACKs (the ACK wave that lets a source start its next
publication of the topic).  Latencies are the family's: from the PUBLISH call, so they include the
wait behind the source's earlier publications whose ACK wave has not completed.
"""

from __future__ import annotations

import numpy as np

from causal_lab import cross_family
from causal_lab.families.vcube_ps import kernel


_COPIES = ("pub_copies", "ack_copies", "delegations", "sub_copies", "uns_copies")


def run(point: cross_family.Point, seed) -> dict:
    common = cross_family.schedule(point, seed)
    n, b = point.n_nodes, len(common.times)
    w = kernel.Workload(d=n.bit_length() - 1, n_topics=1, times=common.times,
                        ops=np.full(b, kernel.OP_PUBLISH, np.int64), nodes=common.senders,
                        topics=np.zeros(b, np.int64), initial=np.ones((1, n), bool),
                        roots=np.zeros(1, np.int64))  # roots: SRPT-S only
    result = kernel.simulate(w, net=point.net, seed=seed)
    report = result.verify()
    c = result.counters
    barrier = result.barrier_size[result.pubs].astype(np.float64)
    integer = cross_family.INTEGER
    return {
        "control_bytes": float(2 * integer + 2 * integer * barrier.mean()),
        "stored_bytes": float(3 * integer * n + 2 * integer * barrier.mean()),
        "reception_latency": float(result.mean_latency()),
        "delivery_latency": float(result.mean_delivery_latency()),
        "packets_per_broadcast": sum(c[k] for k in _COPIES) / len(result.pubs),
        **cross_family.oracle_counts(result, report),
    }


PROTOCOLS = (cross_family.Protocol("vcube_ps", "VCube-PS (causal barriers)", "003", True, run),)
