"""Figure 5.11 of the thesis (seed 003 §5.6.6): VCube-PS and SRPT under churn (notebook
``37_thesis_figure5_11``, experiment ``ps_churn``, spec ``vcube_ps.md`` §5.8 E7).

The notebook runs three sweeps of ``ps_churn``: panel (a) (N_s x t_med label, static included),
panel (b) (N_s = 1000 x churn rate) and section 6 (the pseudo-code's and the safe CHECKCB on
the same longer runs).  This module says which points each scale runs (``setup``), shapes the
rows into the notebook's tables and figure, rebuilds the churn workloads to check the swap
generator (E7-1, E7-2: workloads only, nothing simulated) and measures every claim of
``data/expected/claims/37_thesis_figure5_11.csv``.
"""

from __future__ import annotations

import dataclasses
import functools
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_ps import kernel
from causal_lab.families.vcube_ps import workload as pubsub_workload

NOTEBOOK = "37_thesis_figure5_11"
N_A5 = 4096  # spec A5: the thesis does not state N
SYSTEMS = ("vcube_ps", "srpt")
NAMES = {"vcube_ps": "VCube-PS", "srpt": "SRPT"}
METRICS = ["latency", "false_positive_pct", "queue_wait", "swaps_per_minute", "target_swaps_per_minute",
           "pub_copies", "delegations", "sub_copies", "uns_copies", "ack_copies", "copies", "blocked_end",
           "missing", "dropped", "stable_nodes", "stable_received_pct", "stable_delivered_pct", "deliveries",
           "oracle_late", "oracle_late_immediate", "oracle_errors_strict", "subscriber_receptions"]


@functools.cache
def published() -> pd.Series:
    """The thesis's numbers for Figure 5.11, by key (``data/expected/003_ch5_figure5_11.csv``)."""
    return claims.table("003_ch5_figure5_11").set_index("key").value


def thesis_grid() -> tuple[list[int], list[float], int, list[float]]:
    """Panel (a)'s N_s and t_med labels (0 = static first), panel (b)'s N_s and churn rates."""
    p = published()
    subs = sorted(int(v) for k, v in p.items() if k.startswith("fig_a_subscribers_"))
    labels = [0.0] + sorted(float(v) for k, v in p.items() if k.startswith("fig_a_tmed_"))
    rates = [float(r) for r in range(int(p.fig_b_churn_rate_min), int(p.fig_b_churn_rate_max) + 1)]
    return subs, labels, int(p.fig_b_subscribers), rates


@dataclasses.dataclass(frozen=True)
class Setup:
    """What one scale runs.  Lists are in decreasing cost, so the longest runs start first;
    ``order`` is section 6's point (at the paper scale its strict runs are panel (b)'s 10 %/min)."""

    scale: str
    n_nodes: int
    subs: list
    labels: list
    ns_b: int
    rates: list
    minutes: float
    reps: int
    order: dict
    order_reps: int

    def _point(self, **values) -> dict:
        return {"n_nodes": [self.n_nodes], "minutes": [self.minutes], "system": list(SYSTEMS), **values}

    @property
    def panels(self) -> tuple[dict, dict]:
        """Sweep overrides of panel (a) and panel (b) (whose static baseline is in (a))."""
        return (self._point(n_subscribers=self.subs, t_med=self.labels, churn_pct=[0.0]),
                self._point(n_subscribers=[self.ns_b], t_med=[0.0], churn_pct=self.rates))

    @property
    def order_point(self) -> dict:
        o = self.order
        return {"n_nodes": [o["n_nodes"]], "n_subscribers": [o["ns"]], "t_med": [0.0], "churn_pct": [o["rate"]],
                "minutes": [o["minutes"]], "system": ["vcube_ps"], "checkcb": ["strict", "safe"]}

    @property
    def thesis_size(self) -> bool:
        """Level checks (E7-3 ...) are judged only at the thesis's N, N_s and panel (b) N_s."""
        subs, _, ns_b, _ = thesis_grid()
        return self.n_nodes == N_A5 and sorted(self.subs) == subs and self.ns_b == ns_b

    @property
    def size_note(self) -> str:
        return f"N = {self.n_nodes}, N_s = {sorted(set(self.subs) | {self.ns_b})} at the {self.scale} scale"

    def describe(self, runs: int) -> str:
        return (f"scale={self.scale}: N = {self.n_nodes}, {self.minutes:g} simulated minutes per run, {self.reps} "
                f"replication(s) per point, {runs} runs; (a) N_s = {sorted(self.subs)} x t_med = "
                f"{sorted(self.labels)} min (0 = static); (b) N_s = {self.ns_b} x {sorted(self.rates)} %/min")


def setup(scale: str, reps: int | None = None, minutes: float | None = None) -> Setup:
    """The notebook's grid per scale (see its Scales paragraph); ``reps``/``minutes`` override."""
    subs, labels, ns_b, rates = thesis_grid()
    duration = float(published().duration)
    config = {
        "smoke": dict(n_nodes=256, subs=[100], labels=[1.0, 0.0], ns_b=100, rates=[4.0], minutes=2.0, reps=1,
                      order=dict(n_nodes=256, ns=200, rate=10.0, minutes=20.0, reps=1)),
        "default": dict(n_nodes=N_A5, subs=subs[::-1], labels=[1.0, 0.0], ns_b=ns_b, rates=[10.0, 7.0, 4.0, 1.0],
                        minutes=2.0, reps=1, order=dict(n_nodes=N_A5, ns=ns_b, rate=max(rates), minutes=10.0, reps=2)),
        "paper": dict(n_nodes=N_A5, subs=subs[::-1], labels=labels[::-1], ns_b=ns_b, rates=rates[::-1],
                      minutes=duration, reps=3,
                      order=dict(n_nodes=N_A5, ns=ns_b, rate=max(rates), minutes=duration, reps=3)),
    }[scale]
    return Setup(scale=scale, n_nodes=config["n_nodes"], subs=config["subs"], labels=config["labels"],
                 ns_b=config["ns_b"], rates=config["rates"], minutes=float(minutes or config["minutes"]),
                 reps=reps or config["reps"], order=config["order"], order_reps=reps or config["order"]["reps"])


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows or summary with a ``label`` column: "static", "t_med 1 min" or "4 %/min"."""
    label = np.where(frame.churn_pct > 0, frame.churn_pct.map("{:g} %/min".format),
                     np.where(frame.t_med > 0, frame.t_med.map("t_med {:g} min".format), "static"))
    return frame.assign(label=label)


def _labels_a(setup: Setup) -> list[str]:
    return ["static"] + [f"t_med {t:g} min" for t in sorted(setup.labels) if t > 0]


def _pm(mean, std) -> str:
    return f"{mean:.1f}" if np.isnan(std) else f"{mean:.1f} ± {std:.1f}"


def _panel_a(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary.churn_pct == 0].set_index(["n_subscribers", "system", "label"])


def _panel_b(summary: pd.DataFrame, setup: Setup) -> pd.DataFrame:
    """Panel (b)'s points by (churn rate, system), with its static baseline as rate 0."""
    b = summary[(summary.n_subscribers == setup.ns_b) & ((summary.churn_pct > 0) | (summary.label == "static"))]
    return b.set_index(["churn_pct", "system"]).sort_index()


def panel_a_table(summary: pd.DataFrame, setup: Setup) -> pd.DataFrame:
    """Mean latency ± std per N_s, system and label, and each label's ratio to the static one."""
    a = _panel_a(summary)
    table = {}
    for ns in sorted(setup.subs):
        line = {}
        for system in SYSTEMS:
            static = a.loc[(ns, system, "static")].latency_mean
            for label in _labels_a(setup):
                x = a.loc[(ns, system, label)]
                line[f"{NAMES[system]} {label}"] = _pm(x.latency_mean, x.latency_std)
                if label != "static":
                    line[f"{NAMES[system]} {label} / static"] = round(x.latency_mean / static, 4)
        table[ns] = line
    return pd.DataFrame(table).T.rename_axis("N_s")


def panel_b_table(summary: pd.DataFrame, setup: Setup) -> pd.DataFrame:
    """Per churn rate (and static): t_med, latency, false positives and queue wait per system."""
    b = _panel_b(summary, setup)
    table = {}
    for r in [0.0] + sorted(setup.rates):
        line = {"t_med (s)": np.nan if r == 0 else round(100 * np.log(2) / r, 1)}
        for system in SYSTEMS:
            x = b.loc[(r, system)]
            line[f"{NAMES[system]} latency"] = _pm(x.latency_mean, x.latency_std)
            line[f"{NAMES[system]} FP %"] = round(x.false_positive_pct_mean, 3)
            line[f"{NAMES[system]} queue wait (ms)"] = round(x.queue_wait_mean, 3)
        table["static" if r == 0 else f"{r:g} %/min"] = line
    return pd.DataFrame(table).T.rename_axis("churn rate")


def traffic_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per point and system: swaps, false positives, queue wait, copies by type, what strict
    CHECKCB leaves blocked, the stable subscribers' shares and the oracle's late deliveries."""
    t = summary.assign(system=summary.system.map(NAMES)).set_index(["n_subscribers", "label", "system"]).sort_index()
    receptions = t.subscriber_receptions_mean
    return pd.DataFrame({
        "swaps/min": t.swaps_per_minute_mean.round(2), "target/min": t.target_swaps_per_minute_mean.round(2),
        "FP %": t.false_positive_pct_mean.round(3), "queue wait (ms)": t.queue_wait_mean.round(3),
        "PUB": t.pub_copies_mean.round(0), "delegations": t.delegations_mean.round(0),
        "SUB": t.sub_copies_mean.round(0), "UNS": t.uns_copies_mean.round(0),
        "ACK": t.ack_copies_mean.round(0), "all copies": t.copies_mean.round(0),
        "blocked at end": t.blocked_end_mean.round(0),
        "blocked % of receptions": (100 * t.blocked_end_mean / receptions).round(2),
        "dropped": t.dropped_mean.round(0), "missing": t.missing_mean.round(0),
        "delivered % of receptions": (100 * t.deliveries_mean / receptions).round(2),
        "stable nodes": t.stable_nodes_mean.round(0), "stable: received %": t.stable_received_pct_mean.round(2),
        "stable: delivered %": t.stable_delivered_pct_mean.round(2), "oracle late": t.oracle_late_mean,
        "oracle late (immediate)": t.oracle_late_immediate_mean,
        "oracle strict errors": t.oracle_errors_strict_mean.round(0),
    })


def order_tables(order: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Section 6: totals per CHECKCB rule (late deliveries, blocked and delivered shares) and
    the runs themselves."""
    order = order.assign(**{"blocked %": 100 * order.blocked_end / order.subscriber_receptions})
    per_rule = order.groupby("checkcb", sort=False).agg(
        runs=("rep", "size"), late=("oracle_late", "sum"), late_immediate=("oracle_late_immediate", "sum"),
        deliveries=("deliveries", "sum"), receptions=("subscriber_receptions", "sum"), blocked=("blocked_end", "sum"),
        missing=("missing", "sum"), dropped=("dropped", "sum"), latency=("latency", "mean"),
        stable_received_pct=("stable_received_pct", "mean"), stable_delivered_pct=("stable_delivered_pct", "mean"))
    per_rule["late per 10^5 deliveries"] = (1e5 * per_rule.late / per_rule.deliveries).round(2)
    per_rule["blocked % of receptions"] = (100 * per_rule.blocked / per_rule.receptions).round(2)
    per_rule["delivered % of receptions"] = (100 * per_rule.deliveries / per_rule.receptions).round(2)
    runs = order[["checkcb", "rep", "swaps", "oracle_late", "oracle_late_immediate", "deliveries", "blocked_end",
                  "blocked %", "dropped", "missing", "stable_delivered_pct", "latency"]].round(3)
    return per_rule, runs


# ------------------------------------------------------------------------------------------
# The swap generator (E7-1, E7-2): workloads rebuilt and replayed, nothing simulated
# ------------------------------------------------------------------------------------------


def _replay(w: kernel.Workload, ns: int) -> int:
    """Problems of a churn workload: N_s broken after a swap, a leaver that was not subscribed, a
    joiner that was, a publisher that is not a current subscriber (A22)."""
    member = w.initial[0].copy()
    problems = int(member.sum() != ns)
    for op, node in zip(w.ops, w.nodes):
        if op == kernel.OP_PUBLISH:
            problems += int(not member[node])
        elif op == kernel.OP_UNSUBSCRIBE:
            problems += int(not member[node])
            member[node] = False
        else:  # the join half of a swap: the count is back to N_s
            problems += int(member[node])
            member[node] = True
            problems += int(member.sum() != ns)
    return problems


def replays(rows: pd.DataFrame) -> pd.DataFrame:
    """Every simulated run's workload rebuilt from its seed and replayed: problems, and whether
    its swap count equals the run's."""
    out = []
    for r in rows.itertuples():
        w = pubsub_workload.churn(int(r.n_nodes).bit_length() - 1, int(r.n_subscribers),
                                  float(r.target_swaps_per_minute), r.minutes, float(r.period),
                                  np.random.SeedSequence(json.loads(r.seed_entropy)))
        out.append({"task_key": r.task_key, "problems": _replay(w, r.n_subscribers),
                    "same swaps": int((w.ops == kernel.OP_SUBSCRIBE).sum()) == r.swaps})
    return pd.DataFrame(out)


def calibration(experiment, seed: int, reps: int) -> pd.DataFrame:
    """Swap rates of the paper scale's 120-minute workloads at the spec's two calibration points,
    (4000, t_med = 1 min) and (1000, t_med = 1 min), first ``reps`` replications."""
    p = published()
    long_run, out = float(p.duration), []
    for ns in (int(p.fig_a_subscribers_4), int(p.fig_a_subscribers_2)):
        point = {"n_nodes": [N_A5], "n_subscribers": [ns], "t_med": [1.0], "churn_pct": [0.0],
                 "minutes": [long_run], "system": ["vcube_ps"]}
        for t in sweep.plan(experiment, "paper", overrides=point, reps=reps, base_seed=seed):
            target = pubsub_workload.churn_rate(ns, 1.0)
            w = pubsub_workload.churn(N_A5.bit_length() - 1, ns, target, long_run, t.point["period"],
                                      sweep.task_seed(seed, experiment, t.point, t.rep))
            swaps = int((w.ops == kernel.OP_SUBSCRIBE).sum())
            out.append({"N_s": ns, "rep": t.rep, "target/min": target, "swaps": swaps,
                        "swaps/min": swaps / long_run, "% of N_s per min": 100 * swaps / long_run / ns,
                        "replay problems": _replay(w, ns)})
    return pd.DataFrame(out)


def replay_summary(rows: pd.DataFrame, replayed: pd.DataFrame) -> str:
    return (f"{len(replayed)} simulated runs replayed: {replayed.problems.sum()} problems, rebuilt swap counts "
            f"equal the runs' in {replayed['same swaps'].sum()} of {len(replayed)}; subscribers at the end = N_s "
            f"in {(rows.subscribers_end == rows.n_subscribers).sum()} of {len(rows)} runs")


# ------------------------------------------------------------------------------------------
# Figure
# ------------------------------------------------------------------------------------------


def plot(summary: pd.DataFrame, setup: Setup):
    """(a) latency vs N_s per label; (b) latency vs churn rate with the static baselines;
    (b) VCube-PS false positives and the receptions strict CHECKCB leaves blocked."""
    colors = {"vcube_ps": plotting.PALETTE["ours"], "srpt": "tab:orange"}
    styles = {"static": "-", "t_med 1 min": "--", "t_med 30 min": "-.", "t_med 60 min": ":"}
    marks = {"static": "o", "t_med 1 min": "s", "t_med 30 min": "^", "t_med 60 min": "v"}
    b = _panel_b(summary, setup)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    ax = axes[0]
    for (system, label), g in summary[summary.churn_pct == 0].groupby(["system", "label"]):
        g = g.sort_values("n_subscribers")
        ax.errorbar(g.n_subscribers, g.latency_mean, yerr=g.latency_std.fillna(0), capsize=3, color=colors[system],
                    ls=styles[label], marker=marks[label], label=f"{NAMES[system]} {label}")
    ax.set(xscale="log", xlabel="subscribers N_s", ylabel="mean reception latency (ms)",
           title=f"(a) N = {setup.n_nodes}, {setup.minutes:g} simulated min")
    ax.set_xticks(sorted(setup.subs), [str(s) for s in sorted(setup.subs)])
    ax.minorticks_off()
    ax.legend(fontsize=7)
    ax = axes[1]
    for system in SYSTEMS:
        g = b.xs(system, level="system")
        churn = g[g.index > 0]
        ax.errorbar(churn.index, churn.latency_mean, yerr=churn.latency_std.fillna(0), capsize=3,
                    color=colors[system], marker="o", label=f"{NAMES[system]}")
        ax.axhline(g.loc[0.0].latency_mean, color=colors[system], ls=":", lw=1, label=f"{NAMES[system]} static")
    ax.set(xlabel="churn rate (% of N_s per minute)", ylabel="mean reception latency (ms)",
           title=f"(b) N_s = {setup.ns_b}")
    ax.legend(fontsize=7)
    ax = axes[2]
    v = b.xs("vcube_ps", level="system")
    churn = v[v.index > 0]
    ax.plot(churn.index, churn.false_positive_pct_mean, "o-", color=colors["vcube_ps"],
            label="ours: false positives (% of PUB receptions)")
    fp, sd = published().vcubeps_false_positive_pct_b, published().vcubeps_false_positive_pct_b_sd
    ax.axhspan(fp - sd, fp + sd, color=plotting.PALETTE["paper"], alpha=0.2,
               label=f"thesis: {fp:g} % ± {sd:g} (mean over rates)")
    ax.plot(churn.index, 100 * churn.blocked_end_mean / churn.subscriber_receptions_mean, "s--", color="0.4",
            label="ours: receptions still blocked at the end (%)")
    ax.set(xlabel="churn rate (% of N_s per minute)", ylabel="% (log scale)", yscale="log",
           title="(b) VCube-PS: false positives, blocked messages")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------
# Claims
# ------------------------------------------------------------------------------------------


def _level(setup: Setup, value, shown: str, note: str = "") -> Measured:
    """A level check (E7-3 ...): judged only at the thesis's configuration."""
    if setup.thesis_size:
        return Measured(value, shown, note)
    return not_run(f"{shown} ({setup.size_note}: not the thesis configuration)")


def _generator(setup: Setup, rows, calibration_, replayed) -> dict[str, Measured]:
    """E7-1 (120-minute workloads and every run's swap count), A6, E7-2."""
    p, out = published(), {}
    c46 = calibration_[calibration_.N_s == int(p.fig_a_subscribers_4)]
    c11 = calibration_[calibration_.N_s == int(p.fig_a_subscribers_2)]
    out["003-F5.11a-E7-1-swaps-N4000"] = Measured(float(c46["swaps/min"].mean()), f"{c46['swaps/min'].mean():.2f}",
                                                  f"{len(c46)} replication(s)")
    out["003-F5.11a-E7-1-rate-N1000"] = Measured(float(c11["% of N_s per min"].mean()),
                                                 f"{c11['% of N_s per min'].mean():.3f}", f"{len(c11)} replication(s)")
    tmeds = [100 * np.log(2) / r for r in (p.fig_b_churn_rate_min, p.srpt_knee_churn_rate, p.fig_b_churn_rate_max)]
    quoted = (p.fig_b_tmed_max, p.srpt_knee_tmed, p.fig_b_tmed_min)
    out["003-F5.11b-A6-tmed"] = Measured(bool(all(abs(t - q) <= 0.5 for t, q in zip(tmeds, quoted))),
                                         " / ".join(f"{t:.1f} s" for t in tmeds))
    churn_runs = rows[rows.target_swaps_per_minute > 0]
    lo, hi = stats.poisson.interval(0.999, churn_runs.target_swaps_per_minute * churn_runs.minutes)
    inside = (churn_runs.swaps >= lo) & (churn_runs.swaps <= hi)
    out["003-F5.11a-E7-1-poisson"] = Measured(bool(inside.all()), f"{inside.sum()} of {len(churn_runs)} runs")
    bad = int(replayed.problems.sum() + calibration_["replay problems"].sum())
    kept = int((rows.subscribers_end == rows.n_subscribers).sum())
    out["003-F5.11a-E7-2"] = Measured(bad == 0 and kept == len(rows) and bool(replayed["same swaps"].all()),
                                      f"{bad} replay problems; {kept} of {len(rows)} runs end with N_s subscribers")
    return out


def _panel_a_claims(setup: Setup, rows, summary) -> dict[str, Measured]:
    """E7-3, E7-4, E7-11, E7-13 per (N_s, t_med label); E7-5 per label; E7-6; E7-7 per N_s."""
    a, out = _panel_a(summary), {}
    subs, labels, _, _ = thesis_grid()
    for ns in subs:
        for t in labels[1:]:
            label, suffix = f"t_med {t:g} min", f"N{ns}-tmed{t:g}"
            keys = [f"003-F5.11a-E7-3-{suffix}"] + ([f"003-F5.11a-E7-4-{suffix}"] if ns < max(subs) else [])
            if ns == max(subs) and t == 1.0:
                keys += ["003-F5.11a-E7-11", "003-F5.11a-E7-13"]
            if t not in setup.labels or ns not in setup.subs:
                why = (f"{setup.minutes:g}-minute runs at the {setup.scale} scale (≈ "
                       f"{pubsub_workload.churn_rate(ns, t) * setup.minutes:.2f} expected swaps per run)"
                       if t not in setup.labels else setup.size_note)
                out.update({k: not_run(why) for k in keys})
                continue
            rv = a.loc[(ns, "vcube_ps", label)].latency_mean / a.loc[(ns, "vcube_ps", "static")].latency_mean - 1
            rs = a.loc[(ns, "srpt", label)].latency_mean / a.loc[(ns, "srpt", "static")].latency_mean - 1
            out[keys[0]] = _level(setup, 100 * rv, f"{100 * rv:+.2f} %")
            if ns < max(subs):
                out[keys[1]] = _level(setup, 100 * rs, f"{100 * rs:+.2f} %")
            elif t == 1.0:
                fp = a.loc[(ns, "srpt", label)].false_positive_pct_mean
                out["003-F5.11a-E7-11"] = _level(setup, 1 + rs, f"{1 + rs:.3f}")
                out["003-F5.11a-E7-13"] = _level(setup, fp, f"{fp:.2f}")
    for t in labels:
        label = "static" if t == 0 else f"t_med {t:g} min"
        key = "003-F5.11a-E7-5-" + ("static" if t == 0 else f"tmed{t:g}")
        if t not in setup.labels:
            out[key] = not_run(f"{setup.minutes:g}-minute runs at the {setup.scale} scale")
            continue
        gap = [(ns, a.loc[(ns, "srpt", label)].latency_mean - a.loc[(ns, "vcube_ps", label)].latency_mean)
               for ns in sorted(setup.subs)]
        out[key] = Measured(bool(all(g > 0 for _, g in gap)), ", ".join(f"{ns}: {g:+.1f}" for ns, g in gap))
    static = rows[rows.label == "static"]
    out["003-F5.11a-E7-6"] = Measured(int(static[static.system == "vcube_ps"].false_positives.sum()))
    for ns in subs:
        key = f"003-F5.11a-E7-7-N{ns}"
        if ns not in setup.subs:
            out[key] = not_run(setup.size_note)
            continue
        fp = a.loc[(ns, "srpt", "static")].false_positive_pct_mean
        out[key] = _level(setup, fp, f"{fp:.2f}")
    return out


def _panel_b_claims(setup: Setup, summary) -> dict[str, Measured]:
    """E7-8 .. E7-12 on panel (b)'s churn rates."""
    p, b, out = published(), _panel_b(summary, setup), {}
    v, s = b.xs("vcube_ps", level="system"), b.xs("srpt", level="system")
    vb, sb = v[v.index > 0], s[s.index > 0]
    fps = vb.false_positive_pct_mean
    out["003-F5.11b-E7-8-monotone"] = (
        Measured(bool((fps.diff().dropna() >= 0).all()), " -> ".join(f"{x:.3f} %" for x in fps),
                 f"rates {', '.join(f'{r:g}' for r in vb.index)} %/min") if len(fps) > 1
        else not_run(f"rates {sorted(setup.rates)} at the {setup.scale} scale"))
    out["003-F5.11b-E7-8-mean"] = _level(setup, float(fps.mean()), f"{fps.mean():.3f}")
    if len(vb) > 1 and vb.index.max() / vb.index.min() == p.vcubeps_churn_rate_factor:
        ratio = float(vb.latency_mean.iloc[-1] / vb.latency_mean.iloc[0])
        note = f"L({vb.index.max():g} %/min) / L({vb.index.min():g} %/min)"
        out["003-F5.11b-E7-9-above1"] = Measured(ratio, f"{ratio:.4f}", note)
        out["003-F5.11b-E7-9-ratio"] = _level(setup, ratio, f"{ratio:.4f}", note)
    else:
        for key in ("003-F5.11b-E7-9-above1", "003-F5.11b-E7-9-ratio"):
            out[key] = not_run(f"rates {sorted(setup.rates)} at the {setup.scale} scale")
    qmax = float(vb.queue_wait_mean.max())
    out["003-F5.11b-E7-10"] = _level(setup, qmax, f"{qmax:.3f}")
    knee = p.srpt_knee_churn_rate
    below, above = sb[sb.index <= knee], sb[sb.index >= knee]
    if len(below) > 1 and len(above) > 1:
        slope_below = np.polyfit(below.index, below.latency_mean, 1)[0]
        slope_above = np.polyfit(above.index, above.latency_mean, 1)[0]
        growth = above.latency_mean.iloc[-1] / above.latency_mean.iloc[0]
        out["003-F5.11b-E7-12-knee"] = _level(
            setup, bool(slope_above > 2 * max(slope_below, 0) and growth >= 1.1),
            f"slopes below {slope_below:.2f}, above {slope_above:.2f}; "
            f"L({above.index.max():g} %)/L({knee:g} %) = {growth:.3f}")
    else:
        out["003-F5.11b-E7-12-knee"] = not_run(f"rates {sorted(setup.rates)} at the {setup.scale} scale")
    for rate, key in ((5.0, "003-F5.11b-E7-12-wait5"), (10.0, "003-F5.11b-E7-12-wait10")):
        if rate in sb.index:
            q = float(sb.loc[rate].queue_wait_mean)
            out[key] = Measured(q, f"{q:.3f}")
        else:
            out[key] = not_run(f"{rate:g} %/min not in the {setup.scale} grid {sorted(setup.rates)}")
    return out


def _order_claims(setup: Setup, rows, per_rule) -> dict[str, Measured]:
    """Causal order (§5.4.1) in panels (a)/(b) and under both CHECKCB rules (section 6);
    liveness of the stable subscribers (§5.4, spec §2.10); the static runs."""
    out = {}
    late, late_i = int(rows.oracle_late.sum()), int(rows.oracle_late_immediate.sum())
    out["003-S5.4.1-late-ab"] = Measured(late, f"{late} / {late_i} in {len(rows)} runs",
                                         f"{setup.minutes:g}-minute runs; transitive / immediate pairs")
    o = setup.order
    where = f"N = {o['n_nodes']}, N_s = {o['ns']}, {o['rate']:g} %/min, {o['minutes']:g} min, {setup.order_reps} run(s)"
    for rule in ("strict", "safe"):
        x = per_rule.loc[rule]
        out[f"003-S5.4.1-late-{rule}"] = Measured(
            int(x.late), f"{int(x.late)} / {int(x.late_immediate)} of {int(x.deliveries)} deliveries; "
            f"{x['delivered % of receptions']:.1f} % of the receptions delivered", where)
    churned = rows[rows.swaps > 0]
    for system in SYSTEMS:
        g = churned[churned.system == system].dropna(subset=["stable_delivered_pct"])
        out[f"003-S5.4-stable-{system}"] = (
            Measured(float(g.stable_delivered_pct.min()),
                     f"{g.stable_received_pct.min():.2f} / {g.stable_delivered_pct.min():.2f} ({len(g)} runs; mean "
                     f"{g.stable_received_pct.mean():.2f} / {g.stable_delivered_pct.mean():.2f})",
                     "received / delivered, lowest run") if len(g)
            else not_run(f"no stable subscriber in a churn run at the {setup.scale} scale"))
    st = rows[rows.label == "static"]
    bad = int(st.blocked_end.sum() + st.missing.sum() + st.oracle_errors_strict.sum())
    out["003-F5.11a-static-delivery"] = Measured(bad, f"{bad} blocked, missing or out of order in {len(st)} runs")
    return out


def measure(setup: Setup, rows: pd.DataFrame, summary: pd.DataFrame, per_rule: pd.DataFrame,
            calibration_: pd.DataFrame, replayed: pd.DataFrame) -> dict[str, Measured]:
    """Every claim of the notebook: ``rows``/``summary`` of panels (a) and (b) (``labelled``),
    section 6's ``per_rule`` (``order_tables``), the generator's ``calibration`` and ``replays``."""
    return {**_generator(setup, rows, calibration_, replayed), **_panel_a_claims(setup, rows, summary),
            **_panel_b_claims(setup, summary), **_order_claims(setup, rows, per_rule)}
