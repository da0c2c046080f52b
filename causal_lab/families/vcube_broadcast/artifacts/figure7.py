"""Figure 7 of seed 000 (= thesis Figure 4.4): mean reception and delivery latency, holding time
and sending-queue wait, AGG vs NO_AGG, N = 8..1024 (notebook ``14_icpp18_figure7``).

The figure in the texts is an image: only the numbers quoted in its prose are checked, beside a
model floor (the propagation delay of the mean tree depth) that bounds every reception latency.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_broadcast.experiments import SIZES
from causal_lab.topology import vcube as topology

NOTEBOOK = "14_icpp18_figure7"
METRICS = ["mean_reception_latency", "max_reception_latency", "mean_delivery_latency",
           "mean_holding_time", "mean_queue_wait"]
NAMES = {False: "NO_AGG", True: "AGG"}


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (N, aggregation): mean, std and 95 % Student-t CI half-width of ``METRICS`` over the
    replications, as ``sweep.summarize`` defines them, in pandas: the rows are notebook 10's
    cached runs, so no Spark session is needed to read them."""
    grouped = rows.groupby(["n_nodes", "aggregation"])[METRICS]
    return pd.concat({"mean": grouped.mean(), "std": grouped.std(ddof=1),
                      "ci95": grouped.agg(sweep.ci95)}, axis=1)


def series(summary: pd.DataFrame, metric: str, aggregation: bool, stat: str = "mean") -> pd.Series:
    """One statistic of one metric per N for one variant."""
    return summary[stat, metric].xs(aggregation, level="aggregation")


def pct(a, b):
    """100 (a - b) / b: the spec's percent difference (b the reference)."""
    return 100 * (a - b) / b


def mean_depth(n: int) -> float:
    """Mean depth over receivers j != r of r's VCube tree (the same for every root r)."""
    return float(np.mean([topology.tree_depth(j, 0) for j in range(1, n)]))


def floor(experiment, sizes=SIZES) -> pd.Series:
    """Propagation floor per N: mean tree depth x (t_pc + t_t + E[t_pp]), no queueing; the
    closed form d 2^(d-1) / (2^d - 1) of the mean depth checks the topology's hop counts."""
    defaults = {p.name: p.default for p in experiment.params}
    depth = pd.Series({n: mean_depth(n) for n in sizes})
    closed = [(d := n.bit_length() - 1) * 2 ** (d - 1) / (n - 1) for n in sizes]
    assert np.allclose(depth, closed), "tree depths disagree with the closed form"
    return depth * (defaults["t_pc"] + defaults["t_t"] + defaults["tpp_mean"])


def _variants(summary: pd.DataFrame, metric: str) -> dict[bool, pd.Series]:
    return {v: series(summary, metric, v) for v in (False, True)}


def table(summary: pd.DataFrame, experiment) -> pd.DataFrame:
    """Ours per N (rounded for display): floor, latencies, holding time, queue wait, maxima."""
    sizes = sorted(summary.index.get_level_values("n_nodes").unique())
    fl = floor(experiment)
    recv, deliv = _variants(summary, "mean_reception_latency"), _variants(summary, "mean_delivery_latency")
    hold, tq = _variants(summary, "mean_holding_time"), _variants(summary, "mean_queue_wait")
    rmax = _variants(summary, "max_reception_latency")
    depth = pd.Series({n: mean_depth(n) for n in sizes})
    return pd.DataFrame({
        "mean depth": depth.round(3),
        "floor": fl.loc[sizes].round(1),
        "recv NO_AGG": recv[False].round(1),
        "recv AGG": recv[True].round(1),
        "±CI recv AGG": series(summary, "mean_reception_latency", True, "ci95").round(1),
        "recv AGG vs NO_AGG %": pct(recv[True], recv[False]).round(2),
        "deliv NO_AGG": deliv[False].round(1),
        "deliv AGG": deliv[True].round(1),
        "±CI deliv AGG": series(summary, "mean_delivery_latency", True, "ci95").round(1),
        "deliv AGG vs NO_AGG %": pct(deliv[True], deliv[False]).round(2),
        "hold NO_AGG": hold[False].round(2),
        "hold AGG": hold[True].round(2),
        "hold NO_AGG longer by %": pct(hold[False], hold[True]).round(1),
        "t_q NO_AGG": tq[False].round(2),
        "t_q AGG": tq[True].round(2),
        "t_q NO_AGG longer by %": pct(tq[False], tq[True]).round(1),
        "max recv NO_AGG": rmax[False].round(1),
        "max recv AGG": rmax[True].round(1),
    }).rename_axis("N")


def delivery_gap(summary: pd.DataFrame) -> pd.Series:
    """|delivery AGG - NO_AGG| in % for the N <= 512 of the scale (the paper: at most 3.2 %)."""
    deliv = _variants(summary, "mean_delivery_latency")
    d = pct(deliv[True], deliv[False]).abs()
    return d.loc[d.index <= 512]


def _ours(summary: pd.DataFrame, quantity: str, n: int, variant: str) -> float | None:
    """Our value of a quantity quoted in the prose, or None when its N is not in this scale."""
    sizes = set(summary.index.get_level_values("n_nodes"))
    agg = variant == "AGG"
    if quantity in ("reception_ratio_1024_8", "reception_max_increase_1024_8"):
        if not {8, 1024} <= sizes:
            return None
        metric = "mean_reception_latency" if quantity == "reception_ratio_1024_8" else "max_reception_latency"
        v = series(summary, metric, agg)
        return float(v[1024] / v[8])
    if quantity == "delivery_agg_vs_noagg_abs_pct_max":
        return float(delivery_gap(summary).max())
    if n not in sizes:
        return None
    recv, deliv = _variants(summary, "mean_reception_latency"), _variants(summary, "mean_delivery_latency")
    hold, tq = _variants(summary, "mean_holding_time"), _variants(summary, "mean_queue_wait")
    return float({
        "reception_agg_vs_noagg_pct": lambda: pct(recv[True], recv[False])[n],
        "queue_wait_noagg_vs_agg_pct": lambda: pct(tq[False], tq[True])[n],
        "queue_wait": lambda: tq[agg][n],
        "delivery_agg_vs_noagg_pct": lambda: pct(deliv[True], deliv[False])[n],
        "holding_noagg_vs_agg_pct": lambda: pct(hold[False], hold[True])[n],
    }[quantity]())


def quoted(summary: pd.DataFrame) -> pd.DataFrame:
    """The numbers quoted in the prose (data/expected/000_figure7_latency.csv) beside ours."""
    paper = claims.table("000_figure7_latency")
    ours = [_ours(summary, q, n, v) for q, n, v in zip(paper.quantity, paper.n_nodes, paper.variant)]
    out = paper.assign(ours=[f"{x:.2f}" if x is not None else "not run" for x in ours])
    return out[["quantity", "n_nodes", "variant", "relation", "value", "ours", "definition"]].rename(
        columns={"value": "paper"})


def _missing(need, scale: str) -> Measured:
    return not_run(f"N = {need} not in the {scale} scale")


def plot(summary: pd.DataFrame, experiment):
    """Latencies with the floor; holding time and queue wait (log); AGG vs NO_AGG in %."""
    paper = claims.table("000_figure7_latency").set_index(["quantity", "n_nodes", "variant"]).value
    sizes = sorted(summary.index.get_level_values("n_nodes").unique())
    recv, deliv = _variants(summary, "mean_reception_latency"), _variants(summary, "mean_delivery_latency")
    hold, tq = _variants(summary, "mean_holding_time"), _variants(summary, "mean_queue_wait")
    colors = {False: "tab:orange", True: plotting.PALETTE["ours"]}
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    ax = axes[0]
    for v in (False, True):
        for metric, data, style in (("mean_reception_latency", recv, "o-"), ("mean_delivery_latency", deliv, "s--")):
            ax.errorbar(sizes, data[v], yerr=series(summary, metric, v, "ci95").fillna(0), fmt=style, ms=5,
                        capsize=3, color=colors[v],
                        label=f"{'reception' if 'reception' in metric else 'delivery'}, {NAMES[v]}")
    ax.plot(SIZES, floor(experiment), ":", color="0.4", label="propagation floor (depth x 102 u.t.)")
    ax.set(xlabel="nodes N", ylabel="mean latency (u.t.)", title="Reception and delivery latency (Figure 7)")
    ax = axes[1]
    for v in (False, True):
        ax.plot(sizes, hold[v], "o-", color=colors[v], label=f"holding time, {NAMES[v]}")
        ax.plot(sizes, tq[v], "^--", color=colors[v], label=f"sending-queue wait t_q, {NAMES[v]}")
    ax.set(yscale="log", xlabel="nodes N", ylabel="mean time (u.t., log)", title="Holding time and queue wait")
    ax = axes[2]
    ax.axhline(0, color="0.6", lw=0.8)
    band = paper["delivery_agg_vs_noagg_abs_pct_max", 32, "both"]
    ax.axhspan(-band, band, color=plotting.PALETTE["paper"], alpha=0.08,
               label=f"paper: |delivery diff| <= {band:g} % for N <= 512")
    ax.plot(sizes, pct(recv[True], recv[False]), "o-", color=plotting.PALETTE["ours"], label="ours, reception")
    ax.plot(sizes, pct(deliv[True], deliv[False]), "s--", color="tab:green", label="ours, delivery")
    ax.plot([256, 1024], [paper["reception_agg_vs_noagg_pct", n, "AGG"] for n in (256, 1024)], "x", ms=11,
            mew=2, color=plotting.PALETTE["paper"], label="paper, reception (256, 1024)")
    ax.plot([1024], [paper["delivery_agg_vs_noagg_pct", 1024, "AGG"]], "+", ms=13, mew=2, color="tab:olive",
            label="paper, delivery (1024)")
    ax.set(xlabel="nodes N", ylabel="100 (AGG - NO_AGG) / NO_AGG  (%)", title="AGG vs NO_AGG")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(SIZES, [str(n) for n in SIZES])
        ax.minorticks_off()
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def measure(rows: pd.DataFrame, summary: pd.DataFrame, experiment, scale: str) -> dict[str, Measured]:
    """Every claim of the notebook from the runs (``rows``) and their ``summarize``."""
    sizes = set(summary.index.get_level_values("n_nodes"))
    fl = floor(experiment)
    recv, deliv = _variants(summary, "mean_reception_latency"), _variants(summary, "mean_delivery_latency")
    hold, tq = _variants(summary, "mean_holding_time"), _variants(summary, "mean_queue_wait")
    missing = functools.partial(_missing, scale=scale)
    out: dict[str, Measured] = {}
    for n in SIZES:  # the model floor, both variants
        if n not in sizes:
            out[f"000-F7-floor-N{n}"] = missing(n)
            continue
        low = min(recv[False][n], recv[True][n])
        out[f"000-F7-floor-N{n}"] = Measured(
            float(low / fl[n]),
            f"NO_AGG {recv[False][n]:.1f} / AGG {recv[True][n]:.1f} (min / floor {low / fl[n]:.3f})")
    ok = bool((rows.mean_delivery_latency >= rows.mean_reception_latency).all()
              and (rows.mean_holding_time >= 0).all())
    out["000-F7-deliv-ge-recv"] = Measured(
        ok, f"min mean holding time {rows.mean_holding_time.min():.3f} u.t. over {len(rows)} runs")
    d_recv, d_deliv = pct(recv[True], recv[False]), pct(deliv[True], deliv[False])
    for n in [m for m in SIZES if 16 <= m <= 512]:
        out[f"000-F7-recv-agg-N{n}"] = (Measured(float(d_recv[n]), f"{d_recv[n]:+.2f} %")
                                        if n in sizes else missing(n))
    out["000-F7-recv-agg-N1024"] = (Measured(float(d_recv[1024]), f"{d_recv[1024]:+.2f} %")
                                    if 1024 in sizes else missing(1024))
    for n in [m for m in SIZES if m <= 512]:
        out[f"000-F7-deliv-diff-N{n}"] = (Measured(float(abs(d_deliv[n])), f"{d_deliv[n]:+.2f} %")
                                          if n in sizes else missing(n))
    out["000-F7-deliv-agg-N1024"] = (Measured(float(d_deliv[1024]), f"{d_deliv[1024]:+.2f} %")
                                     if 1024 in sizes else missing(1024))
    for n in [m for m in SIZES if m >= 32]:
        out[f"000-F7-hold-N{n}"] = missing(n) if n not in sizes else Measured(
            bool(hold[True][n] < hold[False][n]),
            f"AGG {hold[True][n]:.2f} / NO_AGG {hold[False][n]:.2f} u.t. "
            f"(NO_AGG longer by {pct(hold[False], hold[True])[n]:.1f} %)")
    if 1024 in sizes:
        out["000-F7-tq-noagg-N1024"] = Measured(float(tq[False][1024]), f"{tq[False][1024]:.1f} u.t.")
        out["000-F7-tq-order-N1024"] = Measured(
            bool(tq[False][1024] > tq[True][1024]),
            f"AGG {tq[True][1024]:.1f} u.t., NO_AGG longer by {pct(tq[False], tq[True])[1024]:.0f} %")
    else:
        out["000-F7-tq-noagg-N1024"] = out["000-F7-tq-order-N1024"] = missing(1024)
    ratio = {v: _ours(summary, "reception_ratio_1024_8", 1024, v) for v in ("AGG", "NO_AGG")}
    maxratio = {v: _ours(summary, "reception_max_increase_1024_8", 1024, v) for v in ("AGG", "NO_AGG")}
    if ratio["AGG"] is None:
        for key in ("ratio-AGG", "ratio-NO_AGG", "ratio-order", "maxratio-order"):
            out[f"000-F7-{key}"] = missing("8 and 1024")
        return out
    for v in ("AGG", "NO_AGG"):
        out[f"000-F7-ratio-{v}"] = Measured(ratio[v], f"{ratio[v]:.2f}")
    out["000-F7-ratio-order"] = Measured(bool(ratio["NO_AGG"] > ratio["AGG"]),
                                         f"{ratio['NO_AGG']:.2f} > {ratio['AGG']:.2f}")
    out["000-F7-maxratio-order"] = Measured(bool(maxratio["NO_AGG"] > maxratio["AGG"]),
                                            f"{maxratio['NO_AGG']:.2f} > {maxratio['AGG']:.2f}")
    return out
