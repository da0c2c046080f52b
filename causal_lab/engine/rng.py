"""Reproducible randomness.

Every replication owns one ``numpy.random.SeedSequence`` (see ``causal_lab.sweep.task_seed``).
From it we derive *named* streams, so adding a stream never shifts the numbers of another:

* ``generator(seed, name)``: a ``numpy.random.Generator`` for bulk draws made in Python
  (broadcast schedules, permutations).
* ``stream_key(seed, name)``: a 64-bit key for *counter-based* draws inside compiled kernels.
  ``normal(key, a, k, ...)`` is a pure function of ``(key, a, k)``: the k-th propagation delay of
  sender ``a`` does not depend on the order in which the simulator happens to draw it.  That is
  what lets the fast engine and the SimPy reference model (or two protocol variants) see the
  very same delays, and what makes results independent of Spark partitioning.

The counter-based generator is the SplitMix64 finaliser applied to a Weyl sequence (Steele,
Lea and Flood, OOPSLA 2014), the usual way to turn a counter into well-mixed 64-bit words.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from causal_lab.engine.jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_STREAM = np.uint64(0xD1B54A32D192ED03)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO53 = 1.0 / 9007199254740992.0


def _name_word(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def child(seed: np.random.SeedSequence, name: str) -> np.random.SeedSequence:
    """The SeedSequence of the stream called ``name`` below ``seed``."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, _name_word(name)))


def generator(seed: np.random.SeedSequence, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(child(seed, name)))


def stream_key(seed: np.random.SeedSequence, name: str) -> np.uint64:
    return child(seed, name).generate_state(1, np.uint64)[0]


@njit
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit
def uniform(key, a, k):
    """Uniform draw in (0, 1) for counter ``k`` of sub-stream ``a`` (both non-negative ints)."""
    z = _mix(np.uint64(key) + np.uint64(a) * _STREAM) + np.uint64(k) * _GOLDEN
    return ((_mix(z) >> _S11) + 0.5) * _TWO53


@njit
def normal(key, a, k):
    """Standard normal draw (Box-Muller on two counter-based uniforms)."""
    u1 = uniform(key, a, 2 * k)
    u2 = uniform(key, a, 2 * k + 1)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
