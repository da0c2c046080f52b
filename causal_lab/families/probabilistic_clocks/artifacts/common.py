"""What the seed-002 notebooks share: the statistics of spec §7, the load-pattern figures
(Figures 6 and 8) and the DCS-against-probabilistic-clock figures (Figures 7 and 9).

Statistics (spec §7): a count of errors is Poisson (Garwood interval); two algorithms run on
the same broadcasts and delays (equal exposure) are compared conditionally on their total,
A ~ Binomial(A + B, 1/2) under equal rates (one-sided exact test), with a Clopper-Pearson
interval of A / (A + B) mapped to the ratio A / B.  Counts of several replications (seeds) are
pooled; their dispersion index (variance / mean) is reported (§7.3).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from causal_lab import plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.probabilistic_clocks import workload

FULL = workload.PATTERN_SECONDS  # 850 s: the paper's runs
PAPER_NODES = 1000
HIGH_LOAD = 100.0  # msg/s: "around the load peaks" (spec §6.2(c))
MIN_ERRORS = 20  # below this, a share or a paired test of error counts is noise: NOT_RUN


# ------------------------------------------------------------------------------------------
# Statistics (spec §7)
# ------------------------------------------------------------------------------------------


def garwood(n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact Poisson interval of a count (spec §7.1)."""
    a = 1 - level
    lo = stats.chi2.ppf(a / 2, 2 * n) / 2 if n > 0 else 0.0
    return float(lo), float(stats.chi2.ppf(1 - a / 2, 2 * n + 2) / 2)


def more_p(a: int, b: int) -> float:
    """One-sided p-value that count a exceeds count b at equal exposure (spec §7.2)."""
    return float(stats.binomtest(int(a), int(a + b), 0.5, alternative="greater").pvalue) if a + b else 1.0


def share_p(k: int, n: int, p0: float) -> float:
    """One-sided p-value that k of n events exceed the share p0 (amendment 6)."""
    return float(stats.binomtest(int(k), int(n), p0, alternative="greater").pvalue) if n else 1.0


def ratio_ci(a: int, b: int) -> tuple[float, float]:
    """95 % interval of a / b from the Clopper-Pearson interval of a / (a + b)."""
    if a + b == 0:
        return float("nan"), float("nan")
    ci = stats.binomtest(int(a), int(a + b)).proportion_ci(method="exact")
    lo = ci.low / (1 - ci.low) if ci.low < 1 else float("inf")
    hi = ci.high / (1 - ci.high) if ci.high < 1 else float("inf")
    return float(lo), float(hi)


def dispersion(counts) -> float:
    counts = np.asarray(counts, float)
    return float(counts.var(ddof=1) / counts.mean()) if len(counts) > 1 and counts.mean() > 0 else float("nan")


def series(rows: pd.DataFrame, column: str, how: str = "mean") -> np.ndarray:
    """A per-second list column over replications: their mean (or sum)."""
    stacked = np.array([np.asarray(v, float) for v in rows[column]])
    return stacked.mean(axis=0) if how == "mean" else stacked.sum(axis=0)


def load_at_seconds(pattern: str, seconds: int) -> np.ndarray:
    """λ at the middle of every whole second."""
    return workload.pattern(pattern).rate(np.arange(seconds) + 0.5)


# ------------------------------------------------------------------------------------------
# Figures 6 and 8: the load patterns
# ------------------------------------------------------------------------------------------


def load_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per pattern and send model: broadcasts (mean over replications), the pattern's mean load,
    its range and the share of time at high load."""
    out = rows.groupby(["pattern", "send_model"]).agg(
        broadcasts=("broadcasts", "mean"), mean_load=("mean_load", "first"),
        min_load=("min_load", "first"), max_load=("max_load", "first"),
        time_at_high_load=("high_load_share", "first"),
        broadcasts_at_high_load=("broadcasts_high_load", "mean"))
    out["broadcasts_at_high_load"] /= out["broadcasts"]
    return out.round(3)


def rolling_rate(per_second, window: int = 10) -> np.ndarray:
    """Broadcasts per second averaged over ``window`` seconds (centred)."""
    return pd.Series(np.asarray(per_second, float)).rolling(window, center=True, min_periods=window).mean().to_numpy()


def plot_load(rows: pd.DataFrame, patterns: tuple[str, str], title: str):
    """The paper's load figure: λ(t) (line) and the broadcasts of every second (points) for the
    spec's pattern, and beside it the authors' pattern with the deterministic send model."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 4), sharey=True)
    for ax, pattern, model in zip(axes, patterns, ("poisson_rr", "deterministic_rr")):
        row = rows[(rows.pattern == pattern) & (rows.send_model == model)].iloc[0]
        t = np.arange(len(row.target_s)) + 0.5
        ax.plot(t, row.broadcasts_s, ".", ms=2, color="0.6", label=f"broadcasts per 1-s bin ({model})")
        ax.plot(t, row.target_s, "-", color=plotting.PALETTE["ours"], label="target load λ(t)")
        ax.set(xlabel="time (s)", title=f"{title}: {pattern}")
        ax.legend(fontsize=8, loc="upper right")
    axes[0].set_ylabel("messages broadcast per second")
    fig.tight_layout()
    return fig


def measure_load(rows: pd.DataFrame, pattern: str, prefix: str, vectors: dict) -> dict[str, Measured]:
    """The claims shared by Figures 6 and 8: the reconstruction's test vectors (spec §6.2/§6.3)
    and the range of the realised load."""
    rr = rows[(rows.pattern == pattern) & (rows.send_model == "poisson_rr")]
    out = {f"{prefix}-mean": Measured(float(rr.mean_load.iloc[0]), f"{rr.mean_load.iloc[0]:.3f} msg/s"),
           f"{prefix}-broadcasts": Measured(float(rr.broadcasts.mean()), f"{rr.broadcasts.mean():.0f} "
                                            f"(mean of {len(rr)} seed{'s' * (len(rr) > 1)})")}
    smooth = np.array([rolling_rate(v) for v in rr.broadcasts_s])
    low, high = np.nanmin(smooth, axis=1).mean(), np.nanmax(smooth, axis=1).mean()
    out[f"{prefix}-low"] = Measured(float(low), f"{low:.1f} msg/s (10-s average)")
    out[f"{prefix}-high"] = Measured(float(high), f"{high:.1f} msg/s (10-s average)")
    resid = [np.asarray(v, float) - np.asarray(t) for v, t in zip(rr.broadcasts_s, rr.target_s)]
    index = float(np.mean([r.var() / np.mean(t) for r, t in zip(resid, rr.target_s)]))
    out[f"{prefix}-poisson"] = Measured(index, f"{index:.2f}", "variance of (count - λ) over mean λ")
    for key, value in vectors.items():
        out[f"{prefix}-{key}"] = Measured(float(value), f"{value:.3f}")
    return out


# ------------------------------------------------------------------------------------------
# Figures 7 and 9: DCS (R1) against probabilistic clocks of its average size (R2) and of the
# paper's size (R3), on the same broadcasts and delays
# ------------------------------------------------------------------------------------------

SIZE_DEFINITIONS = {"size_time_mean": "time average of the per-second mean over processes",
                    "size_time_max": "time average of the per-second max over processes",
                    "size_message_mean": "mean entries attached per message"}


def paired_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per pattern and variant, pooled over replications: the DCS's average size (three
    definitions, amendment 2), the errors of R1, R2, R3 with Garwood intervals, R2/R1 with its
    interval and the one-sided p-value that R2 makes more errors than R1."""
    out = []
    for (pattern, variant), g in rows.groupby(["pattern", "variant"], sort=False):
        r = {"pattern": pattern, "variant": variant, "seeds": len(g),
             **{k: round(g[k].mean(), 1) for k in SIZE_DEFINITIONS}, "size max": int(g.size_max.max()),
             "PC size": int(round(g.pc_size.mean()))}
        for run in ("dcs", "pc", "ref"):
            if run == "ref" and not (g.ref_size > 0).all():
                continue
            n = int(g[f"{run}_errors"].sum())
            lo, hi = garwood(n)
            r[f"{run} errors"] = n
            r[f"{run} 95% CI"] = f"{lo:.0f}..{hi:.0f}"
        a, b = r["pc errors"], r["dcs errors"]
        lo, hi = ratio_ci(a, b)
        r["PC/DCS"] = round(a / b, 2) if b else float("inf")
        r["PC/DCS 95% CI"] = f"{lo:.2f}..{hi:.2f}"
        r["p (PC > DCS)"] = more_p(a, b)
        r["rounds ok/started"] = f"{int(g.deact_ok.sum())}/{int(g.deact_rounds.sum())}"
        out.append(r)
    return pd.DataFrame(out).set_index(["pattern", "variant"])


def plot_dcs(rows: pd.DataFrame, pattern: str, title: str):
    """The paper's size figure (active entries of the processes' DCS over time, with the
    attached size of the messages) and, below, the out-of-order deliveries per second of DCS
    and of the probabilistic clock of its average size, over the load."""
    spec = rows[(rows.pattern == pattern) & (rows.variant == "spec")]
    seconds = len(spec.size_mean_s.iloc[0])
    t = np.arange(seconds)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    top.fill_between(t, series(spec, "size_min_s"), series(spec, "size_max_s"), color="0.85",
                     label="min..max over processes")
    top.plot(t, series(spec, "size_mean_s"), color=plotting.PALETTE["ours"], label="mean active entries")
    top.plot(t, series(spec, "attached_s"), color="tab:green", lw=0.8, label="mean entries attached to messages")
    a = spec.size_time_mean.mean()
    top.axhline(a, ls="--", color="0.3", lw=0.8)
    top.annotate(f"A = {a:.0f} entries (paper: {PAPER_SIZE_OF[pattern]})", (t[-1], a), ha="right",
                 va="bottom", fontsize=9)
    top.set(ylabel="DCS clock size (entries)", title=f"{title} (N = {spec.n_nodes.iloc[0]}, k = {spec.k.iloc[0]})")
    top.legend(fontsize=8, loc="upper left")
    lam = load_at_seconds(pattern, seconds)
    bottom.plot(t, series(spec, "pc_errors_s", "sum"), "x", ms=4, color=plotting.PALETTE["paper"],
                label=f"probabilistic clock of {int(spec.pc_size.mean())} entries")
    bottom.plot(t, series(spec, "dcs_errors_s", "sum"), "o", ms=3, color=plotting.PALETTE["ours"], label="DCS")
    bottom.set(xlabel="time (s)", ylabel=f"out-of-order deliveries per s\n({len(spec)} seed(s) summed)")
    bottom.legend(fontsize=8, loc="upper left")
    twin = bottom.twinx()
    twin.plot(t, lam, color="0.6", lw=0.8)
    twin.set_ylabel("load λ(t) (msg/s)", color="0.4")
    twin.grid(False)
    fig.tight_layout()
    return fig


PAPER_SIZE_OF = {"bell": 260, "random": 97, "bell_authors": 260, "random_authors": 97}


def _full(g: pd.DataFrame) -> str:
    """Why a claim about the paper's whole run cannot be judged on these rows ('' if it can)."""
    if (g.duration < FULL).any():
        return f"only the first {g.duration.min():.0f} s of the pattern at this scale"
    if (g.n_nodes != PAPER_NODES).any():
        return f"N = {g.n_nodes.iloc[0]} at this scale (paper: {PAPER_NODES})"
    return ""


def paired_ratio(pc: int, dcs: int) -> Measured:
    """PC errors / DCS errors of one paired run, with the one-sided p-value; NOT_RUN below
    ``MIN_ERRORS`` errors in the pair."""
    if pc + dcs < MIN_ERRORS:
        return not_run(f"only {pc + dcs} errors in the pair (< {MIN_ERRORS})")
    ratio = pc / dcs if dcs else float("inf")
    return Measured(ratio, f"{ratio:.2f} ({pc} vs {dcs}, p = {more_p(pc, dcs):.2g})")


def measure_dcs(rows: pd.DataFrame, pattern: str, prefix: str, paper: dict) -> dict[str, Measured]:
    """The claims Figures 7 and 9 share (spec §6.2 / §6.3 (a)-(c), (e), amendments 2, 6).

    ``paper``: the published average size, DCS and PC errors, and the R2/R1 bound of the spec."""
    out: dict[str, Measured] = {}
    g = rows[(rows.pattern == pattern) & (rows.variant == "spec")]
    seconds = len(g.size_mean_s.iloc[0])
    lam = load_at_seconds(pattern, seconds)
    for key, what in SIZE_DEFINITIONS.items():
        value = float(g[key].mean())
        out[f"{prefix}-{key.replace('_', '-')}"] = Measured(value, f"{value:.1f} entries", what)
    dcs, pc = int(g.dcs_errors.sum()), int(g.pc_errors.sum())
    ref = int(g.ref_errors.sum()) if "ref_errors" in g else 0
    few = f"only {pc + dcs} errors in the pair (< {MIN_ERRORS})" if pc + dcs < MIN_ERRORS else ""
    lo, hi = ratio_ci(pc, dcs)
    ratio = pc / dcs if dcs else float("inf")
    out[f"{prefix}-pc-more"] = not_run(few) if few else Measured(more_p(pc, dcs), f"p = {more_p(pc, dcs):.2g} ({pc} vs {dcs})")
    out[f"{prefix}-ratio"] = not_run(few) if few else Measured(ratio, f"{ratio:.2f} (95 % CI {lo:.2f}..{hi:.2f})")
    out[f"{prefix}-ratio-level"] = not_run(few) if few else Measured(ratio, f"{ratio:.2f}")
    if not (g.ref_size > 0).all():
        out[f"{prefix}-ref-more"] = not_run("R3 (the paper's clock size) runs at the paper scale")
    elif ref + dcs < MIN_ERRORS:
        out[f"{prefix}-ref-more"] = not_run(f"only {ref + dcs} errors in the pair (< {MIN_ERRORS})")
    else:
        out[f"{prefix}-ref-more"] = Measured(more_p(ref, dcs), f"p = {more_p(ref, dcs):.2g} ({ref} errors with "
                                             f"{int(g.ref_size.iloc[0])} entries vs {dcs})")
    why = _full(g)
    for run, published in (("dcs", paper["dcs"]), ("pc", paper["pc"])):
        n = int(g[f"{run}_errors"].mean())
        out[f"{prefix}-{run}-level"] = (not_run(why) if why else
                                        Measured(n, f"{n} (x{n / published:.1f} the paper's)"))
    high = lam >= HIGH_LOAD
    pc_high = series(g, "pc_errors_s", "sum")[high].sum()
    out[f"{prefix}-pc-peaks"] = (Measured(pc_high / pc, f"{100 * pc_high / pc:.0f} % of {pc}") if pc >= MIN_ERRORS else
                                 not_run(f"only {pc} errors (< {MIN_ERRORS})"))
    dcs_high = int(series(g, "dcs_errors_s", "sum")[high].sum())
    b = series(g, "broadcasts_s", "sum")
    share = b[high].sum() / b.sum()
    out[f"{prefix}-dcs-peaks"] = (
        Measured(share_p(dcs_high, dcs, share), f"p = {share_p(dcs_high, dcs, share):.2g}: "
                 f"{100 * dcs_high / dcs:.0f} % of errors vs {100 * share:.0f} % of broadcasts")
        if dcs >= MIN_ERRORS else not_run(f"only {dcs} errors (< {MIN_ERRORS})"))
    out[f"{prefix}-dispersion"] = (Measured(dispersion(g.dcs_errors), f"{dispersion(g.dcs_errors):.1f}")
                                   if len(g) > 1 else not_run("one seed at this scale"))
    for variant in ("authors_policy", "deterministic_rr", "poisson_indep"):
        v = rows[(rows.pattern == pattern) & (rows.variant == variant)]
        key = f"{prefix}-{variant.replace('_', '-')}"
        if v.empty:
            out[f"{key}-size"] = out[f"{key}-ratio"] = not_run(f"variant {variant} runs at the paper scale")
            continue
        sizes = " / ".join(f"{v[k].mean():.0f}" for k in SIZE_DEFINITIONS)
        out[f"{key}-size"] = Measured(float(v.size_time_mean.mean()), f"{sizes} (mean / max / message-weighted)")
        out[f"{key}-ratio"] = paired_ratio(int(v.pc_errors.sum()), int(v.dcs_errors.sum()))
    bad = int(rows[[f"{r}_deliveries" for r in ("dcs", "pc")]].sum().sum())
    expected = int((rows.broadcasts * rows.n_nodes).sum() * 2)
    out[f"{prefix}-termination"] = Measured(bad == expected, f"{bad} deliveries of {expected} owed, in "
                                            f"{len(rows)} replications")
    return out


def explain_deviations(verdicts: pd.DataFrame) -> list[str]:
    """One line per paper claim that deviates and per report row outside its band."""
    lines = []
    for _, row in verdicts.iterrows():
        if row.verdict == "DEVIATES" or (row.verdict == "REPORT" and row.note.startswith("outside")):
            lines.append(f"{row.verdict} {row['id']}: ours {row.ours} (paper {row.paper}, {row.tolerance}).")
    return lines or ["No paper claim deviates and every report row is inside its band at this scale."]


def explain_dcs(verdicts: pd.DataFrame, rows: pd.DataFrame, paper: dict, pattern: str) -> str:
    """The run's numbers beside the paper's, where the errors happened (below and above
    ``HIGH_LOAD``), then every deviation."""
    s = paired_table(rows[rows.pattern == pattern]).loc[(pattern, "spec")]
    g = rows[(rows.pattern == pattern) & (rows.variant == "spec")]
    high = load_at_seconds(pattern, len(g.size_mean_s.iloc[0])) >= HIGH_LOAD
    b = series(g, "broadcasts_s", "sum")
    dcs, pc = series(g, "dcs_errors_s", "sum"), series(g, "pc_errors_s", "sum")
    size = series(g, "size_mean_s")
    lines = [f"DCS: {s['size_time_mean']:.0f} active entries on average (paper {paper['size']:g}), "
             f"{s['dcs errors']} out-of-order deliveries against {s['pc errors']} for a probabilistic clock "
             f"of {s['PC size']} entries: ratio {s['PC/DCS']:.2f} (95 % CI {s['PC/DCS 95% CI']}; paper "
             f"{paper['pc'] / paper['dcs']:.2f} = {paper['pc']:g} / {paper['dcs']:g}), over {s['seeds']} seed(s).",
             f"Below {HIGH_LOAD:g} msg/s ({100 * b[~high].sum() / b.sum():.0f} % of the broadcasts) the DCS holds "
             f"{size[~high].mean():.0f} entries on average and errs {dcs[~high].sum():.0f} times, the probabilistic "
             f"clock {pc[~high].sum():.0f} times; at {HIGH_LOAD:g} msg/s and above the DCS holds "
             f"{size[high].mean() if high.any() else float('nan'):.0f} entries: {dcs[high].sum():.0f} against "
             f"{pc[high].sum():.0f} errors."]
    return "\n".join(lines + explain_deviations(verdicts))
