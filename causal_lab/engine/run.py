"""The contract every protocol kernel follows, and what every run hands back.

A family's kernel module exposes one entry point of this shape::

    simulate(workload, *, net: network.Network, seed: numpy.random.SeedSequence, **options) -> Run

* ``workload``: the exogenous operations (who broadcasts or publishes, when; membership), a
  family-specific dataclass built from named random streams of ``seed`` before the run starts,
  so that every protocol variant of a replication sees the same workload;
* ``net``: the shared delay model (``causal_lab.engine.network``);
* ``seed``: the replication's ``SeedSequence``; the kernel draws its own streams from it
  (``causal_lab.engine.rng``), e.g. the propagation delays;
* ``options``: the protocol variant (aggregation, CHECKCB rule, ...), named keywords only.

The returned ``Run`` (a subclass of the one below) carries the family's observables plus the
event log: every broadcast and every delivery, in the order they happened, as three arrays
(``oracle.BROADCAST`` / ``oracle.DELIVER``, process, message id).  ``verify()`` puts the log
through the independent causality oracle and the family's own invariants, and raises
``ProtocolViolation`` on anything that is a bug.  Violations that a published protocol commits by
design (its authors' rule, reported by a notebook rather than fixed) are ``known_flaws``: counted
and returned, never silently dropped and never raised.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab import oracle


class ProtocolViolation(AssertionError):
    """A run broke causal order, lost or duplicated a delivery, or broke a protocol invariant."""


@dataclasses.dataclass
class Run:
    """What every run produces: its size, its event log and how many events it processed."""

    n_nodes: int
    log_kind: np.ndarray  # int8: oracle.BROADCAST or oracle.DELIVER
    log_node: np.ndarray  # int64: the process
    log_msg: np.ndarray  # int64: the message id
    events: int

    def oracle_report(self, per_delivery: bool = False) -> oracle.Report:
        """The oracle's findings on this run's log (families with topics check per topic)."""
        return oracle.check(self.n_nodes, self.log_kind, self.log_node, self.log_msg,
                            per_delivery=per_delivery)

    def violations(self, report: oracle.Report) -> int:
        """Oracle-counted deliveries the protocol must never make: out of causal order (a
        predecessor not delivered yet) or a second time.  Known flaws are not counted."""
        return report.errors + report.duplicates

    def undelivered(self, report: oracle.Report) -> int:
        """Deliveries the protocol owed and never made."""
        return report.missing

    def invariants(self, report: oracle.Report) -> list[str]:
        """Everything this run broke, as messages (none: []): the oracle's violations and
        undelivered messages, then the family's own invariants (subclasses extend the list)."""
        if self.violations(report) or self.undelivered(report):
            return [f"causality oracle: {report}"]
        return []

    def known_flaws(self, report: oracle.Report) -> dict[str, int]:
        """Violations the published protocol commits by design and a notebook reports (name ->
        count), counted apart instead of failing the run."""
        return {}

    def verify(self) -> oracle.Report:
        """Check the run; raise ``ProtocolViolation`` naming every problem, else return the
        oracle's report."""
        report = self.oracle_report()
        problems = self.invariants(report)
        if problems:
            raise ProtocolViolation(f"{type(self).__module__}: " + "; ".join(problems))
        return report
