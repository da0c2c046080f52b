"""Who sends when (paper §3.2, spec §6.2 and §6.6), and the measurement window (§6.4 with
amendments 1 and 5).

Peers are numbered globally: the ``L = N / 2`` internal peers are ``0 .. L-1`` (internal ids
``1 .. L``), the ``E = N / 2`` external peers are ``L .. N-1`` (external ids ``2 .. E+1``; the
super peer has external id 1 and is node ``N``, not an application process).

Every peer generates messages with gaps drawn from Normal(gap_mean, gap_sigma) clamped to
[gap_min, gap_max] (70-90 ms, sigma 5 in the paper's original runs; in the fixed-rate runs the
mean is ``N / R`` and the interval and sigma scale with it, spec §6.6).  The first message comes
at Uniform(0, gap_mean) (``start = random_phase``, spec §6.2) or after one gap
(``start = one_gap``, the synchronised start of amendment 6).  Generation stops at the end of the
measurement window; the run then drains.  Application messages are numbered in send order: that
number is the message id of the event log.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_lab.engine import rng

STARTS = ("random_phase", "one_gap")


@dataclasses.dataclass(frozen=True)
class Window:
    """Warm-up and measurement window in ms: metrics count what is sent or delivered in
    [start, end); generation stops at ``end``.  Both are stored as floats whatever they are given
    as: a kernel state's type follows them, and ``Window(300, 1500)`` would otherwise give the
    kernels a state type of their own, compiled anew for about 100 s instead of loaded from the
    cache the warm-up filled."""

    start: float
    end: float

    def __post_init__(self):
        object.__setattr__(self, "start", float(self.start))
        object.__setattr__(self, "end", float(self.end))


def window(n_peers: int, gap_mean_ms: float, warmup_s: float, measure_s: float,
           warmup_gaps: float, measure_gaps: float, min_messages: int) -> Window:
    """The run's window: the §6.4 values, lengthened to ``warmup_gaps`` / ``measure_gaps``
    generation gaps (amendment 1: a peer's first message lacks the terms of the steady state)
    and to ``min_messages`` messages in the window (amendment 5)."""
    rate_per_ms = n_peers / gap_mean_ms
    warm = max(warmup_s * 1e3, warmup_gaps * gap_mean_ms)
    measure = max(measure_s * 1e3, measure_gaps * gap_mean_ms, min_messages / rate_per_ms)
    return Window(warm, warm + measure)


@dataclasses.dataclass
class Schedule:
    """The application messages of one run, in send order."""

    n_peers: int
    times: np.ndarray  # float64[M] send instants (ms), ascending
    senders: np.ndarray  # int64[M] global peer
    seqs: np.ndarray  # int64[M] the sender's own sequence number, 1, 2, ...
    window: Window

    @property
    def internal(self) -> int:
        return self.n_peers // 2

    @classmethod
    def periodic(cls, n_peers: int, gap_mean: float, gap_sigma: float, gap_min: float,
                 gap_max: float, win: Window, start: str, seed: np.random.SeedSequence) -> "Schedule":
        """Every peer sends with clamped-Normal gaps until ``win.end`` (spec §6.2)."""
        if start not in STARTS:
            raise ValueError(f"start must be one of {', '.join(STARTS)}, got {start!r}")
        g = rng.generator(seed, "workload")
        per_peer = int(np.ceil(win.end / gap_min)) + 2
        gaps = np.clip(g.normal(gap_mean, gap_sigma, (n_peers, per_peer)), gap_min, gap_max)
        if start == "random_phase":
            gaps[:, 0] = g.uniform(0.0, gap_mean, n_peers)
        when = np.cumsum(gaps, axis=1)
        sent = when < win.end
        senders = np.repeat(np.arange(n_peers), sent.sum(axis=1))
        times = when[sent]
        seqs = np.concatenate([np.arange(1, k + 1) for k in sent.sum(axis=1)]) if n_peers else times
        order = np.lexsort((senders, times))
        return cls(n_peers, times[order], senders[order], seqs[order].astype(np.int64), win)

    @classmethod
    def scripted(cls, n_peers: int, senders) -> "Schedule":
        """Messages sent one per ms by the given peers (scenario tests)."""
        senders = np.asarray(senders, np.int64)
        seqs = np.zeros(len(senders), np.int64)
        for k, s in enumerate(senders):
            seqs[k] = 1 + int((senders[:k] == s).sum())
        times = np.arange(len(senders), dtype=np.float64)
        return cls(n_peers, times, senders, seqs, Window(0.0, float(len(senders))))

    def message_of(self) -> tuple[np.ndarray, np.ndarray]:
        """(offset[N + 1], ids): the id of peer p's k-th message is ids[offset[p] + k - 1]."""
        counts = np.bincount(self.senders, minlength=self.n_peers)
        offset = np.zeros(self.n_peers + 1, np.int64)
        offset[1:] = np.cumsum(counts)
        ids = np.empty(len(self.senders), np.int64)
        ids[offset[self.senders] + self.seqs - 1] = np.arange(len(self.senders))
        return offset, ids
