"""Figure 5.12 of seed 003 (§5.6.7): broker-based SRPT against SRPT-S and VCube-PS, N = 4096
(notebook ``38_thesis_figure5_12``).

Experiment ``ps_brokers``: the five systems of a replication share the publication instants
(``system`` is a variant parameter), so every ordering claim is judged on paired runs.  Two
publication schedules (``schedule``, also a variant): ``periodic``, the reading of the spec's A16
amendment (each of the 128 publishers publishes once, at a random phase of a 500 u.t. period),
and ``poisson``, the spec body's Poisson publishers under a global cap, kept as a sensitivity
option.  This module shapes the latency table, rebuilds the publication schedules to show the
wait in VCube-PS publishers' queues (A4:34), tabulates the paired differences, draws the figure,
measures the E8 claims (spec ``vcube_ps.md`` §5.9) and writes the closing explanation.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_ps import workload
from causal_lab.families.vcube_ps.artifacts import readings

NOTEBOOK = "38_thesis_figure5_12"
REPS = {"smoke": 1, "default": 3, "paper": 10}
P_CHECK = 128  # spec A16: the publishers of the checked configuration (the text does not say)
P_SENSITIVITY = (32, 48, 64)  # the paper scale's other P values (A16 sensitivity rows)
SCHEDULE, SENSITIVITY = "periodic", "poisson"  # the checked schedule (A16 amendment), today's option
E8_5_BAND = (0.10, 0.60)  # spec E8-5: accept 1 − VCube-PS/SRPT-B(256) in this band
GAP = "median gap to the publisher's previous one (u.t.)"  # a column of publisher_waits
HARNESS = ["oracle_errors_strict", "oracle_late", "missing", "blocked_end", "false_positives"]


def published() -> pd.Series:
    """The configuration and the 22 % gain §5.6.7 quotes (``003_ch5_figure5_12.csv``)."""
    return claims.table("003_ch5_figure5_12").set_index("key").value


def brokers() -> list[int]:
    """SRPT-B's three broker counts (32, 256, 2048)."""
    t = published()
    return [int(t[f"brokers_{i}"]) for i in (1, 2, 3)]


def names() -> dict[str, str]:
    """System column value -> label of the thesis."""
    return {"vcube_ps": "VCube-PS", "srpt": "SRPT-S", **{f"srpt_b{b}": f"SRPT-B({b})" for b in brokers()}}


def order(rows: pd.DataFrame) -> list[str]:
    """The systems the runs have, in the figure's order (SRPT-S, SRPT-B by brokers, VCube-PS)."""
    return [s for s in ("srpt", *(f"srpt_b{b}" for b in brokers()), "vcube_ps") if s in set(rows.system)]


def sensitivity_point() -> dict:
    """Sweep overrides of the Poisson-schedule sensitivity run: the five systems at P = 128."""
    return {"system": list(names()), "publishers": [P_CHECK], "schedule": [SENSITIVITY]}


def table(summary: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per (schedule, P, system): latency ± 95 % CI, Tree and B-S for SRPT-B, VCube-PS from start."""
    systems = order(rows)
    keys = sorted({(s, int(p)) for s, p in zip(rows.schedule, rows.publishers)}, key=lambda k: (k[0] != SCHEDULE, k[1]))
    out = summary.set_index(["schedule", "publishers", "system"]).loc[
        :, ["latency_mean", "latency_ci95", "tree_latency_mean", "bs_latency_mean", "latency_from_start_mean"]]
    out = out.rename(columns={"latency_mean": "latency", "latency_ci95": "±CI", "tree_latency_mean": "Tree",
                              "bs_latency_mean": "B-S", "latency_from_start_mean": "VCube-PS from start"})
    system = out.index.get_level_values("system")
    out.loc[system != "vcube_ps", "VCube-PS from start"] = np.nan
    out.loc[~system.str.startswith("srpt_b"), ["Tree", "B-S"]] = np.nan
    out = out.reindex(pd.MultiIndex.from_tuples([(s, p, x) for s, p in keys for x in systems],
                                                names=["schedule", "publishers", "system"])).round(1)
    label = names()
    out.index = pd.MultiIndex.from_tuples([(s, p, label[x]) for s, p, x in out.index], names=["schedule", "P", "system"])
    return out


def harness(rows: pd.DataFrame) -> pd.Series:
    """VCube-PS and SRPT-S runs: oracle errors, late, missing, blocked deliveries and relays
    (SRPT-B runs are checked by their own ``verify``, which raises)."""
    return rows[rows.system.isin(["vcube_ps", "srpt"])][HARNESS].sum().astype(int)


def publisher_waits(tasks, rows: pd.DataFrame, experiment, seed: int) -> pd.DataFrame:
    """Per (schedule, P), mean over the VCube-PS replications: how many publications repeat a
    publisher, the gap to its previous one, and the wait per reception (latency − latency from
    start).  The schedule is rebuilt from the run's own seed and streams
    (``workload.publication_schedule``), so it is the one the run used."""
    out = []
    for t in tasks:
        if t.point["system"] != "vcube_ps":
            continue
        times, who = workload.publication_schedule(sweep.task_seed(seed, experiment, t.point, t.rep),
                                                   np.arange(t.point["n_nodes"]), t.point["publishers"],
                                                   t.point["messages"], t.point["mean_interval"], t.point["schedule"])
        seen, gaps = {}, []
        for time_, node in zip(times, who):
            if node in seen:
                gaps.append(time_ - seen[node])
            seen[node] = time_
        r = rows[(rows.system == "vcube_ps") & (rows.publishers == t.point["publishers"])
                 & (rows.schedule == t.point["schedule"]) & (rows.rep == t.rep)].iloc[0]
        out.append({"schedule": t.point["schedule"], "P": t.point["publishers"],
                    "publishers that published": len(seen),
                    "repeat publications (%)": 100 * len(gaps) / len(times),
                    GAP: np.median(gaps) if gaps else np.nan,
                    "span of the publications (u.t.)": times[-1] - times[0],
                    "latency": r.latency, "from start": r.latency_from_start,
                    "wait per reception": r.latency - r.latency_from_start, "latency_max": r.latency_max})
    return pd.DataFrame(out).groupby(["schedule", "P"]).mean()


def _present(rows: pd.DataFrame, p: int, *systems: str, schedule: str = SCHEDULE) -> bool:
    return all(s in set(rows[(rows.publishers == p) & (rows.schedule == schedule)].system) for s in systems)


def _paired(rows: pd.DataFrame, p: int, a: str, b: str, metric_a="latency", metric_b="latency",
            schedule: str = SCHEDULE) -> pd.Series:
    """Per-replication metric_a(a) − metric_b(b) at P = p (same publication instants)."""
    one = rows[(rows.publishers == p) & (rows.schedule == schedule)].set_index(["system", "rep"])
    return one.loc[a, metric_a] - one.loc[b, metric_b]


def paired_table(rows: pd.DataFrame) -> pd.DataFrame | None:
    """The paired differences behind the checks at P = 128 (both schedules when run), with the
    95 % CI half-width projected to the paper scale's 10 replications (None: the scale lacks
    the five systems)."""
    label = names()
    b32, b256, b2048 = (f"srpt_b{b}" for b in brokers())
    if not _present(rows, P_CHECK, b32, b256, b2048, "srpt", "vcube_ps"):
        return None
    out = []
    checks = [
        (f"Tree {label[b256]} − Tree {label[b32]}", b256, b32, "tree_latency", "tree_latency", SCHEDULE),
        (f"Tree {label[b2048]} − Tree {label[b256]}", b2048, b256, "tree_latency", "tree_latency", SCHEDULE),
        (f"B-S {label[b32]} − B-S {label[b256]}", b32, b256, "bs_latency", "bs_latency", SCHEDULE),
        (f"B-S {label[b256]} − B-S {label[b2048]}", b256, b2048, "bs_latency", "bs_latency", SCHEDULE),
        (f"SRPT-S − {label[b2048]}", "srpt", b2048, "latency", "latency", SCHEDULE),
        (f"{label[b2048]} − VCube-PS", b2048, "vcube_ps", "latency", "latency", SCHEDULE),
        (f"{label[b256]} − VCube-PS", b256, "vcube_ps", "latency", "latency", SCHEDULE),
        ("SRPT-S − VCube-PS", "srpt", "vcube_ps", "latency", "latency", SCHEDULE),
    ]
    if _present(rows, P_CHECK, b256, "vcube_ps", schedule=SENSITIVITY):
        checks += [(f"{label[b256]} − VCube-PS ({SENSITIVITY})", b256, "vcube_ps", "latency", "latency", SENSITIVITY),
                   (f"{label[b256]} − VCube-PS from start ({SENSITIVITY})", b256, "vcube_ps", "latency",
                    "latency_from_start", SENSITIVITY)]
    for what, a, b, ma, mb, schedule in checks:
        d = _paired(rows, P_CHECK, a, b, ma, mb, schedule)
        sd = d.std(ddof=1) if len(d) > 1 else np.nan
        out.append({f"difference (P = {P_CHECK})": what, "mean": d.mean(), "min over runs": d.min(), "std": sd,
                    f"95 % CI ({len(d)} runs)": sweep.ci95(d) if len(d) > 1 else np.nan,
                    "projected 95 % CI, 10 runs": float(sweep.ci95_half_width(sd, 10))})
    return pd.DataFrame(out).set_index(f"difference (P = {P_CHECK})")


def _bars(ax, m: pd.DataFrame, systems: list[str], cap: float | None) -> None:
    """One panel's bars: SRPT-B stacked Tree + B-S, SRPT-S plain, VCube-PS split into the
    propagation and the wait in the publisher's queue; bars above ``cap`` get their value."""
    positions = {s: k for k, s in enumerate(systems)}
    first_b = positions[systems[1]]
    for s in systems:
        x = positions[s]
        if s.startswith("srpt_b"):
            ax.bar(x, m.tree_latency_mean[s], color=plotting.PALETTE["ours"], label="Tree" if x == first_b else None)
            ax.bar(x, m.bs_latency_mean[s], bottom=m.tree_latency_mean[s], color="tab:orange",
                   label="B-S" if x == first_b else None)
        elif s == "srpt":
            ax.bar(x, m.latency_mean[s], color="tab:gray", label="SRPT-S")
        else:
            start = m.latency_from_start_mean[s]
            ax.bar(x, start, color="tab:green", label="VCube-PS, from start of propagation")
            if m.latency_mean[s] - start > 0.5:
                ax.bar(x, m.latency_mean[s] - start, bottom=start, color="tab:green", alpha=0.35, hatch="//",
                       label="VCube-PS, wait in the publisher's queue")
        if cap is not None and m.latency_mean[s] > cap:
            ax.text(x, 0.97 * cap, f"{m.latency_mean[s]:.0f} ↑\n(Tree {m.tree_latency_mean[s]:.0f}\n"
                    f"+ B-S {m.bs_latency_mean[s]:.0f})", ha="center", va="top", fontsize=8,
                    bbox=dict(boxstyle="round", fc="white", ec="0.6"))
            continue
        ax.errorbar(x, m.latency_mean[s], yerr=m.latency_std[s], color="k", capsize=3, lw=1)
        ax.text(x + 0.05, m.latency_mean[s] + m.latency_std.fillna(0)[s], f"{m.latency_mean[s]:.0f}", ha="left",
                va="bottom", fontsize=8)


def plot(summary: pd.DataFrame, rows: pd.DataFrame):
    """Figure 5.12, one panel per (schedule, P), with the VCube-PS latency the thesis's 22 %
    implies."""
    gain = published()["vcubeps_gain_vs_srptb256"]
    b256 = f"srpt_b{brokers()[1]}"
    systems, label = order(rows), names()
    keys = sorted({(s, int(p)) for s, p in zip(rows.schedule, rows.publishers)}, key=lambda k: (k[0] != SCHEDULE, k[1]))
    mean = summary.set_index(["schedule", "publishers", "system"])
    fig, axes = plt.subplots(1, len(keys), figsize=(6.2 * len(keys), 4.8), squeeze=False)
    for ax, (schedule, p) in zip(axes[0], keys):
        m = mean.loc[(schedule, p)]
        here = [s for s in systems if s in m.index]
        totals = (m.latency_mean + m.latency_std.fillna(0))[here].sort_values()
        # one bar (SRPT-B(32)'s broker contention) can dwarf the others: clip the axis and write its value
        cap = 1.3 * totals.iloc[-2] if len(totals) > 1 and totals.iloc[-1] > 2.5 * totals.iloc[-2] else None
        _bars(ax, m, here, cap)
        if b256 in m.index:
            ax.axhline((1 - gain / 100) * m.latency_mean[b256], color=plotting.PALETTE["paper"], ls="--", lw=1,
                       label=f"thesis: VCube-PS {gain:g} % below our {label[b256]}")
        if cap is not None:
            ax.set_ylim(0, cap)
        ax.set_xticks(range(len(here)), [label[s] for s in here], fontsize=9)
        ax.set(ylabel="mean reception latency (u.t.)",
               title=f"N = {int(rows.n_nodes.iloc[0])}, P = {p}, {schedule} (error bars: std of the total)")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)
    fig.tight_layout()
    return fig


def _e8(rows: pd.DataFrame, m: pd.DataFrame, schedule: str = SCHEDULE, tag: str = "") -> dict[str, Measured]:
    """E8-1 … E8-6 at P = 128 from the summary means ``m`` (one row per system) of ``schedule``;
    ``tag`` suffixes the ids (the sensitivity schedule has only E8-4 and E8-5)."""
    label, (b32, b256, b2048) = names(), (f"srpt_b{b}" for b in brokers())
    tree, bs, lat = m.tree_latency_mean[[b32, b256, b2048]], m.bs_latency_mean[[b32, b256, b2048]], m.latency_mean
    out = {}
    if not tag:
        out = {
            "003-F5.12-E8-1": Measured(bool(tree.iloc[0] < tree.iloc[1] < tree.iloc[2]),
                                       " < ".join(f"{x:.1f}" for x in tree)),
            "003-F5.12-E8-2": Measured(bool(bs.iloc[0] > bs.iloc[1] > bs.iloc[2] and bs.iloc[0] >= 5 * bs.iloc[1]),
                                       f"{bs.iloc[0]:.1f} > {bs.iloc[1]:.1f} > {bs.iloc[2]:.1f}; "
                                       f"ratio 32/256 = {bs.iloc[0] / bs.iloc[1]:.1f}"),
            "003-F5.12-E8-3": Measured(float(bs.iloc[2]), f"{bs.iloc[2]:.2f}"),
        }
        d = _paired(rows, P_CHECK, b2048, "srpt")
        out["003-F5.12-E8-6"] = Measured(bool(d.mean() < 0), f"{lat[b2048]:.1f} < {lat['srpt']:.1f} (paired "
                                         f"difference {d.mean():.1f}, lower in {int((d < 0).sum())} of {len(d)} runs)")
    rivals = lat[[b32, b256, b2048, "srpt"]]
    v = lat["vcube_ps"]
    beaten = [label[s] for s, x in rivals.items() if not v < x]
    out[f"003-F5.12-E8-4{tag}"] = Measured(
        not beaten, f"VCube-PS {v:.1f} vs " + ", ".join(f"{label[s]} {x:.1f}" for s, x in rivals.items())
        + (f"; not below {beaten}" if beaten else ""))
    gain = 1 - v / lat[b256]
    start = 1 - m.latency_from_start_mean["vcube_ps"] / lat[b256]
    out[f"003-F5.12-E8-5{tag}"] = Measured(float(gain), f"{gain:.3f}" + (f" (from start {start:.3f})" if tag else ""))
    return out


def measure(rows: pd.DataFrame, summary: pd.DataFrame, scale: str) -> dict[str, Measured]:
    """Every claim: E8 at N = 4096, P = 128 with the five systems (periodic schedule); E8-4 and
    E8-5 again on the Poisson schedule; the A16 rows at the other P."""
    n_text, n_nodes = int(published()["n_nodes"]), int(rows.n_nodes.iloc[0])
    label, systems = names(), order(rows)
    b256 = f"srpt_b{brokers()[1]}"
    mean = summary.set_index(["schedule", "publishers", "system"])
    pubs = sorted(int(p) for p in rows.publishers.unique())
    ids = list(claims.load(NOTEBOOK).id)
    sens = [i for i in ids if i.endswith("-poisson")]
    if n_nodes == n_text and _present(rows, P_CHECK, *label):
        out = _e8(rows, mean.loc[(SCHEDULE, P_CHECK)])
    else:
        why = (f"needs N = {n_text}, P = {P_CHECK} and the five systems; the {scale} scale runs N = {n_nodes}, "
               f"P = {pubs}, {[label[s] for s in systems]}")
        out = {i: not_run(why) for i in ids if not i.endswith(tuple(f"-P{p}" for p in P_SENSITIVITY)) and i not in sens}
    if n_nodes == n_text and _present(rows, P_CHECK, *label, schedule=SENSITIVITY):
        out |= _e8(rows, mean.loc[(SENSITIVITY, P_CHECK)], SENSITIVITY, f"-{SENSITIVITY}")
    else:
        out |= {i: not_run(f"the {SENSITIVITY} schedule is not run with the five systems at N = {n_text}, "
                           f"P = {P_CHECK} at the {scale} scale") for i in sens}
    for p in P_SENSITIVITY:
        if not _present(rows, p, b256, "vcube_ps"):
            out[f"003-F5.12-E8-5-P{p}"] = not_run(f"P = {p} not in the {scale} scale (paper scale: A16 sensitivity)")
            continue
        m = mean.loc[(SCHEDULE, p)]
        gain, start = (1 - m[c]["vcube_ps"] / m.latency_mean[b256] for c in ("latency_mean", "latency_from_start_mean"))
        out[f"003-F5.12-E8-5-P{p}"] = Measured(float(gain), f"{gain:.3f} / {start:.3f}")
    return out


def reading(verdicts: pd.DataFrame, summary: pd.DataFrame, waits: pd.DataFrame) -> str:
    """The closing explanation of the notebook, from this run's verdicts, means and waits."""
    label, (b32, b256, b2048) = names(), (f"srpt_b{b}" for b in brokers())
    mean = summary.set_index(["schedule", "publishers", "system"])
    gain_text = published()["vcubeps_gain_vs_srptb256"]

    def lat(schedule, system, metric="latency_mean", p=P_CHECK):
        key = (schedule, p, system)
        return float(mean.loc[key, metric]) if key in mean.index else np.nan

    def wait(schedule, column, p=P_CHECK):
        return float(waits.loc[(schedule, p), column]) if (schedule, p) in waits.index else np.nan

    def e8_5(row):
        v, b = lat(SCHEDULE, "vcube_ps"), lat(SCHEDULE, b256)
        return (f"With one publication per publisher nothing waits in a publisher's queue "
                f"({wait(SCHEDULE, 'repeat publications (%)'):.0f} % repeats), so VCube-PS's {v:.1f} u.t. is the "
                f"propagation alone, close to a single isolated publication at 100 % subscribers (notebook 31).  The "
                f"thesis's {gain_text:g} % gain would put VCube-PS at {(1 - gain_text / 100) * b:.0f} u.t. against our "
                f"{label[b256]} ({b:.1f} u.t.).  Neither schedule we ran gets there: without repeated publishers "
                f"VCube-PS is faster, and the only wait the model adds, the ACK round trip of a repeated publisher "
                f"(the Poisson rows below), overshoots.  The spec accepts 0.10–0.60; the thesis gives no bar "
                f"heights to locate the difference.")

    def e8_4_poisson(row):
        v, s = lat(SENSITIVITY, "vcube_ps"), lat(SENSITIVITY, "vcube_ps", "latency_from_start_mean")
        return (f"Under the spec body's Poisson schedule {wait(SENSITIVITY, 'repeat publications (%)'):.0f} % of the "
                f"publications repeat a publisher, a median {wait(SENSITIVITY, GAP):.0f} "
                f"u.t. after its previous one, and wait for that message's ACK wave (A4:34, a round trip down and up "
                f"the 4096-node tree): VCube-PS averages {v:.1f} u.t., of which {v - s:.1f} u.t. per reception is that "
                f"wait ({s:.1f} u.t. from the start of the propagation).  The authors' simulator lets a publisher "
                f"send only 500 u.t. after its previous message, so with 128 publishers and a cap of 128 each "
                f"publishes about once: the periodic schedule above is that reading.")

    def e8_5_poisson(row):
        e8_4 = verdicts.set_index("id").verdict.get("003-F5.12-E8-4-poisson")
        return "The same Poisson runs as E8-4-poisson above." if e8_4 == readings.REPORT else e8_4_poisson(row)

    def e8_5_p(row):
        return ("The A16 sensitivity at fewer publishers: with P < 128 each publisher publishes several times, "
                "500 u.t. apart, and waits for its previous ACK wave again (the second value is the gain measured "
                "from the start of the propagation).")

    why = {"003-F5.12-E8-5": e8_5, "003-F5.12-E8-4-poisson": e8_4_poisson,
           "003-F5.12-E8-5-poisson": e8_5_poisson,
           **{f"003-F5.12-E8-5-P{p}": e8_5_p for p in P_SENSITIVITY}}
    intro = ""
    if not np.isnan(lat(SCHEDULE, b2048)):
        intro = (f"SRPT-B: Tree {lat(SCHEDULE, b32, 'tree_latency_mean'):.0f} / {lat(SCHEDULE, b256, 'tree_latency_mean'):.0f} / "
                 f"{lat(SCHEDULE, b2048, 'tree_latency_mean'):.0f} u.t. and B-S {lat(SCHEDULE, b32, 'bs_latency_mean'):.0f} / "
                 f"{lat(SCHEDULE, b256, 'bs_latency_mean'):.0f} / {lat(SCHEDULE, b2048, 'bs_latency_mean'):.0f} u.t. for 32 / "
                 f"256 / 2048 brokers: each of the 32 brokers sends every message to its 127 subscribers through one "
                 f"queue at 1 u.t. per copy, and with 2048 brokers B-S is one bare hop (t_send + t_pp = 101 u.t., "
                 f"a sanity row).  SRPT-B(2048) {lat(SCHEDULE, b2048):.1f} u.t. against SRPT-S {lat(SCHEDULE, 'srpt'):.1f}: "
                 f"its root broadcasts on a 2048-node tree, SRPT-S's on 4096.  VCube-PS {lat(SCHEDULE, 'vcube_ps'):.1f} u.t.")
    return readings.explain(verdicts, why, intro)
