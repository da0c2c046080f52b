"""Figure 5.9 of seed 003 (§5.6.4): size of the causal barriers and causal-delivery delay
(notebook ``35_thesis_figure5_9``).

Experiment ``ps_order``: p ∈ {1, 10} initial publishers, every other node reacts once; each
(p, pruning variant) gives per-run histograms of #cb (``BARRIER_BINS``) and delay statistics.
This module averages them over the runs, sets them beside the numbers the thesis quotes and
measures the E5 claims (spec ``vcube_ps.md`` §5.6).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_ps.artifacts import readings
from causal_lab.families.vcube_ps.experiments import BARRIER_BINS

NOTEBOOK = "35_thesis_figure5_9"
REPS = {"smoke": 2, "default": 5, "paper": 40}
SMOKE_N = 32  # the smoke scale's N; the level checks are stated for N = 256
LABELS = {name: name.replace("_", "–").replace("ge", "≥ ") for name in BARRIER_BINS}
VARIANTS = {True: "prune (A4:94)", False: "no prune (A9 variant)"}
HARNESS = ["oracle_errors_strict", "oracle_late", "missing", "blocked_end"]


def thesis() -> pd.Series:
    """The numbers §5.6.4 quotes (``data/expected/003_ch5_figure5_9.csv``)."""
    return claims.table("003_ch5_figure5_9").set_index("key").value


def setting(scale: str) -> tuple[int, list[int], dict]:
    """N of the scale, the two p values and the ``ps_order`` overrides (both pruning variants)."""
    t = thesis()
    n = SMOKE_N if scale == "smoke" else int(t["n_nodes"])
    ps = [1, int(t["p_high"])]
    return n, ps, {"n_nodes": [n], "initial_publishers": ps, "cb_prune": [True, False]}


def split(rows: pd.DataFrame) -> dict[tuple[int, bool], pd.DataFrame]:
    """The runs of each (p, cb_prune) point."""
    return {(p, prune): rows[(rows.initial_publishers == p) & (rows.cb_prune == prune)]
            for p in sorted(rows.initial_publishers.unique()) for prune in VARIANTS}


def histogram(runs) -> pd.DataFrame:
    """Figure 5.9: mean over the runs of the % of messages per #cb bin, per (p, variant)."""
    return pd.DataFrame({f"p = {p}, {VARIANTS[prune]}": f[[f"cb_{b}_pct" for b in BARRIER_BINS]].mean().to_numpy()
                         for (p, prune), f in runs.items()},
                        index=[LABELS[b] for b in BARRIER_BINS]).rename_axis("#cb")


def _barrier_stats(frame: pd.DataFrame) -> dict:
    modes = frame.cb_mode_ge2.value_counts()
    return {"% #cb = 1": round(frame.cb_1_pct.mean(), 2), "% #cb < 5": round(frame.cb_lt5_pct.mean(), 2),
            "% #cb = 10": round(frame.cb_10_pct.mean(), 2), "% #cb < 15": round(frame.cb_lt15_pct.mean(), 2),
            "mean #cb": round(frame.cb_mean.mean(), 2),
            "most frequent #cb ≥ 2 (runs)": ", ".join(f"{int(v)} ({c})" for v, c in modes.items())}


def barriers(runs) -> pd.DataFrame:
    """The four barrier numbers the thesis prints, beside ours per variant ("—": not quoted)."""
    t = thesis()
    p_high = int(t["p_high"])
    quoted = {1: {"% #cb = 1": t["p1_cb_eq1_pct"], "% #cb < 5": t["p1_cb_lt5_pct"]},
              p_high: {"% #cb = 10": t["p10_cb_eq10_pct"], "% #cb < 15": t["p10_cb_lt15_pct"],
                       "most frequent #cb ≥ 2 (runs)": str(p_high)}}
    out = {}
    for p in quoted:
        out[f"thesis p = {p}"] = quoted[p]
        for prune in VARIANTS:
            out[f"ours p = {p}, {VARIANTS[prune]}"] = _barrier_stats(runs[(p, prune)])
    out = pd.DataFrame(out)
    return out.astype(object).where(out.notna(), "—")


def _delay_stats(frame: pd.DataFrame) -> dict:
    stats = {"deliveries per run": frame.deliveries.mean(), "% no delay": frame.delay_zero_pct.mean(),
             "% delay < 10 u.t.": frame.delay_lt10_pct.mean(), "delayed > 50 u.t. (per run)": frame.delay_gt50.mean(),
             "max delay (u.t., over runs)": frame.delay_max.max(), "max delay (u.t., mean of runs)": frame.delay_max.mean(),
             "mean delay (u.t.)": frame.delay_mean.mean()}
    return {k: round(float(v), 2) for k, v in stats.items()}


def delays(runs) -> pd.DataFrame:
    """Delivery-delay statistics per (p, variant): means over the runs, maxima over the runs."""
    t = thesis()
    p_high = int(t["p_high"])
    quoted = {
        1: {"deliveries per run": t["deliveries"], "% no delay": t["p1_delay_zero_pct"],
            "% delay < 10 u.t.": t["p1_delay_lt10_pct"], "delayed > 50 u.t. (per run)": t["p1_delay_gt50_count"],
            "max delay (u.t., over runs)": t["p1_delay_max"]},
        p_high: {"deliveries per run": t["deliveries"], "% no delay": t["p10_delay_zero_pct"],
                 "delayed > 50 u.t. (per run)": t["p10_delay_gt50_count"], "max delay (u.t., over runs)": t["p10_delay_max"]},
    }
    out = {}
    for p in quoted:
        out[f"thesis p = {p} (N = {int(t['n_nodes'])})"] = quoted[p]
        for prune in VARIANTS:
            out[f"ours p = {p}, {VARIANTS[prune]}"] = _delay_stats(runs[(p, prune)])
    out = pd.DataFrame(out)
    return out.astype(object).where(out.notna(), "—")


def same_delays(runs) -> bool:
    """Pruning changes only which implied entries a barrier carries: are the delays identical?"""
    cols = ["delay_zero_pct", "delay_gt50", "delay_max"]
    ps = {p for p, _ in runs}
    return all((runs[(p, True)][cols].to_numpy() == runs[(p, False)][cols].to_numpy()).all() for p in ps)


def harness(rows: pd.DataFrame) -> pd.DataFrame:
    """Oracle errors, late, missing and blocked deliveries per (p, variant), summed over the runs."""
    return rows.groupby(["initial_publishers", "cb_prune"])[HARNESS].sum()


def plot(runs, n: int):
    """Figure 5.9: #cb histogram per p, both pruning variants, with the thesis's printed values."""
    t = thesis()
    p_high = int(t["p_high"])
    hist = histogram(runs)
    fig, axes = plt.subplots(1, 2, figsize=(15, 4.8), sharey=True)
    x = np.arange(len(BARRIER_BINS))
    marks = {1: {"1": t["p1_cb_eq1_pct"]}, p_high: {"10": t["p10_cb_eq10_pct"]}}
    cumulative = {1: ("< 5", "cb_lt5_pct", t["p1_cb_lt5_pct"]), p_high: ("< 15", "cb_lt15_pct", t["p10_cb_lt15_pct"])}
    for ax, p in zip(axes, marks):
        for k, (prune, color) in enumerate([(True, plotting.PALETTE["ours"]), (False, "tab:green")]):
            values = hist[f"p = {p}, {VARIANTS[prune]}"].to_numpy()
            bars = ax.bar(x + (k - 0.5) * 0.4, values, 0.4, color=color, label=f"ours, {VARIANTS[prune]}")
            ax.bar_label(bars, labels=[f"{v:.1f}" if v >= 0.05 else "" for v in values], fontsize=7, padding=1)
        for name, value in marks[p].items():
            ax.plot(list(BARRIER_BINS).index(name), value, "x", ms=12, mew=2.5, color=plotting.PALETTE["paper"],
                    label=f"thesis: #cb = {name}")
        label, col, value = cumulative[p]
        note = (f"% of messages with #cb {label}:\nthesis {value:g}\n"
                + "\n".join(f"ours, {VARIANTS[prune]}: {runs[(p, prune)][col].mean():.1f}" for prune in VARIANTS))
        ax.text(0.30, 0.97, note, transform=ax.transAxes, ha="left", va="top", fontsize=8,
                bbox=dict(boxstyle="round", fc="white", ec="0.6"))
        ax.set_xticks(x, list(LABELS.values()))
        ax.set(xlabel="number of direct dependencies #cb", title=f"p = {p} initial publisher{'s' if p > 1 else ''}, N = {n}")
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("% of messages")
    axes[0].set_ylim(0, 1.35 * hist.to_numpy().max())
    fig.tight_layout()
    return fig


def _barrier_claims(runs, p_high: int) -> dict[str, Measured]:
    """E5-3 … E5-6 for each pruning variant (the variant's ids end in ``-noprune``)."""
    out = {}
    for prune in VARIANTS:
        tag = "" if prune else "-noprune"
        one, ten = runs[(1, prune)], runs[(p_high, prune)]
        v = one.cb_lt5_pct.mean()
        out[f"003-F5.9-E5-3{tag}"] = Measured(float(v), f"{v:.1f}")
        v = one.cb_1_pct.mean()
        out[f"003-F5.9-E5-4{tag}"] = Measured(float(v), f"{v:.1f}")
        modes = ten.cb_mode_ge2
        out[f"003-F5.9-E5-5-mode{tag}"] = Measured(bool((modes == p_high).all()),
                                                   f"{p_high} in {int((modes == p_high).sum())} of {len(ten)} runs")
        v = ten.cb_10_pct.mean()
        out[f"003-F5.9-E5-5-pct{tag}"] = Measured(float(v), f"{v:.1f}")
        v = ten.cb_lt15_pct.mean()
        out[f"003-F5.9-E5-6{tag}"] = Measured(float(v), f"{v:.1f}")
        out[f"003-F5.9-E5-6-level{tag}"] = Measured(float(v), f"{v:.1f}")
    return out


def _delay_claims(runs, p_high: int) -> dict[str, Measured]:
    """E5-7 … E5-11 on the default variant (delays do not depend on pruning)."""
    one, ten = runs[(1, True)], runs[(p_high, True)]
    out = {}
    for key, frame in (("p1", one), ("p10", ten)):
        v = frame.delay_zero_pct.mean()
        out[f"003-F5.9-E5-7-{key}"] = Measured(float(v), f"{v:.1f}")
        out[f"003-F5.9-E5-9-{key}"] = Measured(float(frame.delay_gt50.max()),
                                               f"{frame.delay_gt50.mean():.1f} (max {frame.delay_gt50.max()})")
        v = frame.delay_max.max()
        out[f"003-F5.9-E5-10-{key}"] = Measured(float(v), f"{v:g}")
    v = ten.delay_zero_pct.mean()
    out["003-F5.9-E5-7-p10-level"] = Measured(float(v), f"{v:.1f}")
    out["003-F5.9-E5-9-p10-level"] = Measured(float(ten.delay_gt50.mean()), f"{ten.delay_gt50.mean():.1f} per run")
    out["003-F5.9-E5-10-p10-level"] = Measured(float(ten.delay_max.max()), f"{ten.delay_max.max():g}")
    v = one.delay_lt10_pct.mean()
    out["003-F5.9-E5-8"] = Measured(float(v), f"{v:.1f}")
    out["003-F5.9-E5-11"] = Measured(bool(ten.delay_gt50.mean() > one.delay_gt50.mean()),
                                     f"{ten.delay_gt50.mean():.1f} vs {one.delay_gt50.mean():.1f}")
    return out


def measure(rows: pd.DataFrame, runs, n: int, scale: str) -> dict[str, Measured]:
    """Every claim: E5-1 and E5-2 at every scale (with the scale's N), the levels at N = 256."""
    t = thesis()
    pairs = n * (n - 1)
    wrong = rows[rows.deliveries != pairs]
    bad = int(harness(rows).to_numpy().sum())
    out = {
        "003-F5.9-E5-1": Measured(wrong.empty, f"{pairs} in all {len(rows)} runs (N = {n})" if wrong.empty
                                  else f"{len(wrong)} runs differ from {pairs} (N = {n})"),
        "003-F5.9-E5-2": Measured(bad == 0, f"{bad} in {len(rows)} runs"),
    }
    if n == int(t["n_nodes"]):
        return out | _barrier_claims(runs, int(t["p_high"])) | _delay_claims(runs, int(t["p_high"]))
    reason = f"N = {n} at the {scale} scale (the thesis's numbers are for N = {int(t['n_nodes'])})"
    return out | {i: not_run(reason) for i in claims.load(NOTEBOOK).id if i not in out}


def reading(verdicts: pd.DataFrame, runs) -> str:
    """The closing explanation of the notebook, from this run's verdicts and runs."""
    ps = sorted({p for p, _ in runs})
    if len(ps) < 2:
        return readings.explain(verdicts)
    one, ten = runs[(ps[0], True)], runs[(ps[1], True)]

    def p10(row):
        return (f"With p = {ps[1]} a node reacts only after the slowest of the {ps[1]} initial messages, sent together "
                f"at t = 0, has reached it; by then they have mostly reached the other nodes too, so the reactions' "
                f"barriers are almost always satisfied on arrival: {ten.delay_zero_pct.mean():.1f} % of the deliveries "
                f"wait 0, {ten.delay_gt50.mean():.1f} per run wait more than 50 u.t., the longest wait is "
                f"{ten.delay_max.max():g} u.t. (mean delay {ten.delay_mean.mean():.2f} u.t.), as in the spec's prototype "
                f"(0-2 long waits, maximum 37-61).  The thesis states neither the law of t_w, nor when the p initial "
                f"messages are sent, nor whether t_pp varies (its chapter 4 draws t_pp ~ N(100, 25)): any of these "
                f"could create the waits it reports.  We keep the spec's resolution (A13) and tune nothing.")

    def cb15(row):
        return (f"With pruning (A4:94) a barrier names only the direct dependencies still undelivered, so the "
                f"reactions' barriers stay small ({ten.cb_mean.mean():.2f} entries on average at p = {ps[1]}); "
                f"never pruning (the authors' code, A9) gives {runs[(ps[1], False)].cb_lt15_pct.mean():.1f} % below 15. "
                f"The thesis's numbers sit between the two readings.")

    def e5_11(row):
        return (f"The thesis says p = {ps[1]} waits more than p = {ps[0]} (457 vs 81 deliveries delayed more than 50 "
                f"u.t.); here {ten.delay_gt50.mean():.1f} vs {one.delay_gt50.mean():.1f} per run, as the spec's "
                f"prototype found (A13).  " + p10(row).split(".  ", 1)[0] + ".")

    why = {"003-F5.9-E5-6-level": cb15, "003-F5.9-E5-6-level-noprune": cb15, "003-F5.9-E5-7-p10-level": p10,
           "003-F5.9-E5-9-p10-level": p10, "003-F5.9-E5-10-p10-level": p10, "003-F5.9-E5-11": e5_11}
    intro = (f"p = {ps[0]}: {one.cb_lt5_pct.mean():.1f} % of the messages have fewer than 5 direct dependencies and "
             f"{one.cb_1_pct.mean():.1f} % exactly one; {one.delay_zero_pct.mean():.1f} % of the deliveries are not "
             f"delayed, {one.delay_gt50.mean():.1f} per run wait more than 50 u.t., at most {one.delay_max.max():g} u.t. "
             f"(a long wait is a reaction that arrives over fewer hops than one of its dependencies: one or two hop "
             f"times).  The one-sided bounds of the spec at p = {ps[1]} (E5-6, E5-7, E5-9, E5-10) are repeated as level "
             f"rows (`-level`), whose band is the spec's bound mirrored around the thesis's value.")
    return readings.explain(verdicts, why, intro)
