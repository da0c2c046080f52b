"""The packet-switched delay model shared by every protocol (seed 000 §5, thesis §4.5.1).

A packet sent by node ``i`` at time ``t`` costs ``t_pc + t_q + t_t + t_pp`` time units:

* ``t_pc``  processing before it joins the queue (fixed, not serialised);
* ``t_q``   waiting in node i's single FIFO sending queue, shared by all destinations
            (one copy per destination: there is no broadcast medium);
* ``t_t``   transmission: the queue's server is busy ``t_t`` per packet, whatever its size;
* ``t_pp``  propagation, drawn per packet (constant or truncated normal), so links are not
            FIFO when ``t_pp`` varies.

Because the queue is FIFO with a deterministic service time, a packet's departure is known the
moment it is enqueued: ``start = max(ready, server_free[i])``.  No departure events are needed;
only arrivals go into the event queue (vcube_ps spec §3.2 "departure rule").

The VCube-PS configuration (thesis ch. 5: ``t_send = 1``, ``t_pp = 100`` constant) is the same
model with ``t_pc = 0`` and ``t_t = t_send``.  Every family names these settings the same way:
``parameters(...)`` gives the experiment parameters ``t_pc``, ``t_t``, ``tpp``, ``tpp_mean`` and
``tpp_sigma`` with the family's defaults, and ``from_point`` builds the ``Network`` of a point.

The k-th propagation delay of sender i is the counter-based draw ``(key, i, k)`` of
``causal_lab.rng``: it does not depend on event order, so variants and the SimPy reference model
(``causal_lab.families.vcube_broadcast.reference_simpy``) see the same delays.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from causal_lab.engine import rng
from causal_lab.engine.jit import njit
from causal_lab.params import Param, non_negative

TPP_CONSTANT = 0
TPP_NORMAL = 1
TPP_DISTRIBUTIONS = {"constant": TPP_CONSTANT, "normal": TPP_NORMAL}
NEGATIVE_REDRAW = 0
NEGATIVE_CLIP = 1
NEGATIVE_RULES = {"redraw": NEGATIVE_REDRAW, "clip": NEGATIVE_CLIP}


class NetParams(NamedTuple):
    """The delay model as compiled kernels see it (numbers only)."""

    t_pc: float
    t_t: float
    tpp_dist: int
    tpp_mean: float
    tpp_sigma: float
    tpp_negative: int
    key: np.uint64  # the counter-based stream of propagation delays


class NetState(NamedTuple):
    """Per-node mutable state of the sending queues."""

    server_free: np.ndarray  # float64[N]: when node i's queue server is next idle
    sent: np.ndarray  # int64[N]: packets node i has sent so far (its delay counter)


@dataclasses.dataclass(frozen=True)
class Network:
    """A delay-model configuration; defaults are those of seed 000 §5 (spec §3.2)."""

    t_pc: float = 1.0
    t_t: float = 1.0
    tpp: str = "normal"
    tpp_mean: float = 100.0
    tpp_sigma: float = 25.0
    tpp_negative: str = "redraw"
    mtu: int = 1500
    header: int = 20

    def __post_init__(self):
        problems = []
        for name in ("t_pc", "t_t", "tpp_mean", "tpp_sigma"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                problems.append(f"{name} must be a finite number >= 0, got {value!r}")
        if self.tpp not in TPP_DISTRIBUTIONS:
            problems.append(f"tpp must be one of {', '.join(TPP_DISTRIBUTIONS)}, got {self.tpp!r}")
        if self.tpp_negative not in NEGATIVE_RULES:
            problems.append(
                f"tpp_negative must be one of {', '.join(NEGATIVE_RULES)}, got {self.tpp_negative!r}"
            )
        if self.header < 0 or self.mtu <= self.header:
            problems.append(f"need 0 <= header < mtu, got header={self.header}, mtu={self.mtu}")
        if problems:
            raise ValueError("; ".join(problems))

    def params(self, seed: np.random.SeedSequence) -> NetParams:
        return NetParams(
            float(self.t_pc),
            float(self.t_t),
            TPP_DISTRIBUTIONS[self.tpp],
            float(self.tpp_mean),
            float(self.tpp_sigma),
            NEGATIVE_RULES[self.tpp_negative],
            rng.stream_key(seed, "t_pp"),
        )


def parameters(t_pc: float = 1.0, t_t: float = 1.0, tpp: str = "normal", tpp_mean: float = 100.0,
               tpp_sigma: float = 25.0) -> tuple[Param, ...]:
    """The delay model as experiment parameters, with a family's defaults (seed 000's here)."""
    return (
        Param("t_pc", float, t_pc, "processing time before the sending queue (u.t.)", check=non_negative, allowed=">= 0"),
        Param("t_t", float, t_t, "transmission time per packet: the sending queue's service time (u.t.; thesis ch. 5's t_send)", check=non_negative, allowed=">= 0"),
        Param("tpp", str, tpp, "propagation delay distribution", choices=tuple(TPP_DISTRIBUTIONS)),
        Param("tpp_mean", float, tpp_mean, "mean propagation delay (u.t.; thesis ch. 5's t_pp)", check=non_negative, allowed=">= 0"),
        Param("tpp_sigma", float, tpp_sigma, "standard deviation of the propagation delay (u.t.)", check=non_negative, allowed=">= 0"),
    )


PARAMETER_NAMES = ("t_pc", "t_t", "tpp", "tpp_mean", "tpp_sigma")


def from_point(point, **fixed) -> Network:
    """The ``Network`` of an experiment point (``parameters``); ``fixed`` sets the other fields."""
    return Network(**{name: point[name] for name in PARAMETER_NAMES}, **fixed)


def new_state(n_nodes: int) -> NetState:
    return NetState(np.zeros(n_nodes, np.float64), np.zeros(n_nodes, np.int64))


@njit
def delay(p, key, a, b):
    """The model's propagation law (constant, or normal with negative draws redrawn or clipped),
    drawn from the counter-based stream ``key`` at counters ``(a, b)``."""
    if p.tpp_dist == TPP_CONSTANT:
        return p.tpp_mean
    attempt = 0
    while True:
        # redraws use counters far above any realistic packet count of one sender
        x = p.tpp_mean + p.tpp_sigma * rng.normal(key, a, b + attempt * (1 << 40))
        if x >= 0.0:
            return x
        if p.tpp_negative == NEGATIVE_CLIP:
            return 0.0
        attempt += 1


@njit
def propagation(p, sender, k):
    """The k-th propagation delay of ``sender``."""
    return delay(p, p.key, sender, k)


@njit
def depart(p, s, sender, now):
    """Put one packet into ``sender``'s FIFO queue at ``now``; return (departure time, queue
    wait).  Counts the packet, so the next ``propagation`` counter of ``sender`` is
    ``s.sent[sender]`` before the call."""
    ready = now + p.t_pc
    start = max(ready, s.server_free[sender])
    s.server_free[sender] = start + p.t_t
    s.sent[sender] += 1
    return start + p.t_t, start - ready


@njit
def send(p, s, sender, now):
    """Put one packet into ``sender``'s queue at ``now``; return (arrival time, queue wait)."""
    k = s.sent[sender]
    departure, wait = depart(p, s, sender, now)
    return departure + propagation(p, sender, k), wait


@njit
def send_on_link(p, s, sender, receiver, now, key):
    """``send`` over a link whose propagation delay is drawn once for the whole run (counters
    ``(sender, receiver)`` of the stream ``key``): every use of the link costs the same, so the
    link is FIFO and messages overtake each other only across different paths."""
    departure, wait = depart(p, s, sender, now)
    return departure + delay(p, key, sender, receiver), wait


@njit
def bypass(p, s, sender, now):
    """A message that does not occupy the sending queue (VCube-PS ``ack_cost = free``, spec
    §3.2 and ambiguity A4): it only pays the propagation delay; returns its arrival time."""
    k = s.sent[sender]
    s.sent[sender] = k + 1
    return now + propagation(p, sender, k)
