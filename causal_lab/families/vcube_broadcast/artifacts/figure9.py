"""Figure 9 of seed 000 (= thesis Figure 4.6): maximum number of buffered (pending) messages per
node, N = 1024, AGG vs NO_AGG (notebook ``16_icpp18_figure9``).

Every claim is about the paper's 1024-node run: at any other N (the smoke scale's 64) the
figure is drawn but every claim is NOT_RUN.

Beside the buffer counts: the holding time that the paper's own Figure 7 percentages imply
(``implied_holding``), since a node's buffer is the messages it holds, and the option
``tpp_per = "link"`` (one propagation delay per link, seed 000 §5.5) as a sensitivity reading.
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


SPREAD = ["std_max_pending", "p10_max_pending", "p90_max_pending"]
HOLDING = ["mean_holding_time", "mean_reception_latency"]
SENSITIVITY = "link"  # the tpp_per value of the sensitivity reading


def overrides(n: int) -> dict:
    """Notebook 10's N = 1024 points (cached), with and without the per-link propagation delays."""
    return {"n_nodes": [n], "aggregation": [False, True], "tpp_per": ["packet", SENSITIVITY]}


def summarize(rows: pd.DataFrame, n: int) -> dict[str, pd.DataFrame]:
    """Per variant: mean and 95 % CI over the replications of the per-bin node counts and the
    median per-node maximum, replication 0 (the representative run) and the largest per-node
    maximum over all runs; the same means for the ``tpp_per = "link"`` runs (``link``).  Every
    node falls in exactly one bin (asserted)."""
    assert (rows[BINS].sum(axis=1) == n).all(), "every node falls in exactly one bin"
    link = rows[rows.tpp_per == SENSITIVITY]
    rows = rows[rows.tpp_per == "packet"]
    grouped = rows.groupby("aggregation")[METRICS + SPREAD + HOLDING]
    return {"mean": grouped.mean(), "ci": grouped.agg(sweep.ci95),
            "rep0": rows[rows.rep == 0].set_index("aggregation")[METRICS],
            "top": rows.groupby("aggregation").max_pending.max(),
            "link": link.groupby("aggregation")[METRICS + HOLDING].mean(),
            "link_top": link.groupby("aggregation").max_pending.max()}


def implied_holding() -> dict[str, float]:
    """Holding time / reception latency at N = 1024 that the paper's own Figure 7 percentages
    imply (data/expected/000_figure7_latency.csv): with a = R_AGG / R_NO, b = D_AGG / D_NO and
    k = H_NO / H_AGG (reception -7.4 %, delivery -12.2 %, NO_AGG holds 53.4 % longer), D = R + H
    gives H_NO / R_NO = (a - b) / (b - 1 / k) and H_AGG / R_AGG = (H_NO / R_NO) / (k a)."""
    paper = claims.table("000_figure7_latency").set_index(["quantity", "n_nodes"]).value
    a = 1 + paper["reception_agg_vs_noagg_pct", PAPER_N] / 100
    b = 1 + paper["delivery_agg_vs_noagg_pct", PAPER_N] / 100
    k = 1 + paper["holding_noagg_vs_agg_pct", PAPER_N] / 100
    no_agg = (a - b) / (b - 1 / k)
    return {"NO_AGG": float(no_agg), "AGG": float(no_agg / (k * a))}


def holding(stats: dict, which: str = "mean") -> dict[str, float]:
    """Our mean holding time / mean reception latency per variant (ratio of the run means)."""
    m = stats[which]
    return {NAMES[v]: float(m.loc[v, "mean_holding_time"] / m.loc[v, "mean_reception_latency"])
            for v in (True, False) if v in m.index}


def holding_table(stats: dict) -> pd.DataFrame:
    """Implied (paper) and ours, per variant: holding time as a share of the reception latency,
    and in u.t. (ours; the paper's share applied to our reception latency)."""
    paper, ours = implied_holding(), holding(stats)
    m = stats["mean"]
    rows = {}
    for v in (True, False):
        name = NAMES[v]
        recv = m.loc[v, "mean_reception_latency"]
        rows[name] = {"paper-implied holding / reception": round(paper[name], 3),
                      "ours holding / reception": round(ours[name], 3),
                      "paper / ours": round(paper[name] / ours[name], 1),
                      "ours holding (u.t.)": round(m.loc[v, "mean_holding_time"], 1),
                      "paper-implied holding at our reception latency (u.t.)": round(paper[name] * recv, 1)}
    return pd.DataFrame(rows).T.rename_axis("variant")


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
    """Per variant: the median, spread (standard deviation, 10th and 90th percentiles) and
    largest of the per-node maxima (means over runs), and the tpp_per = "link" reading."""
    m, link = stats["mean"], stats["link"]
    return pd.DataFrame({
        "median of per-node maxima (mean over runs)": m["median_max_pending"].round(1),
        "±CI": stats["ci"]["median_max_pending"].round(1),
        "std over nodes": m["std_max_pending"].round(1),
        "10th pct": m["p10_max_pending"].round(1),
        "90th pct": m["p90_max_pending"].round(1),
        "largest per-node maximum (over runs)": stats["top"],
        "tpp_per=link: median": link["median_max_pending"].round(1),
        "tpp_per=link: nodes > 250": link["pend_gt250"].round(1),
        "tpp_per=link: largest": stats["link_top"],
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


IDS = ("000-F9-agg-le50", "000-F9-agg-le50-level", "000-F9-noagg-le50", "000-F9-le50-order", "000-F9-gt250-order",
       "000-F9-gt250-AGG", "000-F9-gt250-NO_AGG", "000-F9-median-order", "000-F9-implied-hold-NO_AGG",
       "000-F9-implied-hold-AGG", "000-F9-gt250-AGG-link", "000-F9-gt250-NO_AGG-link")


def measure(stats: dict, n: int, scale: str) -> dict[str, Measured]:
    """Every claim (all at N = 1024) from ``summarize``'s means over the replications."""
    if n != PAPER_N:
        return {i: not_run(f"N = {PAPER_N} not run at the {scale} scale (N = {n} shown)") for i in IDS}
    mean, top, link = stats["mean"], stats["top"], stats["link"]
    le50 = {v: float(mean.loc[v, "pend_le50"]) for v in (True, False)}
    gt250 = {v: float(mean.loc[v, "pend_gt250"]) for v in (True, False)}
    med = {v: float(mean.loc[v, "median_max_pending"]) for v in (True, False)}
    paper, ours = implied_holding(), holding(stats)
    out = {
        "000-F9-agg-le50": Measured(le50[True], f"{le50[True]:.1f} ({100 * le50[True] / n:.1f} %)"),
        "000-F9-agg-le50-level": Measured(le50[True], f"{le50[True]:.1f} ({100 * le50[True] / n:.1f} %)"),
        "000-F9-noagg-le50": Measured(le50[False], f"{le50[False]:.1f} ({100 * le50[False] / n:.1f} %)"),
        "000-F9-le50-order": Measured(le50[False] < le50[True], f"{le50[False]:.1f} vs {le50[True]:.1f}"),
        # an ordering of two empty tails orders nothing: it needs nodes above 250 in NO_AGG
        "000-F9-gt250-order": Measured(bool(gt250[False] > 0 and gt250[True] <= gt250[False]),
                                       f"{gt250[True]:.1f} vs {gt250[False]:.1f}"
                                       + (" (no node above 250 in either variant)" if gt250[False] == 0 else "")),
        "000-F9-gt250-AGG": Measured(gt250[True], f"{gt250[True]:.1f} (largest per-node max {top[True]})"),
        "000-F9-gt250-NO_AGG": Measured(gt250[False], f"{gt250[False]:.1f} (largest per-node max {top[False]})"),
        "000-F9-median-order": Measured(med[True] < med[False], f"AGG {med[True]:.1f} < NO_AGG {med[False]:.1f}"),
    }
    for v in ("NO_AGG", "AGG"):
        out[f"000-F9-implied-hold-{v}"] = Measured(
            ours[v], f"{ours[v]:.3f} (paper-implied {paper[v]:.3f}: {paper[v] / ours[v]:.1f}x ours)")
    for v, name in ((True, "AGG"), (False, "NO_AGG")):
        cid = f"000-F9-gt250-{name}-link"
        if v in link.index:
            g = float(link.loc[v, "pend_gt250"])
            out[cid] = Measured(g, f"{g:.1f} (largest per-node max {stats['link_top'][v]}; "
                                   f"nodes <= 50: {link.loc[v, 'pend_le50']:.1f})")
        else:
            out[cid] = not_run(f"no tpp_per = {SENSITIVITY} run at the {scale} scale")
    return out


def reading(verdicts: pd.DataFrame, stats: dict, n: int) -> str:
    """The explanation of this run's verdicts, from the verdict table and ``summarize``."""
    from causal_lab.families.vcube_broadcast.artifacts import reading as rd

    if n != PAPER_N:
        return rd.compose(verdicts, [(list(IDS), f"Every claim is about N = {PAPER_N}; this run has N = {n}, so they "
                                                 "are NOT_RUN and the figure only shows the shape at this N.")])
    mean, top, link = stats["mean"], stats["top"], stats["link"]
    share = {v: 100 * mean.loc[v, "pend_le50"] / n for v in (True, False)}
    mid = float(mean.loc[False, "pend_50_100"])
    paper9 = _paper()
    paper, ours = implied_holding(), holding(stats)
    orders = ["000-F9-agg-le50", "000-F9-noagg-le50", "000-F9-le50-order", "000-F9-median-order"]
    paragraphs = [(orders, (
        f"*Orderings ({rd.which(verdicts, orders)}).* Aggregation keeps the PENDING sets smaller: "
        f"{mean.loc[True, 'pend_le50']:.0f} AGG nodes ({share[True]:.1f} %) never hold more than 50 messages against "
        f"{mean.loc[False, 'pend_le50']:.0f} NO_AGG nodes ({share[False]:.1f} %; paper {paper9['nodes_le50', 'AGG']} "
        f"and \"less than 25 %\"), and the median per-node maximum is {mean.loc[True, 'median_max_pending']:.1f} "
        f"(AGG) against {mean.loc[False, 'median_max_pending']:.1f} (NO_AGG)."))]
    tail = ["000-F9-gt250-AGG", "000-F9-gt250-NO_AGG", "000-F9-gt250-order", "000-F9-agg-le50-level"]
    paragraphs.append((tail, (
        f"*The tail ({rd.which(verdicts, tail)}).* Our per-node maxima are tightly grouped: the largest over all "
        f"runs is {top[True]} (AGG) and {top[False]} (NO_AGG), so {mean.loc[True, 'pend_gt250']:.0f} and "
        f"{mean.loc[False, 'pend_gt250']:.0f} nodes exceed 250 against the paper's {paper9['nodes_gt250', 'AGG']} and "
        f"{paper9['nodes_gt250', 'NO_AGG']}; {mid:.0f} of the {n} NO_AGG nodes have their maximum in (50, 100] "
        f"(standard deviation over nodes {mean.loc[False, 'std_max_pending']:.1f}, 10th-90th percentile "
        f"{mean.loc[False, 'p10_max_pending']:.0f}-{mean.loc[False, 'p90_max_pending']:.0f}), whereas the paper's "
        f"NO_AGG nodes spread from fewer than {n // 4} at <= 50 to {paper9['nodes_gt250', 'NO_AGG']} above 250.  "
        f"With no node above 250 in either variant the spec's ordering \"AGG <= NO_AGG\" would hold as 0 <= 0; it "
        f"is judged only when the tail exists.  And {share[True]:.0f} % of our AGG nodes stay at <= 50 against the "
        f"paper's {100 * paper9['nodes_le50', 'AGG'] / n:.1f} %: the whole distribution sits lower.")))
    held = ["000-F9-implied-hold-NO_AGG", "000-F9-implied-hold-AGG"]
    paragraphs.append((held, (
        f"*What the paper's own Figure 7 implies ({rd.which(verdicts, held)}).* A node buffers the messages it "
        f"holds, so its buffer grows with the holding time.  The paper's percentages at N = {PAPER_N} (reception "
        f"-7.4 %, delivery -12.2 %, NO_AGG holding +53.4 %) fix the holding time as a share of the reception latency "
        f"(delivery = reception + holding): {paper['NO_AGG']:.3f} without aggregation and {paper['AGG']:.3f} with it.  "
        f"Ours are {ours['NO_AGG']:.3f} and {ours['AGG']:.3f} ({mean.loc[False, 'mean_holding_time']:.1f} and "
        f"{mean.loc[True, 'mean_holding_time']:.1f} u.t.): the paper's messages wait "
        f"{paper['NO_AGG'] / ours['NO_AGG']:.1f}x (NO_AGG) and {paper['AGG'] / ours['AGG']:.1f}x (AGG) longer, "
        f"relative to their latency, than ours.  That is the gap of the buffers, seen from another figure of the "
        f"same paper.")))
    links = ["000-F9-gt250-AGG-link", "000-F9-gt250-NO_AGG-link"]
    if rd.ran(verdicts, *links):
        paragraphs.append((links, (
            f"*Sensitivity, one propagation delay per link (`tpp_per = \"link\"`, REPORT).* Seed 000 §5.5 says "
            f"only the single tree's links varied at each use.  With fixed links the nodes above 250 are "
            f"{link.loc[True, 'pend_gt250']:.0f} (AGG) and {link.loc[False, 'pend_gt250']:.0f} (NO_AGG), the largest "
            f"per-node maxima {stats['link_top'][True]} and {stats['link_top'][False]}, the median "
            f"{link.loc[True, 'median_max_pending']:.1f} and {link.loc[False, 'median_max_pending']:.1f}: the tail "
            f"does not appear either.")))
    closing = (
        "Why (spec amendment of 2026-11-26, after an audit): no reading of the texts tried so far puts a node "
        "above 250 at σ = 25 (W = 750 or 1000, per-node exponential sources, sources with replacement, t_pp fixed "
        "per link, t_t per message, serialized or receiver-side t_pc), and every lever that widens the tail first "
        "breaks Table 1, Table 3, Figure 6 or Figure 10.  The gap is an element of the paper's model that the texts "
        "do not state, not the broadcast law; the DEVIATES rows stay.  No parameter was tuned.")
    return rd.compose(verdicts, paragraphs, closing)
