"""Figure 9 of seed 000 (= thesis Figure 4.6): maximum number of buffered (pending) messages per
node, N = 1024, AGG vs NO_AGG (notebook ``16_icpp18_figure9``).

Every claim is about the paper's 1024-node run: at any other N (the smoke scale's 64) the
figure is drawn but every claim is NOT_RUN.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_broadcast.experiments import MAX_PENDING

NOTEBOOK = "16_icpp18_figure9"
PAPER_N = 1024
BINS = [f"pend_{b}" for b in MAX_PENDING]
LABELS = {f"pend_{b}": f"{'(' if lo else '['}{lo if lo == 0 else lo - 1}, {hi}]" if hi < 10**9 else f"> {lo - 1}"
          for b, (lo, hi) in MAX_PENDING.items()}
METRICS = BINS + ["median_max_pending", "max_pending"]
NAMES = {False: "NO_AGG", True: "AGG"}


def summarize(rows: pd.DataFrame, n: int) -> dict[str, pd.DataFrame]:
    """Per variant: mean and 95 % CI over the replications of the per-bin node counts and the
    median per-node maximum, replication 0 (the representative run) and the largest per-node
    maximum over all runs.  Every node falls in exactly one bin (asserted)."""
    assert (rows[BINS].sum(axis=1) == n).all(), "every node falls in exactly one bin"
    grouped = rows.groupby("aggregation")[METRICS]
    return {"mean": grouped.mean(), "ci": grouped.agg(sweep.ci95),
            "rep0": rows[rows.rep == 0].set_index("aggregation")[METRICS],
            "top": rows.groupby("aggregation").max_pending.max()}


def _paper() -> pd.Series:
    return claims.table("000_figure9_pending").set_index(["quantity", "variant"]).value


def table(stats: dict, n: int) -> pd.DataFrame:
    """Nodes per bin of their maximum PENDING size: the paper's quotes, our mean, CI, share of N
    and run 0, per variant."""
    paper = _paper()
    quotes = {("pend_le50", True): f"{paper['nodes_le50', 'AGG']} (> {paper['share_le50_pct', 'AGG']:.0f} %)",
              ("pend_le50", False): f"< {paper['share_le50_pct', 'NO_AGG']:.0f} % of N",
              ("pend_gt250", True): f"{paper['nodes_gt250', 'AGG']}",
              ("pend_gt250", False): f"{paper['nodes_gt250', 'NO_AGG']}"}
    mean, ci, rep0 = stats["mean"], stats["ci"], stats["rep0"]
    return pd.DataFrame({
        f"{col} {NAMES[v]}": values
        for v in (True, False)
        for col, values in (
            (f"paper (N={PAPER_N})", pd.Series({b: quotes.get((b, v), "") for b in BINS})),
            ("ours mean", mean.loc[v, BINS].round(1)),
            ("±CI", ci.loc[v, BINS].round(1)),
            ("ours % of N", (100 * mean.loc[v, BINS] / n).round(1)),
            ("run 0", rep0.loc[v, BINS]),
        )
    }).rename(index=LABELS).rename_axis("max pending (messages)")


def medians(stats: dict) -> pd.DataFrame:
    """Per variant: the median of the per-node maxima (mean over runs, CI) and the largest one."""
    return pd.DataFrame({
        "median of per-node maxima (mean over runs)": stats["mean"]["median_max_pending"].round(1),
        "±CI": stats["ci"]["median_max_pending"].round(1),
        "largest per-node maximum (over runs)": stats["top"],
    }).rename(index=NAMES).rename_axis("variant")


def plot(stats: dict, n: int):
    """Bars of nodes per bin (mean, CI, run 0, the paper's quoted counts at N = 1024) and the
    median per-node maximum per variant."""
    paper = _paper()
    mean, ci, rep0 = stats["mean"], stats["ci"], stats["rep0"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), gridspec_kw={"width_ratios": [3, 1]})
    ax = axes[0]
    x = np.arange(len(BINS))
    colors = {False: "tab:orange", True: plotting.PALETTE["ours"]}
    for k, v in enumerate((True, False)):
        pos = x + (k - 0.5) * 0.38
        ax.bar(pos, mean.loc[v, BINS], width=0.38, yerr=ci.loc[v, BINS].fillna(0), capsize=3, color=colors[v],
               alpha=0.85, label=f"ours {NAMES[v]} (mean over runs)")
        ax.plot(pos, rep0.loc[v, BINS], "o", ms=4, color="k", label="run 0" if k == 0 else None)
    if n == PAPER_N:  # the quoted numbers are counts of the paper's 1024-node run
        ax.plot([-0.19], [paper["nodes_le50", "AGG"]], "x", ms=12, mew=2, color=plotting.PALETTE["paper"],
                label="paper (quoted counts)")
        ax.plot([len(BINS) - 1 - 0.19, len(BINS) - 1 + 0.19],
                [paper["nodes_gt250", "AGG"], paper["nodes_gt250", "NO_AGG"]], "x", ms=12, mew=2,
                color=plotting.PALETTE["paper"])
        ax.hlines(n * paper["share_le50_pct", "NO_AGG"] / 100, 0.0, 0.4, colors=plotting.PALETTE["paper"],
                  linestyles="--", label="paper bound: NO_AGG <= 50 is < 25 % of N")
    ax.set_xticks(x, [LABELS[b] for b in BINS])
    ax.set(xlabel="maximum number of buffered (pending) messages of a node", ylabel="nodes",
           title=f"Max buffered messages per node, N = {n} (Figure 9)")
    ax.legend(fontsize=8)
    ax = axes[1]
    for k, v in enumerate((True, False)):
        ax.bar(k, mean.loc[v, "median_max_pending"], yerr=np.nan_to_num(ci.loc[v, "median_max_pending"]), capsize=4,
               color=colors[v])
        ax.plot(k, stats["top"][v], "v", color="k", ms=7, label="largest per-node max" if k == 0 else None)
    ax.set_xticks([0, 1], ["AGG", "NO_AGG"])
    ax.set(ylabel="messages", title="Median of per-node maxima")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def measure(stats: dict, n: int, scale: str) -> dict[str, Measured]:
    """Every claim (all at N = 1024) from ``summarize``'s means over the replications."""
    ids = ("agg-le50", "noagg-le50", "le50-order", "gt250-order", "gt250-AGG", "gt250-NO_AGG", "median-order")
    if n != PAPER_N:
        return {f"000-F9-{i}": not_run(f"N = {PAPER_N} not run at the {scale} scale (N = {n} shown)") for i in ids}
    mean, top = stats["mean"], stats["top"]
    le50 = {v: float(mean.loc[v, "pend_le50"]) for v in (True, False)}
    gt250 = {v: float(mean.loc[v, "pend_gt250"]) for v in (True, False)}
    med = {v: float(mean.loc[v, "median_max_pending"]) for v in (True, False)}
    return {
        "000-F9-agg-le50": Measured(le50[True], f"{le50[True]:.1f} ({100 * le50[True] / n:.1f} %)"),
        "000-F9-noagg-le50": Measured(le50[False], f"{le50[False]:.1f} ({100 * le50[False] / n:.1f} %)"),
        "000-F9-le50-order": Measured(le50[False] < le50[True], f"{le50[False]:.1f} vs {le50[True]:.1f}"),
        "000-F9-gt250-order": Measured(gt250[True] <= gt250[False], f"{gt250[True]:.1f} <= {gt250[False]:.1f}"),
        "000-F9-gt250-AGG": Measured(gt250[True], f"{gt250[True]:.1f} (largest per-node max {top[True]})"),
        "000-F9-gt250-NO_AGG": Measured(gt250[False], f"{gt250[False]:.1f} (largest per-node max {top[False]})"),
        "000-F9-median-order": Measured(med[True] < med[False], f"AGG {med[True]:.1f} < NO_AGG {med[False]:.1f}"),
    }
