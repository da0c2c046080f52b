"""Figure 5.8 of seed 003 (§5.6.3): several publishers of one topic, VCube-PS vs SRPT
(notebook ``33_thesis_figure5_8``, experiment ``ps_many``, spec ``vcube_ps.md`` §5.4 E3).

All N nodes subscribe one topic; 25 % or 100 % of them publish one message each at
Uniform[0, 1000].  Panel (a) uses t_pp = 100 u.t., panel (b) t_pp = 1000 u.t.  The figure is an
image in the thesis: only the prose's numbers and statements are checked, mostly through
r(N) = SRPT / VCube-PS, the ratio of the mean latencies at 100 % publishers.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import ticker

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_ps.artifacts import readings

NOTEBOOK = "33_thesis_figure5_8"
REPS = {"smoke": 1, "default": 2, "paper": 10}  # 40 do not fit: see the notebook's introduction
SYSTEMS = ["vcube_ps", "srpt"]
NAMES = {"vcube_ps": "VCube-PS", "srpt": "SRPT"}
ALL_SIZES = [2**k for k in range(3, 13)]  # the thesis's N = 8 .. 4096
HARNESS = ["oracle_errors_strict", "oracle_late", "missing", "blocked_end"]


def thesis() -> pd.Series:
    """The numbers §5.6.3 quotes for Figure 5.8 (``data/expected/003_ch5_figure5_8.csv``)."""
    return claims.table("003_ch5_figure5_8").set_index("key").value


def setting() -> tuple[float, float, float, float]:
    """t_pp of panels (a) and (b), and the low and high publisher shares."""
    th = thesis()
    return (float(th["t_pp_a"]), float(th["t_pp_b"]),
            th["publisher_pct_low"] / 100, th["publisher_pct_high"] / 100)


def grids(experiment, scale: str) -> list[dict]:
    """One sweep override per panel: N per panel and scale (smoke: N = 8 … 64 and 64; default:
    N = 8 … 1024 and 256 … 1024, where SRPT saturates; paper: N = 8 … 4096 for both)."""
    th = thesis()
    assert experiment.param("window").default == th["publication_time_max"]
    t_a, t_b, low, high = setting()
    sizes = {
        "smoke": {t_a: ALL_SIZES[:4], t_b: [64]},
        "default": {t_a: ALL_SIZES[:8], t_b: ALL_SIZES[5:8]},
        "paper": {t_a: ALL_SIZES, t_b: ALL_SIZES},
    }[scale]
    return [{"n_nodes": ns, "pub_fraction": [low, high], "system": SYSTEMS, "tpp_mean": [t_pp]}
            for t_pp, ns in sizes.items()]


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Per point: mean, std and 95 % Student-t CI half-width of the latency over the
    replications, as ``sweep.summarize`` defines them (pandas on the returned rows: the two
    panels are two sweeps, and no Spark session is needed when every run is cached)."""
    latency = rows.groupby(["tpp_mean", "n_nodes", "system", "pub_fraction"]).latency
    return pd.DataFrame({"reps": latency.size(), "latency_mean": latency.mean(), "latency_std": latency.std(ddof=1),
                         "latency_ci95": latency.agg(sweep.ci95)}).reset_index()


def means(summary: pd.DataFrame) -> pd.DataFrame:
    """Mean latency, index (t_pp, N), columns (system, share)."""
    return summary.pivot(index=["tpp_mean", "n_nodes"], columns=["system", "pub_fraction"], values="latency_mean")


def ratio(summary: pd.DataFrame) -> pd.Series:
    """r(N) = SRPT / VCube-PS mean latency at 100 % publishers, index (t_pp, N)."""
    *_, high = setting()
    mean = means(summary)
    return mean[("srpt", high)] / mean[("vcube_ps", high)]


def table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (t_pp, N): mean latency ± 95 % CI per series, SRPT − VCube-PS (E3-1), r (E3-2 … E3-5)
    and per system the 100 % / 25 % ratio (E3-6, E3-7).  Ratios are ratios of the means."""
    *_, low, high = setting()
    mean = means(summary)
    ci = summary.pivot(index=["tpp_mean", "n_nodes"], columns=["system", "pub_fraction"], values="latency_ci95")
    out = pd.DataFrame(index=mean.index)
    for f in (low, high):
        for s in SYSTEMS:
            out[f"{NAMES[s]} {f:.0%}"] = mean[(s, f)].round(1)
            out[f"±CI {NAMES[s]} {f:.0%}"] = ci[(s, f)].round(1)
    for f in (low, high):
        out[f"SRPT − VCube-PS {f:.0%}"] = (mean[("srpt", f)] - mean[("vcube_ps", f)]).round(1)
    out["r = SRPT/VCube-PS 100%"] = ratio(summary).round(3)
    for s in SYSTEMS:
        out[f"{NAMES[s]} 100%/25%"] = (mean[(s, high)] / mean[(s, low)]).round(3)
    return out.rename_axis(["t_pp", "N"])


def harness(rows: pd.DataFrame) -> pd.DataFrame:
    """Oracle, delivery and relay counters summed per system over all runs."""
    return rows.groupby(["system"])[[*HARNESS, "false_positives"]].sum()


def plot(summary: pd.DataFrame):
    """Panels (a) and (b) as in the thesis (log-log latency vs N, error bars: std over the
    replications) and (c) r(N) for both t_pp with the thesis's 2.48 at N = 256."""
    th = thesis()
    t_a, t_b, low, high = setting()
    r = ratio(summary)
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    styles = {("vcube_ps", low): ("o-", "tab:blue"), ("vcube_ps", high): ("s-", "tab:cyan"),
              ("srpt", low): ("^--", "tab:orange"), ("srpt", high): ("v--", "tab:red")}
    for ax, (t_pp, label) in zip(axes[:2], [(t_a, "(a)"), (t_b, "(b)")]):
        part = summary[summary.tpp_mean == t_pp]
        for (s, f), (marker, color) in styles.items():
            line = part[(part.system == s) & (part.pub_fraction == f)].sort_values("n_nodes")
            ax.errorbar(line.n_nodes, line.latency_mean, yerr=line.latency_std.fillna(0), fmt=marker, color=color,
                        ms=5, capsize=3, label=f"{NAMES[s]}, {f:.0%} publishers")
        ax.set(xscale="log", yscale="log", xlabel="nodes N", ylabel="mean reception latency (u.t.)",
               title=f"{label} t_pp = {t_pp:g} u.t. (ratio 1/{t_pp:g})")
        ax.yaxis.set_major_formatter(ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        ns = sorted(part.n_nodes.unique())
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.minorticks_off()
        ax.legend(fontsize=8)
    ax = axes[2]
    for t_pp, marker in [(t_a, "o-"), (t_b, "s--")]:
        rt = r.xs(t_pp, level="tpp_mean")
        ax.plot(rt.index, rt.values, marker, label=f"ours, t_pp = {t_pp:g}")
    ax.plot([256], [th["srpt_over_vcubeps_latency_n256_pub100"]], "x", ms=12, mew=2,
            color=plotting.PALETTE["paper"], label="thesis, N = 256, t_pp = 100")
    ax.axhline(1, color="0.6", lw=0.8)
    ns = sorted(summary.n_nodes.unique())
    ax.set(xscale="log", xlabel="nodes N", ylabel="SRPT / VCube-PS latency", title="(c) r(N) at 100 % publishers")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _missing(have: set, scale: str, *points) -> str:
    """Why a claim is NOT_RUN: the (t_pp, N) points it needs that the scale lacks ('' if none)."""
    absent = [f"N={n}, t_pp={t:g}" for t, n in points if (t, n) not in have]
    return f"{', '.join(absent)} not run at the {scale} scale" if absent else ""


def _ratio_claims(r: pd.Series, have: set, scale: str) -> dict[str, Measured]:
    """E3-2 … E3-5: how r(N) grows with N at t_pp = 100 and compares with t_pp = 1000."""
    t_a, t_b, *_ = setting()
    out = {}
    for n in (64, 128, 256):
        if skip := _missing(have, scale, (t_a, n), (t_a, n // 2)):
            out[f"003-F5.8-E3-2-N{n}"] = not_run(skip)
            continue
        q = r[(t_a, n)] / r[(t_a, n // 2)]
        out[f"003-F5.8-E3-2-N{n}"] = Measured(float(q), f"{q:.3f} (r = {r[(t_a, n // 2)]:.3f} -> {r[(t_a, n)]:.3f})")
    skip = _missing(have, scale, (t_a, 256))
    out["003-F5.8-E3-3"] = not_run(skip) if skip else Measured(float(r[(t_a, 256)]), f"{r[(t_a, 256)]:.3f}")
    for n in (256, 512, 1024):
        if skip := _missing(have, scale, (t_a, n), (t_a, 2 * n)):
            out[f"003-F5.8-E3-4-N{2 * n}"] = not_run(skip)
            continue
        q = r[(t_a, 2 * n)] / r[(t_a, n)]
        out[f"003-F5.8-E3-4-N{2 * n}"] = Measured(float(q), f"{q:.3f}")
    for n in (256, 512, 1024, 2048, 4096):
        if skip := _missing(have, scale, (t_a, n), (t_b, n)):
            out[f"003-F5.8-E3-5-N{n}"] = not_run(skip)
            continue
        out[f"003-F5.8-E3-5-N{n}"] = Measured(bool(r[(t_b, n)] < r[(t_a, n)]),
                                              f"r_b = {r[(t_b, n)]:.3f}, r_a = {r[(t_a, n)]:.3f}")
    return out


def _load_claims(mean: pd.DataFrame, have: set, scale: str) -> dict[str, Measured]:
    """E3-6 and E3-7 at N = 4096, t_pp = 100: growth of each system's latency from 25 % to 100 %
    publishers; when N = 4096 is not run, the reason names the values at the largest N run."""
    t_a, _, low, high = setting()
    largest = max(n for t, n in have if t == t_a)

    def growth(system, n):
        return mean.loc[(t_a, n), (system, high)] / mean.loc[(t_a, n), (system, low)]

    if skip := _missing(have, scale, (t_a, 4096)):
        return {"003-F5.8-E3-6": not_run(f"{skip}; at N = {largest}: VCube-PS {growth('vcube_ps', largest):.3f}, "
                                         f"SRPT {growth('srpt', largest):.3f}"),
                "003-F5.8-E3-7": not_run(f"{skip}; at N = {largest}: {100 * (growth('vcube_ps', largest) - 1):+.1f} %")}
    inc = 100 * (growth("vcube_ps", 4096) - 1)
    return {"003-F5.8-E3-6": Measured(bool(growth("vcube_ps", 4096) < growth("srpt", 4096)),
                                      f"VCube-PS {growth('vcube_ps', 4096):.3f}, SRPT {growth('srpt', 4096):.3f}"),
            "003-F5.8-E3-7": Measured(float(inc), f"{inc:+.1f}")}


def measure(summary: pd.DataFrame, rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    """Every claim of the notebook: the run checks, E3-1 … E3-7; a claim is NOT_RUN when one of
    its points (N, t_pp) is not in the sweep of this scale."""
    t_a, _, low, high = setting()
    mean = means(summary)
    have = set(mean.index)
    counters = harness(rows)
    bad = int(counters[HARNESS].to_numpy().sum())
    out = {"003-F5.8-oracle": Measured(bad, f"{bad} (over {len(rows)} runs)"),
           "003-F5.8-no-relay": Measured(int(counters.loc["vcube_ps", "false_positives"]))}
    for n in (32, 64, 128):
        for f in (low, high):
            cid = f"003-F5.8-E3-1-pub{100 * f:.0f}-N{n}"
            if skip := _missing(have, scale, (t_a, n)):
                out[cid] = not_run(skip)
                continue
            d = mean.loc[(t_a, n), ("srpt", f)] - mean.loc[(t_a, n), ("vcube_ps", f)]
            out[cid] = Measured(float(d), f"{d:.1f}")
    out.update(_ratio_claims(ratio(summary), have, scale))
    out.update(_load_claims(mean, have, scale))
    return out


def reading(verdicts: pd.DataFrame, summary: pd.DataFrame) -> str:
    """The closing explanation of the notebook, from this run's verdicts and means."""
    t_a, t_b, low, high = setting()
    mean, r = means(summary), ratio(summary)
    have = set(mean.index)
    sizes = sorted(n for t, n in have if t == t_a)
    largest = sizes[-1]

    def e3_7(row):
        g = mean.loc[(t_a, largest), ("vcube_ps", high)] / mean.loc[(t_a, largest), ("vcube_ps", low)]
        return (f"At N = {largest} VCube-PS's latency rises {100 * (g - 1):+.1f} % from 25 % to 100 % publishers.  At "
                f"N = 4096 with 100 % publishers every node transmits on average N − 1 = 4,095 PUB copies for "
                f"publications created within 1,000 u.t., at one copy per u.t. (§5.6.1: one copy per destination in the "
                f"sending queue), so its queue holds thousands of copies and the latency cannot stay near +38.8 % "
                f"under the stated model (spec A3: the prototype found +191 %).")

    def e3_4(n):
        def explain(row):
            half, window = n // 2, float(thesis()["publication_time_max"])
            growth = {system: mean.loc[(t_a, n), (system, high)] / mean.loc[(t_a, half), (system, high)]
                      for system in ("srpt", "vcube_ps")}
            return (f"From N = {half} to {n} SRPT's latency grows ×{growth['srpt']:.2f} but VCube-PS's own grows "
                    f"×{growth['vcube_ps']:.2f}: with every node publishing once within {window:,.0f} u.t., a VCube-PS "
                    f"node transmits on average N − 1 = {n - 1:,} PUB copies in that window at one copy per u.t., so "
                    f"beyond N ≈ {window:,.0f} its sending queues back up as the SRPT root's did from N = 256, and the "
                    f"ratio stops doubling.")
        return explain

    why = {"003-F5.8-E3-7": e3_7,
           # the queue explanation holds where VCube-PS's nodes send more copies than the window's u.t.
           **{f"003-F5.8-E3-4-N{n}": e3_4(n) for n in sizes
              if (t_a, n // 2) in have and n - 1 > float(thesis()["publication_time_max"])}}
    intro = ""
    if (t_a, 256) in have and (t_a, 128) in have:
        intro = (f"r(N) = SRPT / VCube-PS at 100 % publishers, t_pp = {t_a:g}: "
                 + ", ".join(f"{n}: {r[(t_a, n)]:.2f}" for n in sizes if n >= 32)
                 + f".  It jumps between N = 128 and 256: the root must send N × log2 N copies for publications spread "
                   f"over 1,000 u.t. (256 × 8 = 2,048 at N = 256, twice what it transmits at one copy per u.t.; "
                   f"896 at N = 128), and from there r doubles with N while VCube-PS's latency grows by one hop per "
                   f"doubling, until VCube-PS's own sending queues fill beyond N ≈ 1,000 (E3-4).  With t_pp = {t_b:g} "
                   f"the root's backlog is the same number of u.t. added to latencies ten times larger (E3-5).  Each publisher publishes once here, so no publication waits behind its "
                   f"publisher's previous one.")
    return readings.explain(verdicts, why, intro)
