"""Who broadcasts when in seed 004's experiments: every process periodically, with jitter.

Seed 004 §6 says both "Poisson with parameter δ" and "200 processes that broadcast a message every
2 seconds"; the authors' simulator (spec amendment 4, ``ErrorDetectors/code/src/Nodes/NodeBase.cc``)
sends periodically: process i first sends at ``i·T/N``, then every ``T`` seconds, each instant
moved by an independent Normal(0, 10 ms) jitter around its slot (the jitter does not accumulate).
``T = N / load`` keeps the system load at ``load`` broadcasts per second.

The schedule is exogenous: it is drawn from the replication's ``schedule`` stream before the run,
so every variant of a replication (no detector, hash detector with recovery, ...) gets the same
instants.  A slot is an *opportunity* to broadcast: in the authors' serial recovery a process that
is waiting for a dependency reply skips its slot (spec amendment 5), so a recovery run may
broadcast a little less than its schedule.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from causal_lab.engine import rng

JITTER_SD = 0.010  # seconds (authors' code: normal_distribution(0, 10000 µs))


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Broadcast slots sorted by time: ``times[b]`` at process ``sources[b]``, which is that
    process's ``slots[b]``-th slot (0-based; the counter of its propagation delays)."""

    n_nodes: int
    period: float  # T: seconds between two slots of one process
    warmup: float  # statistics count the messages of slots at or after this instant
    times: np.ndarray  # float64[B]
    sources: np.ndarray  # int64[B]
    slots: np.ndarray  # int64[B]

    @property
    def load(self) -> float:
        """Nominal system load: broadcasts per second."""
        return self.n_nodes / self.period

    @property
    def end(self) -> float:
        return float(self.times[-1]) if len(self.times) else 0.0

    @classmethod
    def periodic(cls, n_nodes: int, period: float, duration: float, warmup: float = 5.0,
                 jitter: float = JITTER_SD, seed: np.random.SeedSequence | None = None) -> "Schedule":
        """Slots of the ``warmup + duration`` first seconds: process i at ``i·T/N + n·T + ε``,
        ``ε ~ Normal(0, jitter)``, an instant never earlier than the process's previous one
        (the authors then send at the slot's base instant)."""
        if n_nodes < 1 or not period > 0 or duration < 0 or warmup < 0 or jitter < 0:
            raise ValueError(f"bad schedule: N={n_nodes}, period={period}, duration={duration}, "
                             f"warmup={warmup}, jitter={jitter}")
        seed = seed if seed is not None else np.random.SeedSequence(0)
        horizon = warmup + duration
        per_node = int(math.ceil(horizon / period)) + 1
        base = np.arange(n_nodes)[:, None] * (period / n_nodes) + np.arange(per_node)[None, :] * period
        eps = rng.generator(seed, "schedule").normal(0.0, jitter, base.shape) if jitter > 0 else 0.0
        times = base + eps
        previous = np.concatenate([np.full((n_nodes, 1), 0.0), times[:, :-1]], axis=1)
        times = np.where(times < previous, base, times)
        times = np.maximum(times, 0.0)
        keep = base < horizon
        src = np.broadcast_to(np.arange(n_nodes)[:, None], base.shape)[keep]
        slot = np.broadcast_to(np.arange(per_node)[None, :], base.shape)[keep]
        when = times[keep]
        order = np.lexsort((src, when))
        return cls(n_nodes, float(period), float(warmup), when[order].astype(np.float64),
                   src[order].astype(np.int64), slot[order].astype(np.int64))

    @classmethod
    def scripted(cls, times, sources, n_nodes: int, period: float = 1.0, warmup: float = 0.0) -> "Schedule":
        """A hand-written schedule (scenario tests): slots numbered per source in time order."""
        times = np.asarray(times, np.float64)
        sources = np.asarray(sources, np.int64)
        order = np.lexsort((sources, times))
        times, sources = times[order], sources[order]
        slots = np.zeros(len(times), np.int64)
        seen = np.zeros(n_nodes, np.int64)
        for b, s in enumerate(sources):
            slots[b] = seen[s]
            seen[s] += 1
        return cls(n_nodes, float(period), float(warmup), times, sources, slots)
