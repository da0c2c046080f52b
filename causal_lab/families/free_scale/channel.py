"""The channel delay law of the free-scale simulations (paper §3.2, spec §6.3), with the shared
network parameter names.

"All of the delays are distributed normally with the mean being the middle of the interval ...
If a random value is generated outside of the interval, the value of the nearest interval end is
taken instead."  One hop of one copy costs::

    t_pc + (wait in the sender's FIFO sending queue) + t_t + clamp(t_pp, delay_min, delay_max)

``t_pc``, ``t_t``, ``tpp``, ``tpp_mean`` and ``tpp_sigma`` are the engine's network parameters
(``causal_lab.engine.network``: processing time, per-copy transmission time of a FIFO sending
queue, propagation law, its mean and standard deviation); the paper's model is ``t_pc = t_t = 0``
and a Normal propagation with mean the interval's midpoint and sigma = width / 4 (spec A1).  The
engine's propagation redraws or clips negative draws; this law *clamps to an interval*, which
the engine lacks, hence this module.

Every draw is counter-based (``causal_lab.engine.rng``): with ``link_delay = per_message`` (the
spec's reading: every copy of a broadcast gets its own draw) the delay of application message
``a`` on its hop to node ``d`` is the draw ``(a, d)``, so the free-scale run and the IDR run of
one replication see the same delay on every hop they share.  ``link_delay = per_link`` is the
OMNeT++ sensitivity of amendment 6: a channel's delay is drawn once, ``(sender, d)``, and then
channels are FIFO.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from causal_lab.engine import network, rng
from causal_lab.engine.jit import njit
from causal_lab.params import Param, non_negative

PER_MESSAGE = 0
PER_LINK = 1
LINK_DELAYS = {"per_message": PER_MESSAGE, "per_link": PER_LINK}


class Channel(NamedTuple):
    """The delay law as compiled kernels see it (numbers only)."""

    t_pc: float
    t_t: float
    normal: bool  # tpp = "normal"; else the constant tpp_mean
    tpp_mean: float
    tpp_sigma: float
    delay_min: float
    delay_max: float
    per_link: bool
    key: np.uint64


def parameters(delay_min: float, delay_max: float) -> tuple[Param, ...]:
    """The channel as experiment parameters: the engine's five names (their defaults the
    paper's interval: mean at its midpoint, sigma = width / 4), the interval and the link law."""
    mid, sigma = (delay_min + delay_max) / 2, (delay_max - delay_min) / 4
    return (
        *network.parameters(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=mid, tpp_sigma=sigma),
        Param("delay_min", float, delay_min, "lower end of the channel delay interval (ms); "
              "draws below are clamped to it", check=non_negative, allowed=">= 0, <= delay_max"),
        Param("delay_max", float, delay_max, "upper end of the channel delay interval (ms); "
              "draws above are clamped to it", check=non_negative, allowed=">= delay_min"),
        Param("link_delay", str, "per_message", "per_message: every copy draws its delay; "
              "per_link: one draw per channel, FIFO channels (amendment 6)",
              choices=tuple(LINK_DELAYS)),
    )


def from_point(point, seed: np.random.SeedSequence) -> Channel:
    """The channel of an experiment point (times in ms)."""
    return Channel(float(point["t_pc"]), float(point["t_t"]), point["tpp"] == "normal",
                   float(point["tpp_mean"]), float(point["tpp_sigma"]),
                   float(point["delay_min"]), float(point["delay_max"]),
                   LINK_DELAYS[point["link_delay"]] == PER_LINK, rng.stream_key(seed, "delay"))


def from_network(net: network.Network, seed: np.random.SeedSequence) -> Channel:
    """The engine's delay model as a channel (the cross-family benchmark's common model): the
    same t_pc, t_t and propagation law, the interval [0, inf) so that only negative draws are
    clamped (the engine's ``tpp_negative = "clip"``), one draw per copy.  The law is the same;
    the draws are this module's, keyed by (message, destination)."""
    if net.tpp_negative != "clip":
        raise ValueError("a channel clamps negative draws: the network must clip them too")
    return Channel(float(net.t_pc), float(net.t_t), net.tpp == "normal", float(net.tpp_mean),
                   float(net.tpp_sigma), 0.0, float("inf"), False, rng.stream_key(seed, "delay"))


def problems(point) -> list[str]:
    """What makes a channel impossible (checked before any work)."""
    if point["delay_min"] > point["delay_max"]:
        return [f"delay_min ({point['delay_min']:g} ms) must be <= delay_max "
                f"({point['delay_max']:g} ms)"]
    return []


@njit
def propagation(c, app, sender, dest):
    """The clamped propagation delay of message ``app`` on the hop sender -> dest."""
    if not c.normal:
        x = c.tpp_mean
    elif c.per_link:
        x = c.tpp_mean + c.tpp_sigma * rng.normal(c.key, sender, dest)
    else:
        x = c.tpp_mean + c.tpp_sigma * rng.normal(c.key, app, dest)
    return min(max(x, c.delay_min), c.delay_max)


@njit
def departure(c, server_free, sender, now):
    """When the next copy put into ``sender``'s FIFO sending queue at ``now`` leaves it."""
    start = max(now + c.t_pc, server_free[sender])
    server_free[sender] = start + c.t_t
    return start + c.t_t
