"""Who broadcasts when: the load patterns of seed 002 §V and the send models that turn a load
λ(t) (broadcasts per second in the whole system) into broadcast instants and senders
(probabilistic_clocks spec §5.2, §6.1-6.4, A.7, A.8 and amendments 3-4).

Load patterns (``pattern``):

* ``constant``        λ(t) = ``load`` (Figure 5, Figure 10);
* ``bell``            the spec's four Gaussian bells from 10 to 200 msg/s over 850 s (A.7, Figure 6);
* ``random``          the spec's knots every 20 s with three single-knot peaks (A.8, Figure 8);
* ``bell_authors``    the authors' generator (``createBellLoad.py``): the same bells without the
                      floor of 10, one value per second;
* ``random_authors``  the authors' generator (``createRandomLoad2.py``, amendment 3): 3 x [190 s
                      at U{10..30}, a 10-s ramp 40 -> 150, 50 s at U{150..200}] + 100 s at
                      U{10..30}, a new integer value every second.  The draws come from
                      ``hash_u64(seed_load, TAG_AUTHORS, second)``, so the pattern is fixed like
                      the spec's, not redrawn per replication.

Send models (``send_model``); instants never depend on protocol state, so every variant of one
replication replays the same broadcasts (common random numbers, spec §5.4):

* ``poisson_rr``        one system-wide Poisson process of rate λ(t) (thinning at the pattern's
                        peak), the n-th instant sent by ``perm[n mod N]`` (spec default);
* ``poisson_indep``     every process an independent Poisson process of rate λ(t)/N (the same
                        aggregate with a uniformly random sender per instant);
* ``deterministic_rr``  the authors' central node: a gap of 1/(⌊λ_s⌋ + 1) after each send, λ_s the
                        load of the current second, senders 0, 1, 2, ... cyclically (amendment 4).

Figure 10's skewed senders (spec §6.4) are ``weighted_groups``.  ``Workload`` is what the kernel
replays: broadcasts and, for scenario tests, scripted operations and per-copy delays.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from causal_lab.engine import rng
from causal_lab.families.probabilistic_clocks.clocks import TAG_LOAD, hash_u64, u01

PATTERNS = ("constant", "bell", "random", "bell_authors", "random_authors")
SEND_MODELS = ("poisson_rr", "poisson_indep", "deterministic_rr")
TAG_AUTHORS = 0x41  # "A": the authors' random pattern's per-second draws

# A.7: bell windows (a, b, centre, width) in seconds, floor 10 and peak 200 msg/s
BELLS = ((0.0, 350.0, 175.0, 40.0), (350.0, 600.0, 475.0, 30.0), (600.0, 750.0, 675.0, 20.0),
         (750.0, 850.0, 800.0, 15.0))
BELL_LOW, BELL_HIGH = 10.0, 200.0
PATTERN_SECONDS = 850.0
# A.8: knots every 20 s; the three peak knots and the two value ranges
KNOT_PERIOD = 20.0
PEAK_KNOTS = (200.0, 460.0, 700.0)
KNOT_LOW, KNOT_PEAK = (10.0, 30.0), (150.0, 200.0)
# amendment 3: the authors' random pattern, one block per peak
AUTHORS_CALM, AUTHORS_PEAK, AUTHORS_TAIL = 190, 50, 100
AUTHORS_RAMP = (40, 50, 62, 75, 87, 100, 113, 125, 138, 150)


@dataclasses.dataclass(frozen=True)
class Pattern:
    """A load λ(t) in broadcasts per second on [0, duration).

    Continuous patterns evaluate ``_rate``; the authors' patterns are one value per second
    (``_table``), held constant over that second."""

    name: str
    duration: float
    peak: float
    _rate: object = dataclasses.field(repr=False, default=None)
    _table: np.ndarray | None = dataclasses.field(repr=False, default=None)

    def rate(self, t) -> np.ndarray:
        t = np.asarray(t, np.float64)
        if self._table is not None:
            second = np.clip(np.floor(t).astype(np.int64), 0, len(self._table) - 1)
            return self._table[second]
        return self._rate(t)

    def per_second(self) -> np.ndarray:
        """The load of every whole second [s, s + 1): the authors' table, or λ(s) (what the
        authors' central node reads once per second, ``deterministic_rr``)."""
        seconds = int(math.ceil(self.duration))
        if self._table is not None:
            return self._table[:seconds].copy()
        return self.rate(np.arange(seconds, dtype=np.float64))

    def mean(self, points_per_second: int = 100) -> float:
        """Time average of λ over [0, duration) (midpoint rule)."""
        n = int(round(self.duration * points_per_second))
        return float(self.rate((np.arange(n) + 0.5) / points_per_second).mean())


def _bell_rate(t: np.ndarray, low: float) -> np.ndarray:
    out = np.full(t.shape, low)
    for a, b, c, s in BELLS:
        inside = (t >= a) & (t < b)
        out[inside] = low + (BELL_HIGH - low) * np.exp(-((t[inside] - c) ** 2) / (2 * s * s))
    return out


def knot_values(seed_load: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The knots of the spec's random pattern (A.8): times 0, 20, ..., 860 and their loads."""
    n = int(math.ceil(PATTERN_SECONDS / KNOT_PERIOD)) + 1
    times = KNOT_PERIOD * np.arange(n)
    values = np.empty(n)
    for i, t in enumerate(times):
        lo, hi = KNOT_PEAK if t in PEAK_KNOTS else KNOT_LOW
        values[i] = lo + (hi - lo) * u01(seed_load, TAG_LOAD, i)
    return times, values


def _authors_random_table(seed_load: int) -> np.ndarray:
    """One integer load per second (amendment 3), drawn uniformly in the block's range."""
    def draw(second: int, lo: int, hi: int) -> int:
        return lo + int(hash_u64(seed_load, TAG_AUTHORS, second) % (hi - lo + 1))

    values: list[int] = []
    for _ in range(3):
        values += [draw(len(values) + j, 10, 30) for j in range(AUTHORS_CALM)]
        values += list(AUTHORS_RAMP)
        values += [draw(len(values) + j, 150, 200) for j in range(AUTHORS_PEAK)]
    values += [draw(len(values) + j, 10, 30) for j in range(AUTHORS_TAIL)]
    return np.asarray(values, np.float64)


def pattern(name: str, load: float = 100.0, duration: float = PATTERN_SECONDS,
            seed_load: int = 0) -> Pattern:
    """The load pattern ``name`` (``PATTERNS``); ``load`` and ``duration`` only set ``constant``
    (the other patterns last 850 s), ``seed_load`` the random patterns' draws."""
    if name == "constant":
        if not (load > 0 and duration > 0):
            raise ValueError(f"constant load needs load > 0 and duration > 0, got {load}, {duration}")
        return Pattern(name, float(duration), float(load),
                       _rate=lambda t: np.full(np.shape(t), float(load)))
    if name == "bell":
        return Pattern(name, PATTERN_SECONDS, BELL_HIGH, _rate=lambda t: _bell_rate(t, BELL_LOW))
    if name == "bell_authors":
        table = _bell_rate(np.arange(int(PATTERN_SECONDS), dtype=np.float64), 0.0)
        return Pattern(name, PATTERN_SECONDS, float(table.max()), _table=table)
    if name == "random":
        times, values = knot_values(seed_load)
        return Pattern(name, PATTERN_SECONDS, float(values.max()),
                       _rate=lambda t: np.interp(t, times, values))
    if name == "random_authors":
        table = _authors_random_table(seed_load)
        return Pattern(name, float(len(table)), float(table.max()), _table=table)
    raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}, got {name!r}")


def _poisson_instants(p: Pattern, g: np.random.Generator) -> np.ndarray:
    """A non-homogeneous Poisson process of rate λ(t) on [0, duration), by thinning at the peak."""
    expected = p.peak * p.duration
    n = int(expected + 10 * math.sqrt(expected) + 100)
    candidates = np.cumsum(g.exponential(1.0 / p.peak, n))
    while candidates[-1] < p.duration:  # far tail: extend
        candidates = np.r_[candidates, candidates[-1] + np.cumsum(g.exponential(1.0 / p.peak, n))]
    candidates = candidates[candidates < p.duration]
    keep = g.random(len(candidates)) * p.peak < p.rate(candidates)
    return candidates[keep]


def _deterministic_instants(p: Pattern) -> np.ndarray:
    """The authors' central node: after each send, wait 1/(⌊λ_s⌋ + 1), s = the current second."""
    loads = np.floor(p.per_second())
    out = []
    t = 1.0 / (loads[0] + 1.0)
    while t < p.duration:
        out.append(t)
        t += 1.0 / (loads[min(int(t), len(loads) - 1)] + 1.0)
    return np.asarray(out, np.float64)


def schedule(p: Pattern, n_nodes: int, send_model: str,
             seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Broadcast instants and senders of one replication (sorted by time)."""
    if send_model not in SEND_MODELS:
        raise ValueError(f"send_model must be one of {', '.join(SEND_MODELS)}, got {send_model!r}")
    if n_nodes < 1:
        raise ValueError(f"need at least one process, got {n_nodes}")
    if send_model == "deterministic_rr":
        times = _deterministic_instants(p)
        return times, np.arange(len(times), dtype=np.int64) % n_nodes
    times = _poisson_instants(p, rng.generator(seed, "send"))
    if send_model == "poisson_rr":
        perm = rng.generator(seed, "sender_perm").permutation(n_nodes)
        return times, perm[np.arange(len(times)) % n_nodes].astype(np.int64)
    return times, rng.generator(seed, "sender_perm").integers(0, n_nodes, len(times))


def weighted_groups(load: float, duration: float, n_nodes: int, groups: int, skew_at: float,
                    share_before: float, share_after: float,
                    seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Figure 10's senders (spec §6.4): a Poisson aggregate of rate ``load``; each instant picks
    group G0 = {i : i mod groups = 0} with probability ``share_before`` before ``skew_at`` and
    ``share_after`` from then on, else the other processes; round robin inside each group, in a
    fixed random order.  The rate belongs to the process, whatever component it moves to."""
    times = _poisson_instants(pattern("constant", load, duration), rng.generator(seed, "send"))
    g = rng.generator(seed, "sender_perm")
    ids = np.arange(n_nodes)
    g0, rest = g.permutation(ids[ids % groups == 0]), g.permutation(ids[ids % groups != 0])
    pick_g0 = g.random(len(times)) < np.where(times < skew_at, share_before, share_after)
    senders = np.empty(len(times), np.int64)
    senders[pick_g0] = g0[np.arange(pick_g0.sum()) % len(g0)]
    senders[~pick_g0] = rest[np.arange((~pick_g0).sum()) % len(rest)]
    return times, senders


# scripted operations of a workload (scenario tests, spec §1.7 and §2.12)
OP_BROADCAST, OP_EXPAND, OP_DEACTIVATION_ROUND, OP_REMOVE_ROUND = range(4)


@dataclasses.dataclass
class Workload:
    """What the kernel replays, sorted by time: ``ops[k]`` at ``times[k]`` by ``nodes[k]``.

    Figures only broadcast (``OP_BROADCAST``).  Scenario tests also force a spontaneous
    expansion (``OP_EXPAND``) or make p_0 start a round (``OP_*_ROUND``), and may fix the delay of
    every copy: ``delays[b, r]`` is the delay of the b-th broadcast's copy to process r (None:
    drawn from the network model)."""

    n_nodes: int
    times: np.ndarray
    nodes: np.ndarray
    ops: np.ndarray
    duration: float  # broadcasting stops here; the run then drains (spec §5.6)
    delays: np.ndarray | None = None

    @classmethod
    def broadcasts(cls, n_nodes: int, times, senders, duration: float) -> "Workload":
        times = np.asarray(times, np.float64)
        return cls(n_nodes, times, np.asarray(senders, np.int64),
                   np.full(len(times), OP_BROADCAST, np.int64), float(duration))

    @classmethod
    def from_pattern(cls, p: Pattern, n_nodes: int, send_model: str,
                     seed: np.random.SeedSequence) -> "Workload":
        times, senders = schedule(p, n_nodes, send_model, seed)
        return cls.broadcasts(n_nodes, times, senders, p.duration)

    @property
    def n_broadcasts(self) -> int:
        return int((self.ops == OP_BROADCAST).sum())
