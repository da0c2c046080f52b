"""Figure 1 of seed 004 (notebook ``61_ed_figure1``): the hash detector's dependency-request rate
against the number of messages broadcast per second, for clocks of 20, 25 and 50 entries.

The paper states the shape, not the values (the figure is an image): the rate falls when the
clock grows, because requests come from concurrent messages the clock fails to expose, which
enter the candidate dependency set; a larger load gives more of them.  The authors vary the load
through N at a 2-s period (N = 2λ, spec amendment 5), k = 2; the paper scale adds N = 200 with
a shorter period and the authors' formula for k as sensitivities.  Rates are the authors' mode;
our residual-guided variant is reported beside it.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from causal_lab import plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.error_detectors import experiments
from causal_lab.families.error_detectors.artifacts import common

NOTEBOOK = "61_ed_figure1"
SIZES = (20, 25, 50)
MAIN = experiments.FIGURE1_MAIN
SENSITIVITIES = experiments.FIGURE1_SENSITIVITIES
ORDER_FROM = 60.0  # spec §6.6(a): orderings judged at loads >= 60 msg/s
MIN_TREND_REQS = 10  # spec §6.6(b): Spearman over points with at least 10 requests


def setting(rows: pd.DataFrame, hash_mode: str = "authors", **which) -> pd.DataFrame:
    """The rows of one setting (default: the authors' Figure 1), with rates and intervals."""
    which = which or MAIN
    keep = rows.hash_mode == hash_mode
    for name, value in which.items():
        keep &= rows[name] == value
    return common.with_rates(rows[keep]).sort_values(["clock_size", "load"])


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Request rate (×10^-4) per load and clock size, both modes, with requests and errors."""
    parts = []
    for mode in ("authors", "residual"):
        s = setting(rows, mode)
        if len(s):
            parts.append(s.assign(mode=mode))
    s = pd.concat(parts)
    s = s.assign(**{"rate ×1e-4": 1e4 * s.rate, "95% CI ×1e-4": [f"{1e4 * lo:.2f}..{1e4 * hi:.2f}" for lo, hi in zip(s.rate_lo, s.rate_hi)]})
    return (s.rename(columns={"n_used": "N", "req": "REQ", "req_messages": "requested msgs", "req_needed": "REQ needed",
                              "req_after_end": "REQ after last slot", "req_nodes_after_end": "by processes"})
            .set_index(["mode", "clock_size", "load"])[["N", "k_used", "broadcasts", "REQ", "requested msgs", "REQ needed",
                                                       "REQ after last slot", "by processes", "rate ×1e-4", "95% CI ×1e-4",
                                                       "errors", "mean_hashes"]])


def backlog(rows: pd.DataFrame) -> str:
    """Which runs had requests after their last broadcast slot: processes left so far behind by
    serial recovery that they request their backlog one message per round trip (about 5 per
    second) until it is drained.  Their share of a point's requests is part of its rate."""
    late = rows[rows.req_after_end > 0]
    if late.empty:
        return f"No run requested anything after its last broadcast slot ({len(rows)} runs)."
    share = late.req_after_end / late.req
    worst = late.loc[share.idxmax()]
    return (f"{len(late)} of {len(rows)} runs requested messages after their last broadcast slot "
            f"({int(late.req_after_end.sum())} requests, from 1 to {int(late.req_nodes_after_end.max())} "
            f"processes per run); the largest share is {share.max():.0%} of the requests of "
            f"{worst.hash_mode} mode, M = {int(worst.clock_size)}, {worst.load:g} msg/s, "
            f"scaling {worst.scaling}, k {worst.k_mode}.")


def plot(rows: pd.DataFrame):
    """Rate vs load, one line per clock size; the authors' mode left, our variant right."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, mode in zip(axes, ("authors", "residual")):
        s = setting(rows, mode)
        for m, color in zip(SIZES, ("tab:red", "tab:orange", "tab:blue")):
            line = s[(s.clock_size == m) & (s.req > 0)]
            err = [line.rate - line.rate_lo, line.rate_hi - line.rate]
            ax.errorbar(line.load, line.rate, yerr=err, marker="o", capsize=3, color=color, label=f"M = {m}")
        ax.set(yscale="log", xlabel="messages broadcast per second (N = 2 × load)",
               title=f"{'authors mode (Figure 1)' if mode == 'authors' else 'residual search (ours)'}")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("request rate = #REQ / (#broadcasts × N)")
    fig.suptitle("Figure 1: dependency-request rate of the hash detector (95 % intervals for clustered requests)", fontsize=10)
    fig.tight_layout()
    return fig


def _ordering(s: pd.DataFrame, high: int, low: int) -> Measured:
    """rate(M = high-rate clock) above rate(M = low) with disjoint 95 % intervals at every load
    >= ORDER_FROM where either has requests (spec §6.6(a)).  Disjoint the other way at one load
    fails the claim; overlapping intervals leave that load undecided (too few requested messages
    at this scale), and a claim with an undecided load is not judged."""
    a = s[(s.clock_size == high) & (s.load >= ORDER_FROM)].set_index("load")
    b = s[(s.clock_size == low) & (s.load >= ORDER_FROM)].set_index("load")
    loads = [x for x in a.index.intersection(b.index) if common.judged(a.loc[x]) or common.judged(b.loc[x])]
    if not loads:
        return not_run(f"fewer than {common.MIN_MESSAGES} requested messages at every load >= {ORDER_FROM:g}")
    held = [x for x in loads if a.at[x, "rate_lo"] > b.at[x, "rate_hi"]]
    reversed_ = [x for x in loads if a.at[x, "rate_hi"] < b.at[x, "rate_lo"]]
    shown = f"{len(held)} of {len(loads)} loads >= {ORDER_FROM:g}" + (f", reversed at {reversed_}" if reversed_ else "")
    if not reversed_ and len(held) < len(loads):
        undecided = sorted(set(loads) - set(held))
        return not_run(f"{shown}; overlapping intervals at loads {undecided}")
    return Measured(not reversed_, shown)


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    s = setting(rows)
    out["004-F1-order-M20-M50"] = _ordering(s, 20, 50)
    out["004-F1-order-M25-M50"] = _ordering(s, 25, 50)
    a, b = (s[s.clock_size == m].set_index("load").rate for m in (20, 25))
    loads = a.index.intersection(b.index)
    share = float((a[loads] >= b[loads]).mean()) if len(loads) else np.nan
    out["004-F1-order-M20-M25"] = (Measured(share, f"{int(round(share * len(loads)))} of {len(loads)} loads")
                                   if len(loads) >= 3 else not_run(f"{len(loads)} loads"))
    for m in SIZES:
        pts = s[(s.clock_size == m) & (s.req >= MIN_TREND_REQS)]
        out[f"004-F1-trend-M{m}"] = (
            Measured(float(stats.spearmanr(pts.load, pts.rate).statistic), f"rho = {stats.spearmanr(pts.load, pts.rate).statistic:.2f} over {len(pts)} loads")
            if len(pts) >= 3 else not_run(f"{len(pts)} loads with >= {MIN_TREND_REQS} requests"))
    out["004-F1-errors"] = Measured(int(s.errors.sum()), f"{int(s.errors.sum())} in {len(s)} runs")
    out["004-F1-level"] = not_run("the figure's values are an image; the text gives none")
    r = setting(rows, "residual")
    if len(r):
        joined = s.set_index(["clock_size", "load"]).rate.align(r.set_index(["clock_size", "load"]).rate, join="inner")
        below = int((joined[1] <= joined[0]).sum())
        out["004-F1-residual-below-authors"] = Measured(below == len(joined[0]), f"{below} of {len(joined[0])} points")
        out["004-F1-residual-errors"] = Measured(int(r.errors.sum()), f"{int(r.errors.sum())} in {len(r)} runs")
        out["004-F1-residual-needed"] = Measured(float(r.req_needed.sum() / max(r.req.sum(), 1)),
                                                 f"{r.req_needed.sum() / max(r.req.sum(), 1):.1%} of {int(r.req.sum())}")
    for name, which in SENSITIVITIES.items():
        sens = setting(rows, "authors", **which)
        out[f"004-F1-order-{name}"] = (_ordering(sens, 20, 50) if len(sens)
                                       else not_run(f"a paper-scale sensitivity (not in the {scale} grid)"))
    bad = int(rows[["duplicates", "undelivered"]].to_numpy().sum())
    out["004-F1-integrity"] = Measured(bad == 0, f"{bad} duplicated or undelivered in {len(rows)} runs")
    return out
