"""Figure 5.11 of the thesis (seed 003 §5.6.6): VCube-PS and SRPT under churn (notebook
``37_thesis_figure5_11``, experiment ``ps_churn``, spec ``vcube_ps.md`` §5.8 E7).

The notebook runs four sweeps of ``ps_churn``: panel (a) (N_s x t_med label, static included),
panel (b) (N_s = 1000 x churn rate), the options (panel (b) again with the prose's lenient
CHECKCB, for the delivery latency; SRPT-S at N_s = 4000, t_med = 1 min with the authors' fast
subscription, for its relays) and section 6 (the pseudo-code's and the safe CHECKCB on the same
longer runs).  This module says which points each scale runs (``setup``), shapes the rows into the
notebook's tables and figure, rebuilds the churn workloads to check the swap generator (E7-1,
E7-2: workloads only, nothing simulated), measures every claim of
``data/expected/claims/37_thesis_figure5_11.csv`` and writes the closing explanation
(``reading``).

Three metrics per run besides the reception latency (issue 10): the *delivery* latency (the
thesis's latency is "received and delivered", §5.6.1; strict CHECKCB holds messages at joiners);
the *path wait*, the authors' WAIT_TIME (the time from enqueue to departure summed along a
message's path, ``kernel.Run.mean_path_wait``), which the thesis's 28.36 ms and SRPT's 468 ms /
10 s are; and the per-copy queue wait of the spec's §5.0 row, kept as a column.
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
from causal_lab.families.vcube_ps.artifacts import readings

NOTEBOOK = "37_thesis_figure5_11"
N_A5 = 4096  # spec A5: the thesis does not state N
SYSTEMS = ("vcube_ps", "srpt")
NAMES = {"vcube_ps": "VCube-PS", "srpt": "SRPT"}
FAST = ("fast_subscription", "fast_sticky")  # SRPT-S's other membership protocols (kernel.SRPT_MEMBERSHIP)
METRICS = ["latency", "delivery_latency", "path_wait", "path_wait_copies", "false_positive_pct", "queue_wait",
           "swaps_per_minute", "target_swaps_per_minute",
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
    def options(self) -> tuple[dict, dict]:
        """Sweep overrides of the option runs: panel (b)'s churn rates under the prose's lenient
        CHECKCB (VCube-PS), and SRPT-S at the largest N_s, t_med = 1 min with the authors' fast
        subscription (both readings of its FORWARD marks)."""
        return (self._point(n_subscribers=[self.ns_b], t_med=[0.0], churn_pct=self.rates, system=["vcube_ps"],
                            checkcb=["lenient"]),
                self._point(n_subscribers=[max(self.subs)], t_med=[1.0], churn_pct=[0.0], system=["srpt"],
                            srpt_membership=list(FAST)))

    @property
    def full_length(self) -> bool:
        """Runs of the thesis's 120 minutes: false positives (E7-8) and the latency they add
        (E7-3's level) grow with run length as stale relays pile up, so they are judged on those only."""
        return self.minutes == float(published().duration)

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
            if system == "vcube_ps":
                line["VCube-PS delivery latency"] = _pm(x.delivery_latency_mean, x.delivery_latency_std)
            line[f"{NAMES[system]} FP %"] = round(x.false_positive_pct_mean, 3)
            line[f"{NAMES[system]} path wait (ms)"] = round(x.path_wait_mean, 2)
            line[f"{NAMES[system]} queue wait per copy (ms)"] = round(x.queue_wait_mean, 3)
        table["static" if r == 0 else f"{r:g} %/min"] = line
    return pd.DataFrame(table).T.rename_axis("churn rate")


def traffic_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per point and system: swaps, false positives, queue wait, copies by type, what strict
    CHECKCB leaves blocked, the stable subscribers' shares and the oracle's late deliveries."""
    t = summary.assign(system=summary.system.map(NAMES)).set_index(["n_subscribers", "label", "system"]).sort_index()
    receptions = t.subscriber_receptions_mean
    return pd.DataFrame({
        "swaps/min": t.swaps_per_minute_mean.round(2), "target/min": t.target_swaps_per_minute_mean.round(2),
        "latency": t.latency_mean.round(1), "delivery latency": t.delivery_latency_mean.round(1),
        "FP %": t.false_positive_pct_mean.round(3), "path wait (ms)": t.path_wait_mean.round(2),
        "path wait per PUB copy (ms)": t.path_wait_copies_mean.round(2), "queue wait per copy (ms)": t.queue_wait_mean.round(3),
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


def _rule_b(options: pd.DataFrame, setup: Setup, rule: str) -> pd.DataFrame:
    """Panel (b)'s VCube-PS points run under CHECKCB ``rule`` (option runs), by churn rate."""
    o = options[(options.system == "vcube_ps") & (options.checkcb == rule) & (options.n_subscribers == setup.ns_b)]
    return o.set_index("churn_pct").sort_index()


def _membership(summary: pd.DataFrame, options: pd.DataFrame, setup: Setup) -> pd.DataFrame:
    """SRPT-S at the largest N_s, t_med = 1 min, by membership protocol (the spec's default from
    panel (a), the fast-subscription readings from the option runs)."""
    ns = max(setup.subs)
    base = summary[(summary.system == "srpt") & (summary.n_subscribers == ns) & (summary.t_med == 1.0)
                   & (summary.churn_pct == 0)]
    fast = options[(options.system == "srpt") & (options.n_subscribers == ns) & (options.t_med == 1.0)]
    return pd.concat([base, fast]).set_index("srpt_membership")


def option_tables(summary: pd.DataFrame, options: pd.DataFrame, setup: Setup) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(1) Panel (b), VCube-PS: reception latency, and delivery latency and delivered share under
    the pseudo-code's strict CHECKCB (the figure's runs) and the prose's lenient one; (2) SRPT-S
    at the largest N_s, t_med = 1 min, under each membership protocol: latency, false
    positives, membership copies."""
    strict = _panel_b(summary, setup).xs("vcube_ps", level="system")
    strict = strict[strict.index > 0]
    lenient = _rule_b(options, setup, "lenient")
    rates = [r for r in strict.index if r in lenient.index]
    deliv = pd.DataFrame({
        "reception latency": strict.latency_mean[rates].round(1),
        "delivery latency, strict": strict.delivery_latency_mean[rates].round(1),
        "delivered %, strict": (100 * strict.deliveries_mean / strict.subscriber_receptions_mean)[rates].round(2),
        "reception latency (lenient runs)": lenient.latency_mean[rates].round(1),
        "delivery latency, lenient": lenient.delivery_latency_mean[rates].round(1),
        "delivered %, lenient": (100 * lenient.deliveries_mean / lenient.subscriber_receptions_mean)[rates].round(2),
        "late deliveries, lenient": lenient.oracle_late_mean[rates],
    }).rename_axis("churn rate (%/min)")
    m = _membership(summary, options, setup)
    member = pd.DataFrame({
        "latency": m.latency_mean.round(1), "FP %": m.false_positive_pct_mean.round(3),
        "SUB copies": m.sub_copies_mean.round(0), "UNS copies": m.uns_copies_mean.round(0),
        "path wait (ms)": m.path_wait_mean.round(2), "swaps/min": m.swaps_per_minute_mean.round(2),
    }).rename_axis(f"SRPT-S membership (N_s = {max(setup.subs)}, t_med = 1 min)")
    return deliv, member


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


def _increase_level(setup: Setup, a: pd.DataFrame) -> Measured:
    """E7-3's level: the largest VCube-PS increase over static (%), over the labels run."""
    if not setup.full_length:
        return not_run(f"{setup.minutes:g}-minute runs: stale relays, and the latency they add, grow with run length; "
                       f"judged on the thesis's {float(published().duration):g}-minute runs only")
    ratios = {(ns, t): 100 * (a.loc[(ns, "vcube_ps", f"t_med {t:g} min")].latency_mean
                              / a.loc[(ns, "vcube_ps", "static")].latency_mean - 1)
              for ns in setup.subs for t in setup.labels if t > 0}
    (ns, t), top = max(ratios.items(), key=lambda kv: kv[1])
    return _level(setup, float(top), f"{top:+.2f} %", f"largest at N_s = {ns}, t_med = {t:g} min, over {len(ratios)} points")


def _fast_claims(setup: Setup, summary, options) -> dict[str, Measured]:
    """E7-13 under the authors' fast subscription (both readings of its FORWARD marks)."""
    out = {}
    m = _membership(summary, options, setup)
    for mode, key in zip(FAST, ("003-F5.11a-E7-13-fast", "003-F5.11a-E7-13-fast-sticky")):
        if mode not in m.index or not len(options):
            out[key] = not_run(f"no {mode} run at the {setup.scale} scale")
            continue
        fp = float(m.loc[mode].false_positive_pct_mean)
        out[key] = _level(setup, fp, f"{fp:.2f}", f"{setup.minutes:g}-minute runs; delegate_broadcast "
                                                  f"{float(m.loc['delegate_broadcast'].false_positive_pct_mean):.2f}")
    return out


def _panel_a_claims(setup: Setup, rows, summary) -> dict[str, Measured]:
    """E7-3, E7-4, E7-11, E7-13 per (N_s, t_med label); E7-3's level; E7-5 per label; E7-6;
    E7-7 per N_s."""
    a, out = _panel_a(summary), {}
    subs, labels, _, _ = thesis_grid()
    out["003-F5.11a-E7-3-level"] = _increase_level(setup, a)
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


def _panel_b_claims(setup: Setup, summary, options) -> dict[str, Measured]:
    """E7-8 .. E7-12 on panel (b)'s churn rates."""
    p, b, out = published(), _panel_b(summary, setup), {}
    v, s = b.xs("vcube_ps", level="system"), b.xs("srpt", level="system")
    vb, sb = v[v.index > 0], s[s.index > 0]
    fps = vb.false_positive_pct_mean
    short = (f"{setup.minutes:g}-minute runs: false positives grow with run length as stale relays pile up; "
             f"judged on the thesis's {float(p.duration):g}-minute runs only (here "
             + " -> ".join(f"{x:.3f} %" for x in fps) + ")")
    if not setup.full_length:
        out["003-F5.11b-E7-8-monotone"] = out["003-F5.11b-E7-8-mean"] = not_run(short)
    else:
        out["003-F5.11b-E7-8-monotone"] = (
            Measured(bool((fps.diff().dropna() >= 0).all()), " -> ".join(f"{x:.3f} %" for x in fps),
                     f"rates {', '.join(f'{r:g}' for r in vb.index)} %/min") if len(fps) > 1
            else not_run(f"rates {sorted(setup.rates)} at the {setup.scale} scale"))
        out["003-F5.11b-E7-8-mean"] = _level(setup, float(fps.mean()), f"{fps.mean():.3f}")
    lenient = _rule_b(options, setup, "lenient")
    if len(vb) > 1 and vb.index.max() / vb.index.min() == p.vcubeps_churn_rate_factor:
        lo, hi = vb.index.min(), vb.index.max()
        note = f"L({hi:g} %/min) / L({lo:g} %/min), {setup.minutes:g}-minute runs"
        ratio = float(vb.latency_mean[hi] / vb.latency_mean[lo])
        out["003-F5.11b-E7-9-ratio"] = _level(setup, ratio, f"{ratio:.4f}", note + ("; > 1" if ratio > 1 else "; not > 1"))
        d = float(vb.delivery_latency_mean[hi] / vb.delivery_latency_mean[lo])
        out["003-F5.11b-E7-9-delivery-strict"] = _level(
            setup, d, f"{d:.3f}", f"{note}; {vb.delivery_latency_mean[lo]:.1f} -> {vb.delivery_latency_mean[hi]:.1f} ms")
        if lo in lenient.index and hi in lenient.index:
            d = float(lenient.delivery_latency_mean[hi] / lenient.delivery_latency_mean[lo])
            out["003-F5.11b-E7-9-delivery-lenient"] = _level(
                setup, d, f"{d:.3f}", f"{note}; {lenient.delivery_latency_mean[lo]:.1f} -> "
                                      f"{lenient.delivery_latency_mean[hi]:.1f} ms")
        else:
            out["003-F5.11b-E7-9-delivery-lenient"] = not_run(f"no lenient run at the {setup.scale} scale")
    else:
        for key in ("003-F5.11b-E7-9-ratio", "003-F5.11b-E7-9-delivery-strict", "003-F5.11b-E7-9-delivery-lenient"):
            out[key] = not_run(f"rates {sorted(setup.rates)} at the {setup.scale} scale")
    qmax = float(vb.path_wait_mean.max())
    out["003-F5.11b-E7-10"] = _level(setup, qmax, f"{qmax:.2f}",
                                     f"at {vb.path_wait_mean.idxmax():g} %/min; per copy sent: "
                                     f"{vb.path_wait_copies_mean.max():.2f} ms along the path, "
                                     f"{vb.queue_wait_mean.max():.3f} ms one hop (the spec's §5.0 row)")
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
            q = float(sb.loc[rate].path_wait_mean)
            out[key] = Measured(q, f"{q:.2f}", f"path wait; one hop: {float(sb.loc[rate].queue_wait_mean):.3f} ms")
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


def measure(setup: Setup, rows: pd.DataFrame, summary: pd.DataFrame, options: pd.DataFrame,
            per_rule: pd.DataFrame, calibration_: pd.DataFrame, replayed: pd.DataFrame) -> dict[str, Measured]:
    """Every claim of the notebook: ``rows``/``summary`` of panels (a) and (b) (``labelled``),
    the option runs' summary ``options``, section 6's ``per_rule`` (``order_tables``), the
    generator's ``calibration`` and ``replays``."""
    return {**_generator(setup, rows, calibration_, replayed), **_panel_a_claims(setup, rows, summary),
            **_fast_claims(setup, summary, options), **_panel_b_claims(setup, summary, options),
            **_order_claims(setup, rows, per_rule)}


# ------------------------------------------------------------------------------------------
# Reading
# ------------------------------------------------------------------------------------------


def reading(verdicts: pd.DataFrame, setup: Setup, summary: pd.DataFrame, options: pd.DataFrame,
            per_rule: pd.DataFrame) -> str:
    """The closing explanation of the notebook, from this run's verdicts and summaries."""
    p, a, b = published(), _panel_a(summary), _panel_b(summary, setup)
    d = setup.n_nodes.bit_length() - 1
    ns_max = max(setup.subs)
    runs = f"{setup.minutes:g}-minute runs, {setup.reps} replication(s)"
    churn_a = summary[(summary.churn_pct == 0) & (summary.t_med > 0)]
    vb = b.xs("vcube_ps", level="system")
    vb = vb[vb.index > 0]
    sb = b.xs("srpt", level="system")
    sb = sb[sb.index > 0]

    def ratio(system, ns, label):
        return a.loc[(ns, system, label)].latency_mean / a.loc[(ns, system, "static")].latency_mean

    def e7_3_level(row):
        fp = churn_a[churn_a.system == "vcube_ps"].false_positive_pct_mean
        return (f"VCube-PS's latency under churn stays within {100 * (min(ratio('vcube_ps', ns, f't_med {t:g} min') for ns in setup.subs for t in setup.labels if t > 0) - 1):+.2f} "
                f"to {100 * (max(ratio('vcube_ps', ns, f't_med {t:g} min') for ns in setup.subs for t in setup.labels if t > 0) - 1):+.2f} % "
                f"of its static baseline ({runs}): its temporary relays, the cause the thesis gives for its +10 %, "
                f"receive {fp.min():.3f}-{fp.max():.3f} % of the PUB copies of the panel (a) churn runs, too few to "
                f"lengthen the trees.")

    def e7_11(row):
        label = "t_med 1 min"
        swaps = float(a.loc[(ns_max, "srpt", label)].swaps_per_minute_mean)
        pubs = 60_000.0 / float(p.publish_period)
        busy = (pubs + 2 * swaps) * d * 1.0 / 60_000.0
        return (f"At N_s = {ns_max}, t_med = 1 min, SRPT's root handles {pubs:.0f} publications and "
                f"{2 * swaps:.0f} membership changes per minute ({swaps:.1f} swaps), each at most {d} copies of "
                f"t_send = 1 ms on the {d}-level tree: about {100 * busy:.1f} % busy, so no queue builds at the root "
                f"whatever the membership protocol (spec A15), and no reading of the stated timing model "
                f"reproduces × {float(p.srpt_ns4000_tmed1_latency_ratio_churn_static):g}: ours is × "
                f"{ratio('srpt', ns_max, label):.3f} (path wait {float(a.loc[(ns_max, 'srpt', label)].path_wait_mean):.1f} "
                f"ms against {float(a.loc[(ns_max, 'srpt', 'static')].path_wait_mean):.1f} static).")

    def e7_13(row):
        inner = 0.5 * (setup.n_nodes - ns_max)
        most = 100 * (setup.n_nodes - ns_max) / (setup.n_nodes - 1)
        return (f"Our SRPT-S (spec §4.2) relays the non-subscribers on the full-tree paths to the subscribers: "
                f"about half of the {setup.n_nodes - ns_max} non-subscribers (the other half are leaves of the "
                f"root's binomial tree), ≈ {inner:.0f} / {ns_max} = {100 * inner / ns_max:.2f} % of the receptions, "
                f"the same as static (E7-7).  With N_s kept at {ns_max} of N = {setup.n_nodes}, a PUB can reach at most "
                f"the {setup.n_nodes - ns_max} non-subscribers besides the {ns_max - 1} other subscribers: (N − N_s)/(N − 1) "
                f"= {most:.2f} % is the most any relay set can give, below the thesis's "
                f"{float(p.srpt_ns4000_tmed1_false_positive_pct):g} % (which would fit a larger N, spec A5).")

    def e7_13_fast(row):
        m = _membership(summary, options, setup)
        lim = 100 * (setup.n_nodes - ns_max) / (setup.n_nodes - 1)
        fast = float(m.loc["fast_subscription"].false_positive_pct_mean)
        if row["id"].endswith("sticky"):
            sticky = float(m.loc["fast_sticky"].false_positive_pct_mean)
            than = "equal to" if abs(sticky - fast) < 0.005 else ("above" if sticky > fast else "below")
            return (f"With the marks never cleared the false positives are {sticky:.2f} % ({runs}), {than} the "
                    f"clearing reading's {fast:.2f} %: marks can pile up only on inner nodes of the root's tree (a "
                    f"subscriber's own node is never marked, and a full-tree leaf is never on a path), so even with "
                    f"every inner non-subscriber marked the relays stay near half of (N − N_s)/(N − 1) = {lim:.2f} %.")
        base = float(m.loc["delegate_broadcast"].false_positive_pct_mean)
        return (f"The authors' fast subscription marks FORWARD every non-member on the full-tree path from the root "
                f"to a new subscriber and keeps the mark when that subscriber leaves; the UNS of a marked node "
                f"clears its own mark (``VCube.update``, newer counter).  Relays are then the FORWARD nodes that are "
                f"not subscribed.  Only inner nodes of the root's tree are ever on a path (a full-tree leaf never is, "
                f"nor a subscriber's own node), the marks of the initial trees go as their nodes join (a random "
                f"non-subscriber joins at every swap), and a path crosses a non-subscriber rarely (about "
                f"{100 * (setup.n_nodes - ns_max) / setup.n_nodes * d / 2:.0f} % of the subscriptions): the false "
                f"positives are {fast:.2f} % against the default protocol's {base:.2f} % ({runs}), "
                f"{'below' if fast < base else 'above'} it, and bounded by the inner non-subscribers, about half of "
                f"(N − N_s)/(N − 1) = {lim:.2f} %, the issue's expected limit, which would need every "
                f"non-subscriber, full-tree leaves included, to relay.")

    def e7_8(row):
        return (f"VCube-PS's false positives by churn rate: " + ", ".join(
            f"{r:g} %/min {x:.3f} %" for r, x in vb.false_positive_pct_mean.items())
            + f" ({runs}; the thesis: {float(p.vcubeps_false_positive_pct_b):g} % ± "
              f"{float(p.vcubeps_false_positive_pct_b_sd):g}).  A relay of VCube-PS is a node that unsubscribed "
              f"while a stale view still names it; at t_pp = 100 ms the UNS wave reaches everybody within about "
              f"a second, so stale relays are rare.")

    def e7_9(row):
        lo, hi = vb.index.min(), vb.index.max()
        lenient = _rule_b(options, setup, "lenient")
        parts = [f"reception {vb.latency_mean[lo]:.1f} -> {vb.latency_mean[hi]:.1f} ms",
                 f"delivery under strict CHECKCB {vb.delivery_latency_mean[lo]:.1f} -> {vb.delivery_latency_mean[hi]:.1f} ms "
                 f"({100 * vb.deliveries_mean[hi] / vb.subscriber_receptions_mean[hi]:.1f} % of the receptions "
                 f"delivered at {hi:g} %/min)"]
        thesis = float(p.vcubeps_latency_ratio_churn_x10)
        rs = vb.delivery_latency_mean[hi] / vb.delivery_latency_mean[lo]
        bracket = ""
        if lo in lenient.index and hi in lenient.index:
            parts.append(f"under lenient CHECKCB {lenient.delivery_latency_mean[lo]:.1f} -> "
                         f"{lenient.delivery_latency_mean[hi]:.1f} ms ({100 * lenient.deliveries_mean[hi] / lenient.subscriber_receptions_mean[hi]:.1f} % delivered)")
            rl = lenient.delivery_latency_mean[hi] / lenient.delivery_latency_mean[lo]
            inside = min(rl, rs) <= thesis <= max(rl, rs)
            bracket = (f"  The two delivery readings give × {rl:.2f} (lenient) and × {rs:.2f} (strict): the thesis's "
                       f"× {thesis:g} lies {'between' if inside else 'outside'} them.")
        dropped = 100 * vb.dropped_mean / vb.subscriber_receptions_mean
        strict = vb.delivery_latency_mean
        return (f"From {lo:g} to {hi:g} %/min ({runs}): " + "; ".join(parts) + ".  The thesis's latency is the "
                f"time to be \"received and delivered\" (§5.6.1): reception hardly moves.  The strict rule holds "
                f"messages at joiners until a later message of their source arrives, and these waits make its "
                f"delivery latency ({strict.min():.1f}-{strict.max():.1f} ms over the rates, highest at "
                f"{strict.idxmax():g} %/min); a held message whose node unsubscribes is dropped, not delivered, "
                f"and its wait enters no mean: {dropped[lo]:.1f} % of the receptions are dropped at {lo:g} %/min, "
                f"{dropped[hi]:.1f} % at {hi:g} %/min.  The lenient rule delivers the held messages at once."
                + bracket)

    def e7_10(row):
        return (f"The authors' WAIT_TIME is carried with the message and summed over its path (each hop adds its "
                f"queue wait and its own 1 ms of sending), not measured per copy: per path ours is "
                + ", ".join(f"{r:g} %/min {x:.2f}" for r, x in vb.path_wait_mean.items())
                + f" ms; per copy it is {vb.queue_wait_mean.max():.3f} ms at most.")

    def e7_12(row):
        return (f"SRPT's path wait by churn rate: " + ", ".join(
            f"{r:g} %/min {x:.2f} ms" for r, x in sb.path_wait_mean.items())
            + f"; latency {sb.latency_mean.min():.1f}-{sb.latency_mean.max():.1f} ms.  As for E7-11, the root "
              f"sends at most {d} copies of 1 ms per publication or membership change, so no queue builds at "
              f"any rate of panel (b); the thesis's 468 ms and 10 s need a far costlier membership protocol or "
              f"timing than stated.")

    def late(row):
        o = setup.order
        x = per_rule.loc["strict"]
        return (f"Section 6 ({o['minutes']:g}-minute runs at N_s = {o['ns']}, {o['rate']:g} %/min): the pseudo-code's "
                f"CHECKCB delivers {int(x.late)} messages after a causal successor ({int(x.late_immediate)} immediate "
                f"pairs, the thesis's own wording), out of {int(x.deliveries)} deliveries; the safe rule, which drops "
                f"the first_rec shortcut (A4:97), has {int(per_rule.loc['safe'].late)}.  The shortcut skips an "
                f"entry ⟨s, c⟩ that will never arrive, but not ⟨s, c⟩'s own causal past, which a barrier of direct "
                f"dependencies no longer names; a joiner can receive that past late.")

    def stable(row):
        churned = summary[(summary.swaps_per_minute_mean > 0) & (summary.system == "vcube_ps")]
        return (f"Under churn VCube-PS's stable subscribers receive {churned.stable_received_pct_mean.min():.2f}-"
                f"{churned.stable_received_pct_mean.max():.2f} % of the other nodes' publications but deliver "
                f"{churned.stable_delivered_pct_mean.min():.2f}-{churned.stable_delivered_pct_mean.max():.2f} % "
                f"(means per point): a relay whose view lacks a subscriber skips it, and strict CHECKCB then holds "
                f"what depends on the missed message until a later message of its source arrives.  SRPT-S never "
                f"holds a message (its root orders the topic).")

    why = {"003-F5.11a-E7-3-level": e7_3_level, "003-F5.11a-E7-11": e7_11, "003-F5.11a-E7-13": e7_13,
           "003-F5.11a-E7-13-fast": e7_13_fast, "003-F5.11a-E7-13-fast-sticky": e7_13_fast,
           "003-F5.11b-E7-8-mean": e7_8, "003-F5.11b-E7-8-monotone": e7_8,
           "003-F5.11b-E7-9-ratio": e7_9, "003-F5.11b-E7-9-delivery-strict": e7_9,
           "003-F5.11b-E7-9-delivery-lenient": e7_9, "003-F5.11b-E7-10": e7_10,
           "003-F5.11b-E7-12-knee": e7_12, "003-F5.11b-E7-12-wait5": e7_12, "003-F5.11b-E7-12-wait10": e7_12,
           "003-S5.4.1-late-strict": late, "003-S5.4.1-late-ab": late, "003-S5.4-stable-vcube_ps": stable}
    intro = f"This run: {setup.describe(0).replace(', 0 runs', '')}."
    return readings.explain(verdicts, why, intro)
