"""Broadcast schedules: who broadcasts when (seed 000 §5, spec §3.4 and ambiguity W1/W2).

Broadcast instants are exogenous (they never depend on protocol state), so every variant of a
scenario gets the same schedule from the replication's ``schedule`` stream.
"""

from __future__ import annotations

import numpy as np

from causal_lab import rng

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
