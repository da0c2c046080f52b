"""Mostéfaoui-Weiss probabilistic clocks: the entry map f, the hashing it rests on, and the
closed-form error model (probabilistic_clocks spec §1, Appendix A; seed 002 §II, seed 004 §2).

A process p owns k of the M entries of a clock, ``f(p)``; broadcasting adds 1 to them, and a
receiver delivering p's message adds 1 to the same entries (counting semantics, spec §1.3), so a
clock is the sum of the increments of everything its process delivered.  A message m from p_j is
deliverable at p_i when ``V_i[x] >= m.V[x] - inc_j[x]`` for every entry x (spec §1.5).

Everything here is exact integer arithmetic on 64-bit words (Python ints masked to 64 bits) and
is pinned by the spec's test vectors (tests/test_probabilistic_clocks.py); kernels use the
compiled twins ``splitmix64_nb`` / ``hash_u64_nb``.  The error model (``p_cond``, ``m_required``,
``k_optimal``, ``p_model``, ``c_target``) serves sanity bands, Figure 5 of seed 002 and the DCS
sizing policy; the errors of a run are always counted by the oracle, never by this model.
"""

from __future__ import annotations

import math

import numpy as np

from causal_lab.engine.jit import njit

MASK = (1 << 64) - 1
GOLDEN, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
TAG_SHUFFLE, TAG_PERM, TAG_LOAD, SALT_H = 0x46, 0x50, 0x4C, 0x48415348  # spec A.4

# delays of the papers (spec §5.1): Normal(100 ms, 20 ms) per copy
DELAY_MEAN, DELAY_SD = 0.100, 0.020


def splitmix64(x: int) -> int:
    """The SplitMix64 finaliser of spec A.1 on one 64-bit word."""
    z = (x + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def hash_u64(*words: int) -> int:
    """Order-sensitive hash of 64-bit words (spec A.2): h = splitmix64(h xor w), from h = 0."""
    h = 0
    for w in words:
        h = splitmix64(h ^ (w & MASK))
    return h


def u01(*words: int) -> float:
    """A uniform double in [0, 1) from the hash of ``words`` (spec A.3)."""
    return (hash_u64(*words) >> 11) / float(1 << 53)


_G, _M1, _M2 = np.uint64(GOLDEN), np.uint64(MIX1), np.uint64(MIX2)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit
def splitmix64_nb(x):
    """``splitmix64`` for compiled kernels (uint64 arithmetic wraps modulo 2^64)."""
    z = np.uint64(x) + _G
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit
def hash_u64_nb(a, b, c):
    """``hash_u64(a, b, c)`` for compiled kernels (three words, e.g. the causal-past hash G)."""
    h = splitmix64_nb(np.uint64(a))
    h = splitmix64_nb(h ^ np.uint64(b))
    return splitmix64_nb(h ^ np.uint64(c))


def causal_past_term(sender: int, count: int) -> int:
    """G(a, c) of spec A.6: the hash of "the first c messages of sender a" (0 for c = 0); the
    causal-past hash H is the sum of these terms over senders, modulo 2^64."""
    return 0 if count == 0 else hash_u64(SALT_H, sender, count)


def _shuffle(values: list[int], seed: int, tag: int) -> None:
    """Fisher-Yates from the top with j = hash_u64(seed, tag, i) mod (i + 1) (spec A.5)."""
    for i in range(len(values) - 1, 0, -1):
        j = hash_u64(seed, tag, i) % (i + 1)
        values[i], values[j] = values[j], values[i]


def entry_map(n: int, m: int, k: int, seed: int = 0) -> list[tuple[int, ...]]:
    """f(p) for p = 0..n-1: k distinct entries of 0..m-1 each, every entry used floor or ceil
    of n·k/m times (the balanced construction of spec §1.2 / A.5)."""
    if not 1 <= k <= m:
        raise ValueError(f"need 1 <= k <= M, got k={k}, M={m}")
    if n < 1:
        raise ValueError(f"need at least one process, got {n}")
    perm = list(range(m))
    _shuffle(perm, seed, TAG_PERM)
    total = n * k
    deck = [perm[i % m] for i in range(total)]
    _shuffle(deck, seed, TAG_SHUFFLE)
    for p in range(n):
        lo, hi = p * k, p * k + k
        for pos in range(lo, hi):
            if deck[pos] not in deck[lo:pos]:
                continue
            hand = set(deck[lo:hi])
            for q in [*range(hi, total), *range(0, lo)]:
                other = q // k
                if deck[q] in hand or (other < p and deck[pos] in deck[other * k:other * k + k]):
                    continue
                deck[pos], deck[q] = deck[q], deck[pos]
                break
            else:
                raise ValueError(f"entry_map({n}, {m}, {k}, {seed}): no swap repairs process {p}")
    return [tuple(sorted(deck[p * k:p * k + k])) for p in range(n)]


def hashed_map(n: int, m: int, k: int, seed: int = 0) -> list[tuple[int, ...]]:
    """``f_mode = "hash"`` (a sensitivity): the first k distinct values of
    hash_u64(seed, p, i) mod M, i = 0, 1, ... (unbalanced, an idealised random hash)."""
    if not 1 <= k <= m:
        raise ValueError(f"need 1 <= k <= M, got k={k}, M={m}")
    out = []
    for p in range(n):
        hand: list[int] = []
        i = 0
        while len(hand) < k:
            x = hash_u64(seed, p, i) % m
            if x not in hand:
                hand.append(x)
            i += 1
        out.append(tuple(sorted(hand)))
    return out


def increments(f: list[tuple[int, ...]], m: int) -> np.ndarray:
    """The indicator matrix inc[p, x] = 1 if x in f(p) (int32, one row per process)."""
    inc = np.zeros((len(f), m), np.int32)
    for p, entries in enumerate(f):
        inc[p, list(entries)] = 1
    return inc


# ------------------------------------------------------------------------------------------
# The error model (spec §1.6, A.9)
# ------------------------------------------------------------------------------------------


def p_cond(m: float, x: float, k: int) -> float:
    """P(a missing predecessor's deficit is hidden by x concurrent deliveries) = (1 - (1 -
    1/M)^(X·k))^k (seed 002 §II): a conditional probability, not a per-delivery error rate."""
    return (1.0 - (1.0 - 1.0 / m) ** (x * k)) ** k


def m_required(p: float, x: float, k: int) -> float:
    """The clock size M at which ``p_cond(M, x, k) = p`` (the inverse used by Figure 5)."""
    if not 0 < p < 1:
        raise ValueError(f"error probability must be in (0, 1), got {p}")
    return 1.0 / (1.0 - (1.0 - p ** (1.0 / k)) ** (1.0 / (x * k)))


def k_optimal(m: float, x: float) -> float:
    """k* = ln 2 · M / X, where ``p_cond`` is smallest (about 2^-k*)."""
    return math.log(2.0) * m / x


def e_plus(mean: float, sd: float) -> float:
    """E[max(Z, 0)] for Z ~ Normal(mean, sd) (spec A.9)."""
    z = mean / sd
    phi = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return sd * phi + mean * 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


E1 = e_plus(-DELAY_MEAN, DELAY_SD * math.sqrt(3.0))  # a predecessor delivered by the sender, then overtaken
E2 = e_plus(0.0, DELAY_SD * math.sqrt(2.0))  # the sender's own previous message overtaken


def overtake(load: float, n: int, independent_senders: bool = False) -> float:
    """Probability per delivery that the message overtook one of its predecessors (spec §1.6.1)."""
    return load * E1 + ((load / n) * E2 if independent_senders else 0.0)


def p_model(m: float, load: float, n: int, k: int = 2, independent_senders: bool = False) -> float:
    """Per-delivery out-of-order probability: overtake x ``p_cond(M, λ·d̄, k)`` (spec A.9)."""
    return overtake(load, n, independent_senders) * p_cond(m, load * DELAY_MEAN, k)


def c_target(load: float, n: int, k: int = 2, m_c: int = 50, p_star: float = 1e-5,
             c_max: int = 32) -> int:
    """The DCS sizing policy's target number of components (spec A.9): the smallest c with
    ``p_model(c·M_c, λ, N, k) <= P*``, 1 at no load, ``c_max`` if none is enough."""
    if load <= 0:
        return 1
    for c in range(1, c_max + 1):
        if p_model(c * m_c, load, n, k) <= p_star:
            return c
    return c_max


# ------------------------------------------------------------------------------------------
# Reference semantics of the clocks (spec §1.3-1.4, §2.2-2.3), for unit tests and notebooks;
# the kernel works on arrays with the counting rules of Algorithms 1 and 2.
# ------------------------------------------------------------------------------------------


def pc_leq(v1, v2) -> bool:
    """V1 <= V2: every entry."""
    return all(a <= b for a, b in zip(v1, v2, strict=True))


def pc_less(v1, v2) -> bool:
    """V1 < V2: V1 <= V2 and some entry strictly smaller."""
    return pc_leq(v1, v2) and any(a < b for a, b in zip(v1, v2))


def pc_r1(v: list[int], own: tuple[int, ...], d: int = 1) -> list[int]:
    """R1: before an event, p adds d to its entries f(p)."""
    return [x + d if e in own else x for e, x in enumerate(v)]


def pc_r2(v: list[int], carried: list[int], own: tuple[int, ...]) -> list[int]:
    """The generic receive rule R2 of seed 002 §II: entrywise maximum, then R1 (not the
    broadcast algorithm, which adds the sender's entries instead: spec §1.3)."""
    return pc_r1([max(a, b) for a, b in zip(v, carried, strict=True)], own)


def dcs_leq(d1, d2) -> bool:
    """D1 <= D2 (seed 002 §III-C): |D1| <= |D2| and every component of D1 <= D2's."""
    return len(d1) <= len(d2) and all(pc_leq(c1, c2) for c1, c2 in zip(d1, d2))


def dcs_less(d1, d2) -> bool:
    """D1 < D2: D1 <= D2 and some component of D1 strictly smaller."""
    return dcs_leq(d1, d2) and any(pc_less(c1, c2) for c1, c2 in zip(d1, d2))


def dcs_concurrent(d1, d2) -> bool:
    """D1 || D2: neither D1 <= D2 nor D2 <= D1."""
    return not dcs_leq(d1, d2) and not dcs_leq(d2, d1)


def dcs_r2(d: list[list[int]], carried: list[list[int]], own: tuple[int, ...],
           s_incr: set[int]) -> list[list[int]]:
    """The generic DCS receive rule R2 (seed 002 §III-B): Add() zero components up to |D_m|,
    componentwise maximum, then R1 on the components of S_incr."""
    m = len((d or carried)[0])
    d = [list(c) for c in d] + [[0] * m for _ in range(len(carried) - len(d))]
    merged = [[max(a, b) for a, b in zip(c, cm)] for c, cm in zip(d, carried)] + d[len(carried):]
    return [pc_r1(c, own) if k in s_incr else c for k, c in enumerate(merged)]
