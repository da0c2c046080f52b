"""Figure 5.7 of seed 003 (§5.6.2): effect of the number of subscribers at N = 4096
(notebook ``32_thesis_figure5_7``, experiment ``ps_single``, spec ``vcube_ps.md`` §5.3 E2).

One publisher, one message, 10 % … 100 % subscribers.  Panel (a) is the mean latency of both
systems vs the share, panel (b) the SRPT tree: subscribers, relays, size and mean path length.
N is the text's 4096, not the caption's 8192 (spec ambiguity A2; ``a2`` computes both).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_ps.artifacts import readings

NOTEBOOK = "32_thesis_figure5_7"
REPS = {"smoke": 2, "default": 5, "paper": 40}
E2_6_REPS = {"smoke": 2, "default": 40, "paper": 40}  # E2-6 is judged on 40 runs of SRPT at 30 % (issue 10)
SMOKE_N = 256  # the smoke scale's N (default and paper: the text's N, spec A2)
F30 = 0.3  # the share the thesis quotes relays, tree size and subscribers at
METRICS = ["latency", "relays", "tree_size", "srpt_mean_hops", "n_subscribers"]


def thesis() -> pd.Series:
    """The numbers §5.6.2 quotes for Figure 5.7 (``data/expected/003_ch5_figure5_7.csv``)."""
    return claims.table("003_ch5_figure5_7").set_index("key").value


def fractions() -> list[float]:
    """The subscriber shares 0.1 … 1.0, rounded (the values name cached results)."""
    th = thesis()
    return [round(p / 100, 2) for p in range(int(th["subscriber_pct_min"]), int(th["subscriber_pct_max"]) + 1, 10)]


def grid(scale: str, n_nodes: int | None = None) -> tuple[int, dict]:
    """N of the scale (``n_nodes`` overrides it) and the sweep's grid over the shares."""
    n = n_nodes or (SMOKE_N if scale == "smoke" else int(thesis()["n_nodes"]))
    return n, {"n_nodes": [n], "sub_fraction": fractions(), "system": ["vcube_ps", "srpt"]}


def e2_6_point(n_nodes: int) -> dict:
    """Sweep overrides of E2-6's own runs: SRPT at 30 % subscribers (``E2_6_REPS`` of them; the
    first replications are the main sweep's, same points and seeds)."""
    return {"n_nodes": [n_nodes], "sub_fraction": [F30], "system": ["srpt"]}


def expected_tree(n: int, k: int) -> float:
    """E[SRPT tree size] under the model: k subscribers drawn without replacement and a uniform
    root; a node whose sub-tree of the root's binomial tree has 2^j nodes is in the tree iff that
    sub-tree holds a subscriber: 1 + Σ_{j<d} 2^(d−1−j)·(1 − C(N − 2^j, k)/C(N, k))."""
    d = n.bit_length() - 1
    return 1 + sum(2 ** (d - 1 - j) * (1 - stats.hypergeom.pmf(0, n, k, 2 ** j)) for j in range(d))


def by_system(summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary of VCube-PS and of SRPT, each indexed by the share."""
    by = summary.set_index(["system", "sub_fraction"])
    return by.loc["vcube_ps"], by.loc["srpt"]


def table(summary: pd.DataFrame, n_nodes: int) -> pd.DataFrame:
    """Per share: latencies ± 95 % CI, their gap, SRPT relays beside the model's expectation,
    tree size and mean hops."""
    vc, sr = by_system(summary)
    out = pd.DataFrame({
        "subscribers": sr.n_subscribers_mean.astype(int),
        "VCube-PS latency": vc.latency_mean.round(1), "±CI VCube-PS": vc.latency_ci95.round(1),
        "SRPT latency": sr.latency_mean.round(1), "±CI SRPT": sr.latency_ci95.round(1),
        "SRPT − VCube-PS": (sr.latency_mean - vc.latency_mean).round(1),
        "SRPT relays": sr.relays_mean.round(1), "±CI relays": sr.relays_ci95.round(1),
        "relays, expected": [round(expected_tree(n_nodes, int(k)) - k, 1) for k in sr.n_subscribers_mean],
        "SRPT tree": sr.tree_size_mean.round(1), "tree / N": (sr.tree_size_mean / n_nodes).round(3),
        "SRPT mean hops": sr.srpt_mean_hops_mean.round(3),
    }).rename_axis("share f")
    out.index = [f"{100 * f:g} %" for f in out.index]
    return out


def harness(rows: pd.DataFrame) -> dict:
    """Oracle errors, late, missing and blocked deliveries summed over all runs (every run was
    verified before its row was stored: all 0)."""
    return {k: int(v) for k, v in rows[["oracle_errors_strict", "oracle_late", "missing", "blocked_end"]].sum().items()}


def a2() -> dict[int, float]:
    """Ambiguity A2: the model's expected SRPT relays at 30 % for the text's N and the caption's."""
    th = thesis()
    return {n: expected_tree(n, round(F30 * n)) - round(F30 * n)
            for n in (int(th["n_nodes"]), int(th["n_nodes_caption"]))}


def compare(summary: pd.DataFrame, n_nodes: int) -> pd.DataFrame:
    """The thesis's numbers beside ours (relative claims from the means of ``table``), and the
    expected relays at 30 % for both candidate system sizes (A2)."""
    th = thesis()
    vc, sr = by_system(summary)
    lv, ls = vc.latency_mean, sr.latency_mean
    lo, hi = lv.index[0], lv.index[-1]
    exp = a2()
    n_text, n_cap = int(th["n_nodes"]), int(th["n_nodes_caption"])
    return pd.DataFrame([
        ("VCube-PS latency increase 10 % → 100 % (%)", th["vcubeps_latency_increase_sub10_to_sub100"], 100 * (lv[hi] / lv[lo] - 1)),
        ("SRPT latency variation (max − min)/min (%)", th["srpt_latency_variation_max"], 100 * (ls.max() / ls.min() - 1)),
        ("SRPT − VCube-PS at 100 % (u.t.)", th["srpt_minus_vcubeps_latency_sub100"], ls[hi] - lv[hi]),
        ("subscribers at 30 %", th["subscribers_sub30"], sr.n_subscribers_mean.get(F30, np.nan)),
        ("SRPT relays at 30 %", th["srpt_relays_sub30"], sr.relays_mean.get(F30, np.nan)),
        ("SRPT tree / N at 30 % (%)", th["srpt_tree_share_sub30"], 100 * sr.tree_size_mean.get(F30, np.nan) / n_nodes),
        ("SRPT mean path (hops), min..max over the shares", th["srpt_path_hops"],
         f"{sr.srpt_mean_hops_mean.min():.2f}..{sr.srpt_mean_hops_mean.max():.2f}"),
        (f"expected SRPT relays at 30 %, N = {n_text} (text)", th["srpt_relays_sub30"], exp[n_text]),
        (f"expected SRPT relays at 30 %, N = {n_cap} (caption)", th["srpt_relays_sub30"], exp[n_cap]),
    ], columns=["quantity", "thesis", f"ours (N = {n_nodes})"]).set_index("quantity")


def plot(summary: pd.DataFrame, n_nodes: int):
    """(a) latency ± std of both systems with the thesis's relative numbers as text; (b) SRPT
    tree composition with the model's expected relays and the thesis's 30 % numbers; (b') SRPT
    mean path length."""
    th = thesis()
    vc, sr = by_system(summary)
    fr = list(sr.index)
    pct = 100 * np.array(fr)
    lv, ls = vc.latency_mean, sr.latency_mean
    at_text = n_nodes == int(th["n_nodes"])
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    ax = axes[0]
    for part, name, color, marker in ((vc, "VCube-PS", plotting.PALETTE["ours"], "o-"), (sr, "SRPT", "tab:orange", "s-")):
        ax.errorbar(pct, part.latency_mean, yerr=part.latency_std, fmt=marker, color=color, ms=4,
                    capsize=2, label=f"ours, {name}")
    ax.set(xlabel="subscribers (% of N)", ylabel="mean reception latency (u.t.)",
           title=f"(a) latency, N = {n_nodes} (error bars: std over runs)")
    ax.text(0.97, 0.05, f"thesis: VCube-PS +{th['vcubeps_latency_increase_sub10_to_sub100']:g} % from 10 % to 100 %, "
            f"ours +{100 * (lv[fr[-1]] / lv[fr[0]] - 1):.1f} %\nthesis: SRPT varies ≈ {th['srpt_latency_variation_max']:g} %, "
            f"ours {100 * (ls.max() / ls.min() - 1):.1f} %\nthesis: gap at 100 % ≈ {th['srpt_minus_vcubeps_latency_sub100']:g} u.t., "
            f"ours {ls[fr[-1]] - lv[fr[-1]]:.1f}", transform=ax.transAxes, ha="right", va="bottom", fontsize=8,
            bbox=dict(boxstyle="round", fc="white", ec="0.6"))
    ax = axes[1]
    ax.plot(pct, sr.n_subscribers_mean, "o-", color="tab:green", ms=4, label="ours, subscribers")
    ax.errorbar(pct, sr.relays_mean, yerr=sr.relays_std, fmt="s-", color="tab:orange", ms=4, capsize=2, label="ours, relays")
    ax.plot(pct, sr.tree_size_mean, "^-", color=plotting.PALETTE["ours"], ms=4, label="ours, SRPT tree (incl. root)")
    ax.plot(pct, [expected_tree(n_nodes, round(f * n_nodes)) - round(f * n_nodes) for f in fr], "k:",
            lw=1.5, label="expected relays (model)")
    if at_text:
        ax.plot([100 * F30], [th["srpt_relays_sub30"]], "X", ms=11, color=plotting.PALETTE["paper"], label="thesis, 779 relays at 30 %")
        ax.plot([100 * F30], [th["subscribers_sub30"]], "P", ms=11, color="tab:olive", label="thesis, ≈ 1228 subscribers")
        ax.plot([100 * F30], [th["srpt_tree_share_sub30"] / 100 * n_nodes], "D", ms=8, color="tab:brown",
                label="thesis, tree ≈ 50 % of N")
    ax.set(xlabel="subscribers (% of N)", ylabel="nodes", title="(b) SRPT tree composition")
    ax = axes[2]
    ax.errorbar(pct, sr.srpt_mean_hops_mean, yerr=sr.srpt_mean_hops_std, fmt="o-", color=plotting.PALETTE["ours"], ms=4,
                capsize=2, label="ours, SRPT mean hops (incl. delegation)")
    if at_text:
        ax.axhline(th["srpt_path_hops"], color=plotting.PALETTE["paper"], ls="--", label="thesis, around 7 hops")
    ax.set(xlabel="subscribers (% of N)", ylabel="hops", ylim=(0, np.log2(n_nodes) + 1),
           title="(b) SRPT mean path length")
    for ax in axes:
        ax.set_xticks(pct)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _at_text_n(vc: pd.DataFrame, sr: pd.DataFrame, n_nodes: int, relays30: pd.DataFrame) -> dict[str, Measured]:
    """E2-1, E2-3, E2-6, E2-7, E2-9 and the subscribers at 30 %: levels of the text's N."""
    lv, ls = vc.latency_mean, sr.latency_mean
    lo, hi = lv.index[0], lv.index[-1]
    inc, var, hops = lv[hi] / lv[lo] - 1, ls.max() / ls.min() - 1, sr.srpt_mean_hops_mean
    out = {
        "003-F5.7-E2-1": Measured(float(inc), f"{inc:.3f} ({lv[lo]:.1f} → {lv[hi]:.1f} u.t.)"),
        "003-F5.7-E2-3": Measured(float(var), f"{100 * var:.2f} % ({ls.min():.1f}..{ls.max():.1f} u.t.)"),
        "003-F5.7-E2-9": Measured(bool(((hops >= 6.8) & (hops <= 7.2)).all()), f"{hops.min():.3f}..{hops.max():.3f}"),
    }
    if F30 not in sr.index:
        for cid in ("E2-6", "E2-7", "subscribers30"):
            out[f"003-F5.7-{cid}"] = not_run(f"share {F30:g} is not in the sweep")
        return out
    share, n30 = sr.tree_size_mean[F30] / n_nodes, sr.n_subscribers_mean[F30]
    r = relays30.relays
    out["003-F5.7-E2-6"] = Measured(float(r.mean()), f"{r.mean():.1f} ± {sweep.ci95(r):.1f}",
                                    f"{len(r)} runs ({r.min()}-{r.max()}); model expectation {a2()[n_nodes]:.1f}")
    out["003-F5.7-E2-7"] = Measured(float(share), f"{share:.3f}")
    out["003-F5.7-subscribers30"] = Measured(float(n30), f"{n30:.0f} = round(0.3 · {n_nodes})")
    return out


def measure(summary: pd.DataFrame, rows: pd.DataFrame, n_nodes: int, scale: str,
            relays30: pd.DataFrame) -> dict[str, Measured]:
    """Every claim of the notebook (E2-1 … E2-9, the subscribers at 30 %, A2); the levels that
    the thesis quotes at N = 4096 are NOT_RUN when the scale runs another N.  ``relays30``: the
    runs of ``e2_6_point``, on which E2-6 is judged."""
    th = thesis()
    vc, sr = by_system(summary)
    lv, ls = vc.latency_mean, sr.latency_mean
    fr = list(sr.index)
    if n_nodes == int(th["n_nodes"]):
        out = _at_text_n(vc, sr, n_nodes, relays30)
    else:
        why = f"level at N = {int(th['n_nodes'])}; the {scale} scale runs N = {n_nodes}"
        out = {f"003-F5.7-{cid}": not_run(why) for cid in ("E2-1", "E2-3", "E2-6", "E2-7", "subscribers30", "E2-9")}
    fit = stats.linregress(np.log(sr.n_subscribers_mean), lv)
    out["003-F5.7-E2-2"] = Measured(float(fit.rvalue ** 2), f"R² = {fit.rvalue ** 2:.4f} ({fit.slope:.1f} u.t. per e-fold)")
    below = [f"{100 * f:g} %" for f in fr if not ls[f] > lv[f]]
    out["003-F5.7-E2-4"] = Measured(not below, "always" if not below else f"not at {below}")
    gap = ls - lv
    arg = gap.idxmin()
    out["003-F5.7-E2-5"] = Measured(bool(arg == fr[-1] and 90 <= gap[arg] <= 115), f"at {100 * arg:g} %, {gap[arg]:.1f} u.t.")
    full = rows[(rows.system == "srpt") & (rows.sub_fraction == fr[-1])]
    tail = sr.relays_mean[[f for f in fr if f >= 0.4]]
    rising = [f"{100 * a:g} %→{100 * b:g} %" for a, b in zip(tail.index[:-1], tail.index[1:]) if tail[b] > tail[a]]
    out["003-F5.7-E2-8"] = Measured(
        bool((full.relays == 0).all()) and not rising,
        f"100 %: {int(full.relays.max())} at most over {len(full)} runs; "
        + " → ".join(f"{x:.0f}" for x in tail) + (f"; rises {rising}" if rising else ""))
    exp, relays30 = a2(), th["srpt_relays_sub30"]
    n_text, n_cap = int(th["n_nodes"]), int(th["n_nodes_caption"])
    ok_text, ok_cap = (abs(exp[n] / relays30 - 1) <= 0.04 for n in (n_text, n_cap))
    out["003-F5.7-A2"] = Measured(bool(ok_text and not ok_cap),
                                  f"N = {n_text}: {exp[n_text]:.1f}; N = {n_cap}: {exp[n_cap]:.1f}")
    return out


def reading(verdicts: pd.DataFrame, summary: pd.DataFrame, n_nodes: int, relays30: pd.DataFrame) -> str:
    """The closing explanation of the notebook, from this run's verdicts and summary."""
    th = thesis()
    vc, sr = by_system(summary)
    lv, ls = vc.latency_mean, sr.latency_mean
    lo, hi = lv.index[0], lv.index[-1]

    def e2_6(row):
        r = relays30.relays
        return (f"Over {len(r)} runs the relays at 30 % average {r.mean():.1f} (95 % CI ± {sweep.ci95(r):.1f}; runs "
                f"{r.min()}-{r.max()}); the model's exact expectation is {a2()[n_nodes]:.1f}, "
                f"{100 * (a2()[n_nodes] / th['srpt_relays_sub30'] - 1):+.1f} % from the thesis's "
                f"{th['srpt_relays_sub30']:g}.")

    intro = (f"N = {n_nodes}.  VCube-PS {lv[lo]:.1f} u.t. at {100 * lo:g} % and {lv[hi]:.1f} at {100 * hi:g} % subscribers "
             f"(its tree spans only the subscribers, so its depth grows with the logarithm of their number); SRPT "
             f"{ls.min():.1f}-{ls.max():.1f} u.t. whatever the share (it routes on the full tree: a subscriber's depth "
             f"does not depend on how many others there are), {ls[hi] - lv[hi]:.1f} u.t. above VCube-PS at 100 %, "
             f"the publisher → root hop.  E2-9's path length and the 1228 subscribers are computed from the workload "
             f"(popcount of root ⊕ subscriber plus the delegation; round(0.3 · N)), so they are sanity rows.")
    return readings.explain(verdicts, {"003-F5.7-E2-6": e2_6}, intro)
