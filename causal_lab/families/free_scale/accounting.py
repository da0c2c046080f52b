"""Byte accounting (spec §5.4, §6.5, amendment 2): what a message carries and a peer keeps.

The paper gives no field sizes; the spec's (all ours): integers and identifiers 4 bytes, an
(id, integer) pair 8, a bit vector a 4-byte offset plus its packed span (``bitvec``).

Communication overhead is the mean over the *transmissions* sent inside the measurement window,
a broadcast counted once; storage overhead the mean over samples taken after every delivery
inside the window.  Kernels add each byte count to a (sum, count) pair of their ``acc`` array
(``add``), and each reception and delivery latency of a message broadcast in the window
(``latency``); the means are formed here, in two accountings (amendment 2):

* **A** (the spec's default): every field, headers included: ``m_int`` = 12 (id, SN, Last) +
  DV, ``m_ext`` = 8 (id, SN) + CI + I, IDR = 8 + 8 per pair, DS = the DS8 formula; the internal
  group's mean is over peer-to-SP messages, relays and translations alike;
* **B**: the fixed header excluded (``m_int`` = DV only, ``m_ext`` = CI + I, IDR = pairs, DS8
  minus its 8 header bytes), and the internal group's mean over the super peer's messages to the
  internal group only (relays and translations), the reading under which the paper's internal
  line passes near the origin.
"""

from __future__ import annotations

from causal_lab.engine.jit import njit

INTEGER = 4
PAIR = 8
INT_HEADER = 12  # m_int: id, SN, Last
EXT_HEADER = 8  # m_ext: id, SN
IDR_HEADER = 8  # sender id, SN
DS_HEADER = 8
ACCOUNTINGS = ("A", "B")


@njit(inline="always")
def add(acc, i, value, now, start, end):
    """Count ``value`` in the (sum, count) pair ``acc[i], acc[i + 1]`` if ``now`` is inside the
    measurement window [start, end)."""
    if start <= now < end:
        acc[i] += value
        acc[i + 1] += 1.0


@njit(inline="always")
def latency(st, i, app, now):
    """Count ``now`` minus the broadcast instant of ``app`` in the pair ``st.acc[i]`` (either
    kernel's state), if ``app`` was broadcast in the window: a latency belongs to its message, and
    the run drains, so every message of the window is counted at every receiver whatever the
    instant it gets there."""
    sent = st.app_time[app]
    add(st.acc, i, now - sent, sent, st.start, st.end)


def mean(total: float, count: float) -> float:
    return total / count if count else float("nan")


def internal_comm(up, relay, trans, accounting: str) -> float:
    """The internal group's communication overhead from its three streams' (sum, count):
    peer -> SP, SP relays, SP translations (bytes under accounting A)."""
    if accounting == "A":
        return mean(up[0] + relay[0] + trans[0], up[1] + relay[1] + trans[1])
    n = relay[1] + trans[1]
    return mean(relay[0] + trans[0] - INT_HEADER * n, n)


def headerless(mean_a: float, header: int, accounting: str) -> float:
    """A mean under accounting A, or B (its fixed header excluded)."""
    return mean_a if accounting == "A" else mean_a - header
