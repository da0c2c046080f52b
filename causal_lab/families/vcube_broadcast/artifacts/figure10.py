"""Figure 10 of seed 000 (= thesis Figure 4.7): maximum number of messages aggregated per packet
per node, N = 1024, AGG, payload 50 vs 5 bytes (notebook ``17_icpp18_figure10``).

Every claim is about the paper's 1024-node run: at any other N (the smoke scale's 64) the
figure is drawn but every claim is NOT_RUN.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run

NOTEBOOK = "17_icpp18_figure10"
PAPER_N = 1024
PAYLOADS = (50, 5)
VALUES = [f"maxagg_{k}" for k in range(1, 21)] + ["maxagg_gt20"]
METRICS = VALUES + ["share_7_11", "share_8_12", "nodes_8_12", "share_max1", "mean_max_aggregation",
                    "max_messages_per_packet", "mtu_closed_packets", "packets"]


def shares(rows: pd.DataFrame, n: int) -> pd.DataFrame:
    """Per run, the quoted statistics of the per-node maxima: % of nodes in [7, 11] and [8, 12],
    nodes in [8, 12], % of nodes whose maximum is 1.  Asserts that every node has one maximum
    and that replication r of both payloads had the same seed (common random numbers)."""
    assert (rows[VALUES].sum(axis=1) == n).all(), "every node has exactly one maximum"
    entropy = rows.pivot(index="rep", columns="payload", values="seed_entropy")
    assert (entropy[PAYLOADS[0]] == entropy[PAYLOADS[1]]).all(), "payloads must share the schedule"
    return rows.assign(share_7_11=100 * _nodes_in(rows, 7, 11) / n, share_8_12=100 * _nodes_in(rows, 8, 12) / n,
                       nodes_8_12=_nodes_in(rows, 8, 12), share_max1=100 * rows["maxagg_1"] / n)


def _nodes_in(rows: pd.DataFrame, lo: int, hi: int) -> pd.Series:
    """Per run, the nodes whose maximum is in [lo, hi]."""
    return rows[[f"maxagg_{k}" for k in range(lo, hi + 1)]].sum(axis=1)


def summarize(rows: pd.DataFrame) -> dict:
    """Per payload: mean and 95 % CI over the replications (rows from ``shares``), and the
    largest number of messages in one packet over all runs."""
    grouped = rows.groupby("payload")[METRICS]
    return {"mean": grouped.mean(), "ci": grouped.agg(sweep.ci95),
            "top": rows.groupby("payload").max_messages_per_packet.max()}


def _paper() -> pd.Series:
    return claims.table("000_figure10_maxagg").set_index(["quantity", "payload"]).value.map(lambda x: f"{x:g}")


def table(stats: dict) -> pd.DataFrame:
    """The quoted statistics, paper beside ours, per payload."""
    paper, mean, top = _paper(), stats["mean"], stats["top"]
    ours = {p: {"% nodes in [7, 11]": round(mean.loc[p, "share_7_11"], 2),
                "% nodes in [8, 12]": round(mean.loc[p, "share_8_12"], 2),
                "nodes in [8, 12]": round(mean.loc[p, "nodes_8_12"], 1),
                "mean per-node max": round(mean.loc[p, "mean_max_aggregation"], 2), "global max": top[p],
                "% nodes with max 1": round(mean.loc[p, "share_max1"], 2),
                "MTU-closed packets": round(mean.loc[p, "mtu_closed_packets"], 1),
                "packets": round(mean.loc[p, "packets"], 1)} for p in PAYLOADS}
    out = pd.DataFrame({
        f"paper 50 B (N={PAPER_N})": {"% nodes in [7, 11]": paper["share_7_11_pct", 50],
                                      "global max": f"<= {paper['global_max', 50]}"},
        "ours 50 B": ours[50],
        f"paper 5 B (N={PAPER_N})": {"% nodes in [8, 12]": paper["share_8_12_pct", 5],
                                     "nodes in [8, 12]": paper["nodes_8_12", 5]},
        "ours 5 B": ours[5],
    })
    return out.map(lambda v: "" if pd.isna(v) else f"{v:g}" if isinstance(v, (int, float, np.number)) else v)


def histogram(stats: dict) -> pd.DataFrame:
    """Mean nodes (and CI) per per-node maximum, per payload, for the values some node reached."""
    hist = pd.DataFrame({f"{c} {p} B": stats["mean" if c == "mean" else "ci"].loc[p, VALUES].round(1)
                         for p in PAYLOADS for c in ("mean", "±CI")})
    hist.index = [v.removeprefix("maxagg_").replace("gt20", "> 20") for v in VALUES]
    return hist[(hist.filter(like="mean") > 0).any(axis=1)].rename_axis("max messages per packet").T


def plot(stats: dict, n: int):
    """Nodes per per-node maximum, both payloads, with the quoted ranges and the paper's cap."""
    paper, mean, ci = _paper(), stats["mean"], stats["ci"]
    fig, ax = plt.subplots(figsize=(11, 4.4))
    x = np.arange(1, len(VALUES) + 1)
    colors = {50: plotting.PALETTE["ours"], 5: "tab:green"}
    for k, p in enumerate(PAYLOADS):
        ax.bar(x + (k - 0.5) * 0.4, mean.loc[p, VALUES], width=0.4, yerr=ci.loc[p, VALUES].fillna(0), capsize=2,
               color=colors[p], alpha=0.85,
               label=f"ours {p} B: mean per-node max {mean.loc[p, 'mean_max_aggregation']:.2f}")
    ax.axvspan(6.5, 11.5, color=colors[50], alpha=0.07)
    ax.axvspan(7.5, 12.5, color=colors[5], alpha=0.07)
    if n == PAPER_N:  # the quoted shares are of the paper's 1024-node run
        ax.text(0.6, ax.get_ylim()[1] * 0.9, f"50 B in [7, 11]: paper {paper['share_7_11_pct', 50]} %, "
                f"ours {mean.loc[50, 'share_7_11']:.1f} %", fontsize=8, color=plotting.PALETTE["paper"])
        ax.text(0.6, ax.get_ylim()[1] * 0.82, f"5 B in [8, 12]: paper {paper['share_8_12_pct', 5]} %, "
                f"ours {mean.loc[5, 'share_8_12']:.1f} %", fontsize=8, color=plotting.PALETTE["paper"])
        ax.axvline(float(paper["global_max", 50]) + 0.5, ls=":", color=plotting.PALETTE["paper"],
                   label=f"paper: no node above {paper['global_max', 50]} (50 B)")
    ax.set_xticks(x, [v.removeprefix("maxagg_").replace("gt20", ">20") for v in VALUES])
    ax.set(xlabel="maximum number of messages the node aggregated in one packet", ylabel="nodes",
           title=f"Max messages aggregated per packet per node, N = {n}, AGG (Figure 10)")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def measure(rows: pd.DataFrame, stats: dict, n: int, scale: str) -> dict[str, Measured]:
    """Every claim (all at N = 1024) from ``summarize``'s means over the replications."""
    ids = ("50B-share-7-11", "50B-global-max", "5B-mean-above-50B", "5B-share-8-12", "50B-max1", "5B-max1")
    if n != PAPER_N:
        return {f"000-F10-{i}": not_run(f"N = {PAPER_N} not run at the {scale} scale (N = {n} shown)") for i in ids}
    mean, top = stats["mean"], stats["top"]
    per_run = ", ".join(map(str, rows[rows.payload == 50].max_messages_per_packet))
    m5, m50 = mean.loc[5, "mean_max_aggregation"], mean.loc[50, "mean_max_aggregation"]
    return {
        "000-F10-50B-share-7-11": Measured(float(mean.loc[50, "share_7_11"]), f"{mean.loc[50, 'share_7_11']:.1f} %"),
        "000-F10-50B-global-max": Measured(int(top[50]), f"{top[50]} (per run: {per_run})"),
        "000-F10-5B-mean-above-50B": Measured(bool(m5 > m50), f"{m5:.2f} > {m50:.2f}"),
        "000-F10-5B-share-8-12": Measured(
            float(mean.loc[5, "share_8_12"]),
            f"{mean.loc[5, 'share_8_12']:.1f} % ({mean.loc[5, 'nodes_8_12']:.1f} nodes)"),
        **{f"000-F10-{p}B-max1": Measured(float(mean.loc[p, "share_max1"]), f"{mean.loc[p, 'share_max1']:.2f} %")
           for p in PAYLOADS},
    }


def reading(verdicts: pd.DataFrame, stats: dict, n: int) -> str:
    """The explanation of this run's verdicts from the verdict table and ``summarize``."""
    from causal_lab.families.vcube_broadcast.artifacts import reading as rd

    ids = [c for c in verdicts["id"]]
    if n != PAPER_N:
        return rd.compose(verdicts, [(ids, f"Every claim is about N = {PAPER_N}; this run has N = {n}, where no packet "
                                           "comes near the MTU and both payloads give identical runs (same seeds).")])
    mean, top = stats["mean"], stats["top"]
    paragraphs = [(ids, (
        f"*Levels ({rd.which(verdicts, ids)}).* With 50-byte messages {mean.loc[50, 'share_7_11']:.1f} % of the nodes "
        f"have a per-node maximum in [7, 11] (paper 95.5 %) and the largest packet of any run holds {top[50]} messages "
        f"(paper: no node above 14); with 5-byte messages {mean.loc[5, 'share_8_12']:.1f} % (≈ {mean.loc[5, 'nodes_8_12']:.0f} "
        f"nodes) lie in [8, 12] (paper 81.3 %, 833 nodes) and the mean per-node maximum rises from "
        f"{mean.loc[50, 'mean_max_aggregation']:.2f} to {mean.loc[5, 'mean_max_aggregation']:.2f}; "
        f"{mean.loc[50, 'share_max1']:.2f} % and {mean.loc[5, 'share_max1']:.2f} % of the nodes never aggregate.  The "
        f"shift is modest because a message at N = {n} carries more vector-clock bytes than payload, so a 5-byte payload "
        f"shortens it by less than a third; the MTU still closes {mean.loc[5, 'mtu_closed_packets']:.0f} packets per "
        f"run with 5-byte messages ({mean.loc[50, 'mtu_closed_packets']:.0f} with 50), and the per-node maximum is set "
        f"as much by how many causally related messages a node holds for one child as by the MTU."))]
    return rd.compose(verdicts, paragraphs, "No parameter was tuned.")
