"""Workloads: who broadcasts when (seed 000 §5, spec §3.4 and ambiguity W1/W2), and on which topic
(thesis §5.6.5, spec vcube_ps.md §5.1 and §5.7: uniform or Zipf topic choice).

Workloads are exogenous (they never depend on protocol state), so every variant of a scenario gets
the same draws from the replication's named streams (``schedule``, ``topics``).
"""

from __future__ import annotations

import numpy as np

from causal_lab.engine import rng

SOURCE_MODES = ("permutation", "with_replacement")


def one_shot(n_nodes: int, window: float, sources: str, seed: np.random.SeedSequence):
    """N broadcasts in ``[0, window]``; returns (times, sources) sorted by time.

    ``permutation``: every node broadcasts exactly once, at N i.i.d. Uniform(0, W) instants
    assigned in random order (Poisson epochs conditioned on N arrivals in [0, W]).
    ``with_replacement``: N epochs of a Poisson process of rate N/W, each from a node drawn
    uniformly, so some nodes broadcast several times (a sensitivity switch of the spec).
    """
    if sources not in SOURCE_MODES:
        raise ValueError(f"sources must be one of {SOURCE_MODES}, got {sources!r}")
    g = rng.generator(seed, "schedule")
    if sources == "permutation":
        times = np.sort(g.uniform(0.0, window, n_nodes))
        who = g.permutation(n_nodes)
    else:
        times = np.cumsum(g.exponential(window / n_nodes, n_nodes))
        who = g.integers(0, n_nodes, n_nodes)
    return times.astype(np.float64), who.astype(np.int64)


def zipf_weights(n_topics: int, s: float) -> np.ndarray:
    """Probabilities of the ranks 1..n_topics under the Zipf law p(r) = r^-s / H_{n,s}.

    Thesis §5.6.5 picks the topic of each publication with a Zipf-like law of coefficient 0.825
    fitted to Twitter hashtags (Figure 5.1), or uniformly; ``s = 0`` *is* the uniform law, so both
    workloads of Figure 5.10 come from this one function.  Entry ``r - 1`` is the weight of rank r.
    """
    if n_topics < 1 or s < 0:
        raise ValueError(f"need n_topics >= 1 and s >= 0, got {n_topics}, {s}")
    weights = np.arange(1, n_topics + 1, dtype=np.float64) ** -float(s)
    return weights / weights.sum()


def zipf_topics(n_topics: int, s: float, size: int, seed: np.random.SeedSequence) -> np.ndarray:
    """``size`` topic ids in ``[0, n_topics)`` drawn i.i.d. from the Zipf law of exponent ``s``.

    Which topic is "hot" is itself random (spec §5.7): the map rank -> topic is a uniform
    permutation, the first draw of the replication's ``topics`` stream
    (``rng.generator(seed, "topics").permutation(n_topics)[r - 1]`` is the topic of rank r), so it
    is fixed for the whole call.  Each draw then inverts the rank CDF at one uniform variate.
    Because the permutation and the uniforms do not depend on ``s``, the uniform (``s = 0``) and
    Zipf workloads of one seed are coupled (common random numbers): an experiment that lists the
    exponent among its ``variant_params`` compares the two laws on the same variates.
    """
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    cdf = np.cumsum(zipf_weights(n_topics, s))
    g = rng.generator(seed, "topics")
    rank_to_topic = g.permutation(n_topics)
    ranks = np.minimum(np.searchsorted(cdf, g.random(size), side="right"), n_topics - 1)
    return rank_to_topic[ranks].astype(np.int64)
