"""Figure 5.6 of seed 003 (§5.6.2): one publisher, VCube-PS vs SRPT as N grows
(notebook ``31_thesis_figure5_6``, experiment ``ps_single``, spec ``vcube_ps.md`` §5.2 E1).

Panel (a) is the mean reception latency vs N, panel (b) the number of PUB copies vs N, four
series each (system × subscriber share 25 % / 100 %).  The thesis quotes numbers at N = 4096 and
25 % subscribers only; the other checks are shapes (orderings, log2 N growth, exact counts).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_ps.artifacts import readings

NOTEBOOK = "31_thesis_figure5_6"
SYSTEMS = {"vcube_ps": "VCube-PS", "srpt": "SRPT"}
HARNESS = ["oracle_errors_strict", "oracle_late", "missing", "blocked_end"]


def thesis() -> pd.Series:
    """The numbers §5.6.2 quotes for Figure 5.6 (``data/expected/003_ch5_figure5_6.csv``)."""
    return claims.table("003_ch5_figure5_6").set_index("key").value


def _setting() -> tuple[int, float, float, list[str]]:
    """N_max, the two subscriber shares and the series names (VCube-PS 25 %, SRPT 25 %,
    VCube-PS 100 %, SRPT 100 %)."""
    th = thesis()
    low, high = th["subscriber_pct_low"] / 100, th["subscriber_pct_high"] / 100
    names = [f"{SYSTEMS[s]} {100 * f:g} %" for s, f in
             (("vcube_ps", low), ("srpt", low), ("vcube_ps", high), ("srpt", high))]
    return int(th["setup_n_max"]), low, high, names


def series(summary: pd.DataFrame, metric: str, stat: str = "mean") -> pd.DataFrame:
    """One column per (system, share): the per-point statistic of ``metric``, index N."""
    table = summary.pivot_table(index="n_nodes", columns=["system", "sub_fraction"], values=f"{metric}_{stat}")
    table.columns = [f"{SYSTEMS[s]} {100 * f:g} %" for s, f in table.columns]
    return table


def paired_gap(rows: pd.DataFrame) -> pd.DataFrame:
    """E1-6 diagnostic, per (N, replication) at 100 %: SRPT − VCube-PS latency and whether the
    random SRPT root was the publisher (no delegation then: both systems use the same binomial
    tree shape, gap 0)."""
    _, _, high, _ = _setting()
    full = rows[rows.sub_fraction == high].pivot_table(index=["n_nodes", "rep"], columns="system",
                                                       values=["latency", "publisher_is_root"])
    gap = (full["latency"]["srpt"] - full["latency"]["vcube_ps"]).rename("gap").to_frame()
    gap["root_is_publisher"] = full["publisher_is_root"]["srpt"].astype(bool)
    return gap


def latency_table(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Panel (a): mean latency ± 95 % CI per series beside the thesis's N = 4096 numbers, the
    25 % reduction, the 100 % gap, and how many 100 % runs drew the publisher as SRPT root."""
    th = thesis()
    n_max, _, _, (v25, s25, v100, s100) = _setting()
    lat, ci = series(summary, "latency"), series(summary, "latency", "ci95")
    at_max = pd.Series(np.nan, index=lat.index)
    gap = paired_gap(rows)
    table = pd.DataFrame({
        v25: lat[v25].round(1), f"±CI {v25}": ci[v25].round(1),
        f"thesis {v25}": at_max.where(lat.index != n_max, th["vcubeps_latency_n4096_sub25"]),
        s25: lat[s25].round(1), f"±CI {s25}": ci[s25].round(1),
        f"thesis {s25}": at_max.where(lat.index != n_max, th["srpt_latency_n4096_sub25"]),
        "reduction 25 % (%)": (100 * (1 - lat[v25] / lat[s25])).round(1),
        "thesis reduction (%)": at_max.where(lat.index != n_max, th["latency_reduction_n4096_sub25"]),
        v100: lat[v100].round(1), s100: lat[s100].round(1),
        "SRPT − VCube-PS 100 %": (lat[s100] - lat[v100]).round(1),
    }).rename_axis("N")
    table["100 %: runs with publisher = root"] = gap.groupby("n_nodes").root_is_publisher.sum().astype(int)
    table["100 %: gap, runs with publisher ≠ root"] = gap[~gap.root_is_publisher].groupby("n_nodes").gap.mean().round(1)
    return table


def expected_srpt_copies(n: int, k: int) -> float:
    """E[#PUB] of SRPT-S under the model: the tree holds its root and every node whose sub-tree
    (2^j nodes, 2^(d-1-j) of them) holds one of the k subscribers drawn without replacement;
    |T| - 1 tree copies plus the delegation, sent unless the uniform root is the publisher
    (probability 1/N)."""
    d = n.bit_length() - 1
    tree = 1 + sum(2 ** (d - 1 - j) * (1 - stats.hypergeom.pmf(0, n, k, 2 ** j)) for j in range(d))
    return tree - 1 + (1 - 1 / n)


def pub_ratio(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per N at 25 %: SRPT / VCube-PS ratio of the mean PUB counts, its CI (VCube-PS's count is
    exact, N_s − 1, so all the noise is SRPT's) and the model's exact expectation of the ratio."""
    _, low, _, (v25, s25, _, _) = _setting()
    pub = series(summary, "pub_copies")
    n_sub = rows[rows.sub_fraction == low].groupby("n_nodes").n_subscribers.first()
    return pd.DataFrame({
        "subscribers 25 %": n_sub,
        "ratio": pub[s25] / pub[v25],
        "ci": series(summary, "pub_copies", "ci95")[s25] / pub[v25],
        "expected": pd.Series({n: expected_srpt_copies(n, int(k)) / (k - 1) for n, k in n_sub.items()}),
    })


def pub_table(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Panel (b): mean PUB copies per series, SRPT relays, the ratio and saving at 25 % beside
    the thesis's N = 4096 numbers and the model's expected ratio."""
    th = thesis()
    n_max, _, _, (v25, s25, v100, s100) = _setting()
    pub, relays, r = series(summary, "pub_copies"), series(summary, "relays"), pub_ratio(summary, rows)
    at_max = pd.Series(np.nan, index=pub.index)
    return pd.DataFrame({
        "subscribers 25 %": r["subscribers 25 %"],
        v25: pub[v25].round(1), s25: pub[s25].round(1), "SRPT relays 25 %": relays[s25].round(1),
        "ratio SRPT/VCube-PS 25 %": r.ratio.round(3), "±CI ratio": r.ci.round(3),
        "expected ratio (model)": r.expected.round(3),
        "thesis ratio": at_max.where(pub.index != n_max, th["srpt_over_vcubeps_pub_n4096_sub25"]),
        "saving 1 − 1/ratio (%)": (100 * (1 - 1 / r.ratio)).round(1),
        "thesis saving (at least, %)": at_max.where(pub.index != n_max, th["vcubeps_pub_saving_n4096_sub25"]),
        v100: pub[v100].round(2), s100: pub[s100].round(2),
    }).rename_axis("N")


def exact_counts(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """E1-7 and E1-8 per run: VCube-PS 25 % sends exactly N_s − 1 PUB copies and no relay
    receives one; at 100 % VCube-PS sends N − 1 and SRPT N − 1 + 1[publisher ≠ root]."""
    _, low, high, _ = _setting()
    vc, sr = rows[rows.system == "vcube_ps"], rows[rows.system == "srpt"]
    v25, v100, s100 = vc[vc.sub_fraction == low], vc[vc.sub_fraction == high], sr[sr.sub_fraction == high]
    return {
        "VCube-PS 25 %: #PUB = N_s − 1, no relay": (v25.pub_copies == v25.n_subscribers - 1) & (v25.false_positives == 0),
        "VCube-PS 100 %: #PUB = N − 1": v100.pub_copies == v100.n_nodes - 1,
        "SRPT 100 %: #PUB = N − 1 + 1[publisher ≠ root]":
            s100.pub_copies == s100.n_nodes - 1 + (~s100.publisher_is_root).astype(int),
    }


def run_checks(rows: pd.DataFrame) -> pd.DataFrame:
    """How many runs match each exact count, and the oracle / delivery counters summed over all
    runs (every run was verified before its row was stored: these are 0)."""
    counts = [(name, int(ok.sum()), len(ok)) for name, ok in exact_counts(rows).items()]
    counts += [(f"{col} (sum over all runs)", int(rows[col].sum()), len(rows)) for col in HARNESS]
    return pd.DataFrame(counts, columns=["check", "value", "runs"]).set_index("check")


def plot(summary: pd.DataFrame, rows: pd.DataFrame):
    """(a) latency ± std per series with the thesis's two N = 4096 points; (b) PUB copies per
    series; (b') the 25 % PUB ratio ± 95 % CI with the model's expectation and the thesis's 1.79."""
    th = thesis()
    n_max, low, high, _ = _setting()
    lat, lat_sd, pub, r = (series(summary, "latency"), series(summary, "latency", "std"),
                           series(summary, "pub_copies"), pub_ratio(summary, rows))
    sizes = [int(n) for n in lat.index]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    colors = {"vcube_ps": plotting.PALETTE["ours"], "srpt": "tab:orange"}
    styles = {low: "o-", high: "s--"}
    for (system, frac), _ in summary.groupby(["system", "sub_fraction"]):
        name = f"{SYSTEMS[system]} {100 * frac:g} %"
        axes[0].errorbar(lat.index, lat[name], yerr=lat_sd[name], fmt=styles[frac], color=colors[system],
                         ms=4, capsize=2, label=f"ours, {name}")
        axes[1].plot(pub.index, pub[name], styles[frac], color=colors[system], ms=4, label=f"ours, {name}")
    axes[0].plot([n_max], [th["vcubeps_latency_n4096_sub25"]], "X", ms=11, color=plotting.PALETTE["paper"],
                 label="thesis, VCube-PS 25 % (533)")
    axes[0].plot([n_max], [th["srpt_latency_n4096_sub25"]], "P", ms=11, color="tab:brown",
                 label="thesis, SRPT 25 % (720)")
    axes[0].set(ylabel="mean reception latency (u.t.)", title="(a) latency (error bars: std over runs)")
    axes[1].set(yscale="log", ylabel="PUB copies per publication", title="(b) number of PUB messages")
    axes[2].errorbar(r.index, r.ratio, yerr=r.ci, fmt="o-", color=plotting.PALETTE["ours"], ms=4, capsize=2,
                     label="ours, SRPT / VCube-PS, 25 % (±95 % CI)")
    axes[2].plot(r.index, r.expected, "k:", lw=1.5, label="expected ratio (model)")
    axes[2].plot([n_max], [th["srpt_over_vcubeps_pub_n4096_sub25"]], "X", ms=11, color=plotting.PALETTE["paper"],
                 label="thesis (1.79 at N = 4096)")
    axes[2].set(ylabel="ratio of mean PUB counts", title="(b) ratio of PUB messages SRPT / VCube-PS, 25 %")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(n) for n in sizes], fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("nodes N")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _at_max(lat: pd.DataFrame, ci: pd.DataFrame, r: pd.DataFrame) -> dict[str, Measured]:
    """E1-1, E1-2, E1-3, E1-9 and E1-10: the N = 4096, 25 % numbers."""
    n_max, _, _, (v25, s25, _, _) = _setting()
    ratio = float(r.ratio[n_max])
    return {
        "003-F5.6-E1-1": Measured(float(lat.loc[n_max, v25]), f"{lat.loc[n_max, v25]:.1f} ± {ci.loc[n_max, v25]:.1f}"),
        "003-F5.6-E1-2": Measured(float(lat.loc[n_max, s25]), f"{lat.loc[n_max, s25]:.1f} ± {ci.loc[n_max, s25]:.1f}"),
        "003-F5.6-E1-3": Measured(float(1 - lat.loc[n_max, v25] / lat.loc[n_max, s25]),
                                  f"{1 - lat.loc[n_max, v25] / lat.loc[n_max, s25]:.3f}"),
        "003-F5.6-E1-9": Measured(ratio, f"{ratio:.3f}"),
        "003-F5.6-E1-10": Measured(1 - 1 / ratio, f"{1 - 1 / ratio:.3f}"),
    }


def _log_fit(lat: pd.DataFrame, scale: str) -> dict[str, Measured]:
    """E1-5: R² of latency ~ a + b·log2 N over N ≥ 16, per system at 100 %."""
    _, _, _, (_, _, v100, s100) = _setting()
    fit_sizes = [n for n in lat.index if n >= 16]
    out = {}
    for key, name in (("vcubeps", v100), ("srpt", s100)):
        if len(fit_sizes) < 3:
            out[f"003-F5.6-E1-5-{key}"] = not_run(f"fewer than 3 sizes ≥ 16 at the {scale} scale")
            continue
        fit = stats.linregress(np.log2(fit_sizes), lat.loc[fit_sizes, name])
        out[f"003-F5.6-E1-5-{key}"] = Measured(
            float(fit.rvalue ** 2), f"R² = {fit.rvalue ** 2:.4f} (slope {fit.slope:.1f} u.t. per doubling)")
    return out


def _one_hop(rows: pd.DataFrame, scale: str) -> Measured:
    """E1-6: SRPT − VCube-PS at 100 %, N ≥ 64, over the runs whose publisher is not SRPT's root
    (a run with publisher = root has no delegation hop: gap 0 by construction), within 90–115
    u.t. at every N; the note counts the runs left out."""
    gap = paired_gap(rows)
    gap = gap[gap.index.get_level_values("n_nodes") >= 64]
    if not len(gap):
        return not_run(f"no N ≥ 64 at the {scale} scale")
    kept = gap[~gap.root_is_publisher].groupby("n_nodes").gap.mean()
    left = int(gap.root_is_publisher.sum())
    out = [f"N = {n}: {g:.1f}" for n, g in kept.items() if not 90 <= g <= 115]
    return Measured(not out and len(kept) == gap.index.get_level_values("n_nodes").nunique(),
                    f"{kept.min():.1f}..{kept.max():.1f}" + (f"; outside: {'; '.join(out)}" if out else ""),
                    f"{len(gap) - left} runs with publisher ≠ root; {left} with publisher = root left out "
                    f"(all runs: {gap.groupby('n_nodes').gap.mean().min():.1f}..{gap.groupby('n_nodes').gap.mean().max():.1f})")


def ratio_runs(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (N, replication) at 25 %: SRPT / VCube-PS PUB copies (the same subscribers and
    publisher: paired, spec §5.0)."""
    _, low, _, _ = _setting()
    t = rows[rows.sub_fraction == low].pivot_table(index=["n_nodes", "rep"], columns="system", values="pub_copies")
    return (t["srpt"] / t["vcube_ps"]).rename("ratio").reset_index()


def log_slope(rows: pd.DataFrame, n_min: int = 32):
    """E1-11's fit: the per-run ratio against log2 N for N ≥ ``n_min`` (scipy ``linregress``)."""
    r = ratio_runs(rows)
    r = r[r.n_nodes >= n_min]
    return stats.linregress(np.log2(r.n_nodes), r.ratio), r


def _gap_shrinks(rows: pd.DataFrame, r: pd.DataFrame, scale: str) -> Measured:
    """E1-11: the 25 % PUB ratio decreases with N: its fitted slope against log2 N (N ≥ 32, per
    run) is negative.  Per-doubling changes (≤ 1 %) are below the 95 % CI of a few runs, so
    comparing neighbouring sizes would judge the noise."""
    if (r.index >= 32).sum() < 3:
        return not_run(f"fewer than 3 sizes ≥ 32 at the {scale} scale")
    fit, runs = log_slope(rows)
    half = stats.t.ppf(0.975, len(runs) - 2) * fit.stderr
    trend = r[r.index >= 32]
    expected = np.polyfit(np.log2(trend.index.to_numpy(float)), trend.expected.to_numpy(float), 1)[0]
    return Measured(float(fit.slope), f"{fit.slope:+.4f} ± {half:.4f} per doubling",
                    f"{len(runs)} runs, N = {int(trend.index.min())}..{int(trend.index.max())}; means "
                    + " → ".join(f"{x:.3f}" for x in trend.ratio)
                    + f"; model expectation slope {expected:+.4f} ({trend.expected.iloc[0]:.3f} → {trend.expected.iloc[-1]:.3f})")


def measure(summary: pd.DataFrame, rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    """Every claim of the notebook (E1-1 … E1-11) from the summary and the per-run rows."""
    n_max, low, high, (v25, s25, v100, s100) = _setting()
    lat, ci, r = series(summary, "latency"), series(summary, "latency", "ci95"), pub_ratio(summary, rows)
    sizes = [int(n) for n in lat.index]
    if n_max in lat.index:
        out = _at_max(lat, ci, r)
    else:
        why = f"N = {n_max} is not in the {scale} scale (N = {sizes[0]}..{sizes[-1]})"
        out = {f"003-F5.6-{cid}": not_run(why) for cid in ("E1-1", "E1-2", "E1-3", "E1-9", "E1-10")}
    worse = [(n, f) for n in sizes for f, v, s in ((low, v25, s25), (high, v100, s100))
             if not lat.loc[n, v] < lat.loc[n, s]]
    out["003-F5.6-E1-4"] = Measured(not worse, "always" if not worse else f"not at {worse}")
    out.update(_log_fit(lat, scale))
    out["003-F5.6-E1-6"] = _one_hop(rows, scale)
    exact = list(exact_counts(rows).values())
    out["003-F5.6-E1-7"] = Measured(bool(exact[0].all()), f"{exact[0].sum()} of {len(exact[0])} runs")
    out["003-F5.6-E1-8"] = Measured(bool(exact[1].all() and exact[2].all()),
                                    f"VCube-PS {exact[1].sum()}/{len(exact[1])}, SRPT {exact[2].sum()}/{len(exact[2])} runs")
    out["003-F5.6-E1-11"] = _gap_shrinks(rows, r, scale)
    return out


def reading(verdicts: pd.DataFrame, summary: pd.DataFrame, rows: pd.DataFrame) -> str:
    """The closing explanation of the notebook, from this run's verdicts and runs."""
    th = thesis()
    n_max, _, _, (v25, s25, v100, s100) = _setting()
    lat, pub, r = series(summary, "latency"), series(summary, "pub_copies"), pub_ratio(summary, rows)
    relays = series(summary, "relays")
    gap = paired_gap(rows)
    reps = int(rows.groupby(["n_nodes", "sub_fraction", "system"]).size().min())

    def e1_12(row):
        if n_max not in lat.index:
            return ""
        return (f"At N = {n_max}, 25 %: VCube-PS {lat.loc[n_max, v25]:.1f} u.t. (thesis "
                f"{th['vcubeps_latency_n4096_sub25']:g}), SRPT {lat.loc[n_max, s25]:.1f} (thesis "
                f"{th['srpt_latency_n4096_sub25']:g}); no parameter was tuned (t_send = 1 u.t. per copy, A18).")

    def e1_6(row):
        at_root = gap[gap.root_is_publisher]
        return (f"{len(at_root)} of {len(gap)} runs at 100 % drew the publisher as SRPT's root (gap "
                f"{at_root.gap.mean() if len(at_root) else float('nan'):.1f} u.t.: no delegation hop); the others "
                f"give the gap per N shown.  With publisher ≠ root the gap is t_send + t_pp = 101 u.t. minus a small "
                f"term (the root's latency to the publisher, which SRPT does not count).")

    def e1_11(row):
        fit, runs = log_slope(rows)
        return (f"Fitted over {len(runs)} runs: slope {fit.slope:+.4f} per doubling (p = {fit.pvalue:.2g}); the "
                f"model's exact expectation decreases at every step (table above, 'expected ratio').  With "
                f"{reps} runs per point the per-doubling changes of the means are within their 95 % CIs.")

    why = {"003-F5.6-E1-1": e1_12, "003-F5.6-E1-2": e1_12, "003-F5.6-E1-3": e1_12,
           "003-F5.6-E1-6": e1_6, "003-F5.6-E1-11": e1_11}
    intro = (f"{reps} replications per point.  " + (
        f"At N = {n_max}, 25 %: VCube-PS {lat.loc[n_max, v25]:.1f} u.t., SRPT {lat.loc[n_max, s25]:.1f} u.t.; "
        f"SRPT sends {r.ratio[n_max]:.3f} times VCube-PS's PUB copies ({pub.loc[n_max, s25]:.0f}: a delegation, "
        f"{relays.loc[n_max, s25]:.0f} relays and the subscribers, against exactly N_s − 1 = "
        f"{pub.loc[n_max, v25]:.0f}).  " if n_max in lat.index else "")
        + f"At 100 % both latencies are straight lines in log2 N; E1-7 and E1-8 are exact counts by construction "
          f"(sanity rows).")
    return readings.explain(verdicts, why, intro)
