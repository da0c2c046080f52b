"""The DCS size policies as tables the compiled kernel reads (probabilistic_clocks spec §2.8,
amendment 2).  Seed 002 §IV-C only says that a process expands "when observing for example a
high message load"; every constant below is therefore a named parameter.

* ``model`` (spec default): a process estimates the load λ̂ from its receptions (and own
  broadcasts) of the last ``load_window`` seconds and wants ``c_target(λ̂)`` components, the
  smallest c whose per-delivery error probability ``clocks.p_model(c·M_c, λ)`` is at most P*.
  ``c_target`` is a step function of λ, so the kernel gets its steps: ``thresholds[c - 1]`` =
  the largest load that c components can serve.
* ``formula_only``: the same with ``clocks.p_cond(c·M_c, λ·d̄, k) <= P*_cond`` (spec §2.8 option).
* ``authors_table``: the threshold table of the authors' DCSManagement.cc on the receptions of
  the last 0.5 s: expand while (count > n, size < s) for a row of ``AUTHORS_EXPAND``, reduce while
  (count < n, size > s) for a row of ``AUTHORS_REDUCE`` (size = active entries); the rows with
  sizes below one 50-entry component never fire and are left out.
* ``none``: no spontaneous change (Figure 10, scenario tests; check_expand still runs).

A probabilistic clock is the DCS kernel with one component of M entries and policy ``static``.
"""

from __future__ import annotations

import functools

import numpy as np

from causal_lab.families.probabilistic_clocks import clocks

STATIC, NONE, MODEL, FORMULA_ONLY, AUTHORS_TABLE = range(5)
POLICIES = {"static": STATIC, "none": NONE, "model": MODEL, "formula_only": FORMULA_ONLY,
            "authors_table": AUTHORS_TABLE}
DCS_POLICIES = ("model", "formula_only", "authors_table", "none")

# (receptions in the last 0.5 s, active entries): expand if count > n and size < s
AUTHORS_EXPAND = np.array([[33, 100], [45, 150], [53, 200], [65, 300], [75, 400], [80, 500]],
                          np.int64)
# reduce if count < n and size > s
AUTHORS_REDUCE = np.array([[22, 50], [33, 100], [40, 150], [45, 200], [65, 300], [75, 400],
                           [80, 500]], np.int64)
AUTHORS_WINDOW = 0.5  # seconds of receptions the authors count
AUTHORS_HOLD = 0.5  # seconds since the last expansion or reduction


def _largest_load(ok, hi: float = 1e6) -> float:
    """The largest λ in [0, hi] with ok(λ), for a predicate true at 0 and monotone (bisection);
    0 if even a tiny load fails, hi if every load passes."""
    if ok(hi):
        return hi
    if not ok(1e-9):
        return 0.0
    lo = 1e-9
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


@functools.lru_cache(maxsize=256)
def _thresholds(policy: str, n_nodes: int, k: int, m_c: int, c_max: int, p_star: float,
                independent_senders: bool) -> tuple[float, ...]:
    if policy == "model":
        def meets(c):
            return lambda lam: clocks.p_model(c * m_c, lam, n_nodes, k, independent_senders) <= p_star
    elif policy == "formula_only":
        def meets(c):
            return lambda lam: clocks.p_cond(c * m_c, lam * clocks.DELAY_MEAN, k) <= p_star
    else:
        return (np.inf,) * c_max
    return tuple(_largest_load(meets(c)) for c in range(1, c_max + 1))


def thresholds(policy: str, n_nodes: int, k: int, m_c: int, c_max: int, p_star: float,
               independent_senders: bool = False) -> np.ndarray:
    """``thresholds[c - 1]``: the largest load λ for which c components meet the target, so that
    c_target(λ) = the smallest c with λ <= thresholds[c - 1] (c_max if none).

    ``model``: p_model(c·M_c, λ, N, k) <= P* (spec A.9, ``clocks.c_target``); ``formula_only``:
    p_cond(c·M_c, λ·d̄, k) <= P* (here P* is P*_cond).  Other policies need no table (cached:
    each is about 6000 evaluations of the model)."""
    return np.array(_thresholds(policy, int(n_nodes), int(k), int(m_c), int(c_max), float(p_star),
                                bool(independent_senders)))


def c_target_of(table: np.ndarray, load: float) -> int:
    """c_target(λ) from a threshold table (what the kernel computes)."""
    c = int(np.searchsorted(table, load, side="left")) + 1
    return min(c, len(table))
