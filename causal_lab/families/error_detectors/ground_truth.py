"""The oracle's verdict on a run: errors, what each detector caught, and which requests were needed.

Everything here is decided by ``causal_lab.oracle`` from the event log, never by the protocol:

* ``delivery_truth``: the oracle's per-delivery flags, and which log entries count (deliveries of
  messages broadcast after the warm-up, spec §5.3);
* ``detection``: in a shadow run, for each detector verdict bit of the kernel (``Run.flags``),
  how many deliveries it flagged, how many of the oracle's errors it flagged (caught) and missed;
* ``requests_needed``: for each REQ, whether the message really had an undelivered causal
  predecessor at the requester when the request was sent (needed) or not (a false alarm).

How the REQ ground truth is obtained.  "Needed" means: had p_i delivered m at the REQ instant,
the delivery would have been out of causal order, i.e. the oracle's ``error_strict`` of a
delivery of m at that point of the log.  The real log cannot be edited there without changing
p_i's later state (and so the causal pasts of p_i's later broadcasts).  Instead each requester
gets *phantom* processes: a phantom delivers, in the log, exactly what its process delivers,
never broadcasts, and delivers m at the REQ instant (skipping its mirror of the real, later
delivery of m).  Its flag on that entry is the oracle's answer; since a phantom never
broadcasts, it changes no vector clock and no other process's verdict.  Requests of one process
whose windows (REQ to delivery) overlap use different phantoms, so every phantom's history is
the process's own history up to its REQ.  Phantoms are added in batches so the oracle's
quadratic state stays bounded (``PHANTOMS_PER_PASS``).  A process whose requests do not overlap
reuses one phantom, so a pass usually covers every request of a run.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle
from causal_lab.engine.jit import njit
from causal_lab.families.error_detectors import kernel

PHANTOMS_PER_PASS = 1024
DETECTOR_BITS = {
    "mw_normative": kernel.F_MW_NORMATIVE,
    "mw_literal": kernel.F_MW_LITERAL,
    "hash_authors": kernel.F_HASH_AUTHORS,
    "hash_residual": kernel.F_HASH_RESIDUAL,
}


@dataclasses.dataclass(frozen=True)
class Truth:
    """The oracle's report and, per log entry, whether it is a counted delivery and an error."""

    report: oracle.Report
    counted: np.ndarray  # bool per log entry: a delivery of a message broadcast after warm-up
    error: np.ndarray  # bool per log entry: delivered out of causal order (error_strict)

    @property
    def deliveries(self) -> int:
        return int(self.counted.sum())

    @property
    def errors(self) -> int:
        return int((self.counted & self.error).sum())

    def messages_with_error(self, run: kernel.Run) -> int:
        return int(np.unique(run.log_msg[self.counted & self.error]).size)


def counted_messages(run: kernel.Run) -> np.ndarray:
    """Per message: broadcast at or after the warm-up (spec §5.3)."""
    return run.msg_time >= run.schedule.warmup


def delivery_truth(run: kernel.Run) -> Truth:
    report = run.oracle_report(per_delivery=True)
    counted = (run.log_kind == oracle.DELIVER) & counted_messages(run)[run.log_msg]
    return Truth(report, counted, report.delivery_error)


def detection(run: kernel.Run, truth: Truth) -> dict[str, int]:
    """For each detector of a shadow run: deliveries it flagged, errors it caught / missed."""
    out = {}
    for name, bit in DETECTOR_BITS.items():
        flagged = truth.counted & ((run.flags & bit) != 0)
        out[f"{name}_flagged"] = int(flagged.sum())
        out[f"{name}_caught"] = int((flagged & truth.error).sum())
        out[f"{name}_missed"] = truth.errors - out[f"{name}_caught"]
    return out


def requests_needed(run: kernel.Run) -> np.ndarray:
    """Per REQ of the run (in ``run.req_*`` order) the oracle's verdict: 1 needed, 0 false alarm."""
    verdict = np.zeros(len(run.req_msg), np.int8)
    if len(verdict) == 0:
        return verdict
    copy = _phantom_copies(run.n_nodes, run.req_node, run.req_logpos, run.req_delivered)
    # one phantom per (process, copy); batches of phantoms, each checked in its own oracle pass
    keys = run.req_node * (copy.max() + 1) + copy
    unique_keys, phantom_of_req = np.unique(keys, return_inverse=True)
    phantom_node = unique_keys // (copy.max() + 1)
    for first in range(0, len(unique_keys), PHANTOMS_PER_PASS):
        batch = np.arange(first, min(first + PHANTOMS_PER_PASS, len(unique_keys)))
        reqs = np.flatnonzero((phantom_of_req >= first) & (phantom_of_req < batch[-1] + 1))
        kind, node, msg, where = _augmented_log(
            run.n_nodes, run.log_kind, run.log_node, run.log_msg, phantom_node[batch],
            phantom_of_req[reqs] - first, run.req_msg[reqs], run.req_logpos[reqs],
            run.req_delivered[reqs])
        report = oracle.check(run.n_nodes + len(batch), kind, node, msg, per_delivery=True)
        verdict[reqs] = report.delivery_error[where]
    return verdict


def _phantom_copies(n, req_node, req_logpos, req_delivered) -> np.ndarray:
    """Per REQ, which phantom of its process takes it: the first whose previous request was
    delivered before this one was sent (greedy interval colouring, requests in log order)."""
    busy_until: list[list[int]] = [[] for _ in range(n)]
    copy = np.zeros(len(req_node), np.int64)
    for r in np.argsort(req_logpos, kind="stable"):
        ends = busy_until[req_node[r]]
        end = int(req_delivered[r]) if req_delivered[r] >= 0 else np.iinfo(np.int64).max
        for c, until in enumerate(ends):
            if until <= req_logpos[r]:
                ends[c] = end
                copy[r] = c
                break
        else:
            copy[r] = len(ends)
            ends.append(end)
    return copy


@njit
def _augmented_log(n, kind, node, msg, phantom_node, req_phantom, req_msg, req_logpos, req_delivered):
    """The log with the phantoms' entries: each phantom mirrors its process's entries as
    deliveries, delivers its requested messages at their REQ instants (returned: their indices
    in the new log), and skips the mirror of those messages' real deliveries."""
    n_ph = len(phantom_node)
    per_node = np.zeros(n, np.int64)
    for p in range(n_ph):
        per_node[phantom_node[p]] += 1
    first_of = np.zeros(n + 1, np.int64)
    for a in range(n):
        first_of[a + 1] = first_of[a] + per_node[a]
    phantoms = np.zeros(n_ph, np.int64)  # phantoms grouped by process
    fill = first_of[:-1].copy()
    for p in range(n_ph):
        phantoms[fill[phantom_node[p]]] = p
        fill[phantom_node[p]] += 1
    extra = 0
    for k in range(len(kind)):
        extra += per_node[node[k]]
    total = len(kind) + extra + len(req_msg)
    out_kind = np.empty(total, np.int8)
    out_node = np.empty(total, np.int64)
    out_msg = np.empty(total, np.int64)
    where = np.empty(len(req_msg), np.int64)
    by_pos = np.argsort(req_logpos, kind="mergesort")
    skip_row = np.full(len(kind) + 1, -1, np.int64)  # the phantom that already has this message
    for r in range(len(req_msg)):
        if req_delivered[r] >= 0:
            skip_row[req_delivered[r]] = req_phantom[r]
    t = 0
    w = 0
    for k in range(len(kind) + 1):
        while t < len(by_pos) and req_logpos[by_pos[t]] == k:
            r = by_pos[t]
            out_kind[w], out_node[w], out_msg[w] = oracle.DELIVER, n + req_phantom[r], req_msg[r]
            where[r] = w
            w += 1
            t += 1
        if k == len(kind):
            break
        out_kind[w], out_node[w], out_msg[w] = kind[k], node[k], msg[k]
        w += 1
        q = node[k]
        for c in range(first_of[q], first_of[q + 1]):
            p = phantoms[c]
            if skip_row[k] == p:
                continue
            out_kind[w], out_node[w], out_msg[w] = oracle.DELIVER, n + p, msg[k]
            w += 1
    return out_kind[:w], out_node[:w], out_msg[:w], where
