"""Figure 11 of seed 000 §5.5 (= thesis §4.5.6 Figure 4.9): one unique tree vs one tree per
source, with aggregation (notebook ``18_icpp18_figure11``).

Three sweeps of ``vcube_broadcast`` make the figure: the per-source trees with aggregation
(``multi``: notebook 10's AGG points), the tree of node 0 with and without aggregation
(``unique``: the same points as notebook 19) and a sensitivity run of the single tree with a
larger per-use propagation sigma (``unique_sigma``, spec §4 Figure 11).
"""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.engine import network
from causal_lab.families.vcube_broadcast import kernel

NOTEBOOK = "18_icpp18_figure11"
METRICS = ["aggregated_messages", "aggregated_packets", "delayed_pairs", "packets",
           "mean_reception_latency", "mean_vc_entries"]
SERIES = ("multi", "unique", "unique_sigma")
NAMES = {"aggregated_messages": "aggfewer", "delayed_pairs": "delayedfewer"}  # claim id parts
SIGMA_CAP = {"smoke": 32, "default": 512, "paper": 1024}  # largest N of the sigma run by default
# the ratio unique / multi is judged only where the multi trees produced at least this many events
# (aggregated messages, delayed pairs) summed over the replications: below it, one overtaking near
# the root of the unique tree decides the row (a 80 % reduction then leaves >= 20 unique-tree events)
MIN_EVENTS = 100


@dataclasses.dataclass(frozen=True)
class Setup:
    """The sizes each sweep covers and the model constants the checks need."""

    scale: str
    sizes: list  # per-source trees (every N of the scale)
    single_sizes: list  # single tree, AGG and NO_AGG
    sigma_sizes: list  # single tree, sensitivity sigma
    sigma: float  # the sensitivity run's per-use propagation sigma
    default_sigma: float
    single_max_n: int | None
    paper_sizes: list
    window: float
    t_t: float

    @classmethod
    def of(cls, experiment, scale: str, single_max_n=None, sigma_max_n=None, sigma=50.0) -> "Setup":
        sizes = list(experiment.grid[scale]["n_nodes"])
        cap = sigma_max_n if sigma_max_n is not None else SIGMA_CAP[scale]
        return cls(scale, sizes, [n for n in sizes if single_max_n is None or n <= single_max_n],
                   [n for n in sizes if n <= cap], float(sigma), experiment.param("tpp_sigma").default,
                   single_max_n, list(experiment.grid["paper"]["n_nodes"]),
                   experiment.param("window").default, experiment.param("t_t").default)

    def overrides(self) -> dict[str, dict]:
        """The three sweeps; the multi AGG and single NO_AGG points are shared with notebooks
        10 and 19, so they come from the result cache once either ran."""
        return {
            "multi": {"n_nodes": self.sizes, "aggregation": [True]},
            "single": {"n_nodes": self.single_sizes, "aggregation": [False, True], "trees": ["single"]},
            "single_sigma": {"n_nodes": self.sigma_sizes, "aggregation": [True], "trees": ["single"],
                             "tpp_sigma": [self.sigma]},
        }

    def missing(self, n: int) -> str:
        """Why the single tree has no run at N = n."""
        if n not in self.sizes:
            return f"N={n} not in the {self.scale} scale"
        return f"single tree stopped at N={self.single_max_n}"


def series(frame: pd.DataFrame, default_sigma: float) -> np.ndarray:
    """multi | unique (default sigma) | unique_sigma (sensitivity sigma), per row."""
    return np.where(frame.trees == "per_source", "multi",
                    np.where(frame.tpp_sigma == default_sigma, "unique", "unique_sigma"))


def means(summary: pd.DataFrame, setup: Setup) -> dict[str, pd.DataFrame]:
    """The AGG summary (Spark SQL means and CIs) of each series, indexed by every N of the scale."""
    agg = summary[summary.aggregation].assign(series=lambda f: series(f, setup.default_sigma))
    return {s: g.set_index("n_nodes").reindex(setup.sizes) for s, g in agg.groupby("series")}


def col(agg: dict, s: str, metric: str, stat: str = "mean") -> pd.Series:
    """One statistic of one series per N (NaN where the series did not run)."""
    if s in agg:
        return agg[s][f"{metric}_{stat}"]
    return pd.Series(np.nan, index=next(iter(agg.values())).index)


def ratio(agg: dict, s: str, metric: str) -> pd.Series:
    """Series / multi, where the multi-tree value is > 0 (the spec's check applies there)."""
    multi = col(agg, "multi", metric)
    return (col(agg, s, metric) / multi).where(multi > 0)


def exact_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Single-tree copies and packets per run beside N^2 - 1 (the delay-independent count)."""
    single = rows[rows.trees == "single"]
    exact = single.groupby(["n_nodes", "aggregation", "tpp_sigma"]).agg(
        runs=("rep", "size"), copies_min=("messages_carried", "min"), copies_max=("messages_carried", "max"),
        packets_min=("packets", "min"), packets_max=("packets", "max"),
        oracle_faults=("oracle_errors", "sum"),
    ).reset_index()
    exact.insert(3, "N^2-1", exact.n_nodes ** 2 - 1)
    return exact.rename(columns={"n_nodes": "N"})


def table(agg: dict, setup: Setup) -> pd.DataFrame:
    """Figure 11's data: ours per N and series (mean, ±95 % CI), ratios to multi, latencies."""
    def c(s, m, stat="mean", digits=1):
        return col(agg, s, m, stat).round(digits)

    sig = f"σ={setup.sigma:g}"
    return pd.DataFrame({
        "multi aggr. msgs": c("multi", "aggregated_messages"),
        "±CI": c("multi", "aggregated_messages", "ci95"),
        "unique aggr. msgs": c("unique", "aggregated_messages"),
        "±CI ": c("unique", "aggregated_messages", "ci95"),
        "unique/multi": ratio(agg, "unique", "aggregated_messages").round(4),
        "multi aggr. pkts": c("multi", "aggregated_packets"),
        "unique aggr. pkts": c("unique", "aggregated_packets"),
        "multi delayed": c("multi", "delayed_pairs"),
        "±CI  ": c("multi", "delayed_pairs", "ci95"),
        "unique delayed": c("unique", "delayed_pairs"),
        "±CI   ": c("unique", "delayed_pairs", "ci95"),
        "unique/multi ": ratio(agg, "unique", "delayed_pairs").round(4),
        f"{sig} aggr. msgs": c("unique_sigma", "aggregated_messages"),
        f"{sig} /multi": ratio(agg, "unique_sigma", "aggregated_messages").round(4),
        f"{sig} delayed": c("unique_sigma", "delayed_pairs"),
        f"{sig} /multi ": ratio(agg, "unique_sigma", "delayed_pairs").round(4),
        "recv. latency multi": c("multi", "mean_reception_latency"),
        "recv. latency unique": c("unique", "mean_reception_latency"),
        "VC entries multi": c("multi", "mean_vc_entries", digits=2),
        "VC entries unique": c("unique", "mean_vc_entries", digits=2),
    }, index=pd.Index(setup.sizes, name="N"))


def aggregation_spread(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """How the unique tree aggregates: the share of 2-message packets, the largest packet, and
    the per-run spread of its counts (one overtaking near the root aggregates a whole subtree)."""
    uni = rows[(rows.trees == "single") & rows.aggregation]
    share2 = uni.mpp_2.sum() / max(uni.aggregated_packets.sum(), 1)
    text = (f"unique-tree AGG runs: {100 * share2:.1f} % of the aggregated packets carry exactly 2 "
            f"messages; largest packet: {uni.max_messages_per_packet.max()} messages")
    spread = uni.groupby(["tpp_sigma", "n_nodes"]).aggregated_messages.agg(["min", "median", "max"])
    return text, spread.rename_axis(["tpp_sigma", "N"]).rename(columns=lambda c: f"aggr. msgs per run: {c}")


def probe(experiment, scale: str, setup: Setup, rows: pd.DataFrame, reps, base_seed: int) -> pd.DataFrame:
    """Re-simulate the single-tree AGG replications at N = 64 and 256 (same task seeds, so the
    same runs, each checked by ``run.verify()``) and count the aggregated packets that carry
    node 0's own message: node 0 is the root and a source, so its message can overtake one it
    has just delivered on a tree link."""
    sizes = [n for n in setup.single_sizes if n in (64, 256)] or setup.single_sizes[-1:]
    out = []
    for t in sweep.plan(experiment, scale, {"n_nodes": sizes, "aggregation": [True], "trees": ["single"]},
                        reps=reps, base_seed=base_seed):
        p = t.point
        seed = sweep.task_seed(base_seed, experiment, p, t.rep)
        schedule = kernel.Schedule.one_shot(p["n_nodes"].bit_length() - 1, p["window"], p["sources"], seed)
        run = kernel.simulate(schedule, net=network.from_point(p), seed=seed, aggregate=True,
                              trees="single", payload=p["payload"], tpp_per=p["tpp_per"])
        run.verify()
        aggregated = np.flatnonzero(run.packet_messages > 1)
        own = np.flatnonzero(run.sources == 0)  # node 0's message(s)
        swept = rows[rows.task_key == t.key].aggregated_packets.iloc[0]
        out.append({"N": p["n_nodes"], "rep": t.rep, "aggregated packets": len(aggregated),
                    "same as the sweep": len(aggregated) == swept,
                    "carrying node 0's message": int(np.isin(aggregated, run.recv_packet[own]).sum()),
                    "dependencies of node 0's message": int((run.vector_clocks[own[0]] > 0).sum() - 1)})
    return pd.DataFrame(out).set_index(["N", "rep"])


def plot(agg: dict, setup: Setup):
    """(a) aggregated messages and packets, (b) delayed messages, per series on log axes, with
    the paper's bound multi x (1 - published %) (zeros are not drawn)."""
    published = claims.table("000_figure11_claims").set_index("claim_id")
    sizes = setup.sizes
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    colors = {"multi": plotting.PALETTE["ours"], "unique": "tab:orange", "unique_sigma": "tab:green"}
    labels = {"multi": "one tree per source (multi)", "unique": f"unique tree (σ = {setup.default_sigma:g})",
              "unique_sigma": f"unique tree, sensitivity σ = {setup.sigma:g}"}
    markers = {"multi": "o-", "unique": "s-", "unique_sigma": "^--"}
    for ax, metric, title, cid in ((axes[0], "aggregated_messages", "(a) aggregated messages", "agg_fewer"),
                                   (axes[1], "delayed_pairs", "(b) delayed messages", "delayed_fewer")):
        for s in SERIES:
            ax.plot(sizes, col(agg, s, metric).where(lambda v: v > 0), markers[s], color=colors[s], label=labels[s])
            if metric == "aggregated_messages":
                ax.plot(sizes, col(agg, s, "aggregated_packets").where(lambda v: v > 0), ":", color=colors[s],
                        lw=1, label=f"{labels[s]}: aggregated packets")
        pct = published.loc[cid, "value"]
        bound = col(agg, "multi", metric) * (1 - pct / 100)
        ax.plot(sizes, bound.where(lambda v: v > 0), "--", color=plotting.PALETTE["paper"], lw=1,
                label=f"paper: unique ≤ multi × (1 − {pct:g} %)")
        ax.set(xscale="log", yscale="log", xlabel="nodes N", ylabel="per run (mean)", title=title)
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.legend(fontsize=7)
    fig.suptitle("Figure 11: unique tree vs one tree per source, with aggregation (zeros not drawn)", fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------


def _exact(rows: pd.DataFrame, setup: Setup) -> dict[str, Measured]:
    """Every single-tree run carries N^2 - 1 copies, NO_AGG sends N^2 - 1 packets, the oracle
    finds no fault (sanity: ``run.verify()`` asserts the copies and the causal order)."""
    out: dict[str, Measured] = {}
    single = rows[rows.trees == "single"]
    for n in setup.paper_sizes:
        runs = single[single.n_nodes == n]
        ids = (f"000-F11-copies-N{n}", f"000-F11-noaggr-packets-N{n}", f"000-F11-oracle-N{n}")
        if runs.empty:
            out.update({i: not_run(setup.missing(n)) for i in ids})
            continue
        copies = runs.messages_carried
        out[ids[0]] = Measured(bool((copies == n * n - 1).all()),
                               f"{copies.min()}..{copies.max()} over {len(runs)} runs")
        plain = runs[~runs.aggregation].packets
        out[ids[1]] = Measured(bool((plain == n * n - 1).all()),
                               f"{plain.min()}..{plain.max()} over {len(plain)} runs")
        bad = int(runs[["oracle_errors", "oracle_duplicates", "oracle_missing"]].to_numpy().sum())
        out[ids[2]] = Measured(bad == 0, str(bad))
    return out


def multi_totals(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """Per metric, the multi-tree (per-source AGG) events per N summed over the replications."""
    multi = rows[(rows.trees == "per_source") & rows.aggregation]
    return {m: multi.groupby("n_nodes")[m].sum() for m in NAMES}


def _fewer(agg: dict, setup: Setup, totals: dict[str, pd.Series]) -> dict[str, Measured]:
    """unique <= 0.2 x multi per N where the multi trees gave at least ``MIN_EVENTS`` events,
    and the smallest reduction over those N (also for the sensitivity sigma, a REPORT reading),
    against the published >= 86 % / >= 84 % fewer."""
    out: dict[str, Measured] = {}
    for metric, what in NAMES.items():
        multi, uni = col(agg, "multi", metric), col(agg, "unique", metric)
        total = totals[metric]
        enough = [n for n in setup.sizes if total.get(n, 0) >= MIN_EVENTS]
        for n in setup.paper_sizes:
            cid = f"000-F11-{what}-N{n}"
            if n not in setup.sizes or np.isnan(uni.get(n, np.nan)):
                out[cid] = not_run(setup.missing(n))
            elif n not in enough:
                out[cid] = not_run(f"multi trees: {int(total.get(n, 0))} events over the replications at N={n}, "
                                   f"below the minimum of {MIN_EVENTS} (unique {uni[n]:.1f} / multi {multi[n]:.1f} per run)")
            else:
                r = uni[n] / multi[n]
                out[cid] = Measured(float(r), f"{r:.3f} ({100 * (1 - r):.1f} % fewer: unique {uni[n]:.1f} "
                                              f"/ multi {multi[n]:.1f})")
        for s, suffix in (("unique", "min"), ("unique_sigma", "min-sigma")):
            red = (100 * (1 - ratio(agg, s, metric))).dropna()
            red = red[red.index.isin(enough)]
            cid = f"000-F11-{what}-{suffix}"
            if len(red) == 0:
                out[cid] = not_run(f"no N with at least {MIN_EVENTS} multi-tree events at the {setup.scale} scale")
                continue
            note = f"single-tree tpp_sigma = {setup.sigma:g}" if s == "unique_sigma" else ""
            out[cid] = Measured(float(red.min()), f"{red.min():.1f} % at N={red.idxmin()} "
                                f"(N = {red.index.min()}..{red.index.max()})", note)
    return out


def _bottleneck(agg: dict, setup: Setup) -> dict[str, Measured]:
    """Root contention: unique-tree aggregations drop at N = 1024; unique-tree reception latency
    above multi for N >= 128 and super-linear beyond the saturation point."""
    out: dict[str, Measured] = {}
    a = col(agg, "unique", "aggregated_messages")
    ci = col(agg, "unique", "aggregated_messages", "ci95")
    a1, a0 = a.get(1024, np.nan), a.get(512, np.nan)
    if np.isnan(a1) or np.isnan(a0):
        why = f"N=1024 not run at the {setup.scale} scale"
        out["000-F11-aggdrop-N1024"] = not_run(why + (f" (single_max_n={setup.single_max_n})"
                                                      if setup.single_max_n else ""))
    else:
        zero = " (zero at N=1024: no point on the log plot)" if a1 == 0 else ""
        out["000-F11-aggdrop-N1024"] = Measured(
            bool(a1 < a0), f"{a1:.1f} ± {ci[1024]:.1f} at N=1024 vs {a0:.1f} ± {ci[512]:.1f} at N=512{zero}")
    lat_u, lat_m = col(agg, "unique", "mean_reception_latency"), col(agg, "multi", "mean_reception_latency")
    for n in [n for n in setup.paper_sizes if n >= 128]:
        if np.isnan(lat_u.get(n, np.nan)):
            out[f"000-F11-latency-N{n}"] = not_run(f"N={n} not run at the {setup.scale} scale")
        else:
            out[f"000-F11-latency-N{n}"] = Measured(bool(lat_u[n] > lat_m[n]),
                                                    f"{lat_u[n]:.1f} vs {lat_m[n]:.1f} u.t.")
    n_sat = min(n for n in setup.paper_sizes if n * np.log2(n) * setup.t_t > setup.window)
    points = lat_u.loc[[n for n in setup.paper_sizes if n >= n_sat // 2 and n in setup.sizes]].dropna()
    if len(points) >= 3:
        inc = np.diff(points.to_numpy())
        shown = (f"increments per doubling {', '.join(f'{v:.0f}' for v in inc)} u.t. (N = {points.index[0]}.."
                 f"{points.index[-1]}); ratios "
                 f"{', '.join(f'{v:.2f}' for v in points.to_numpy()[1:] / points.to_numpy()[:-1])}")
        out["000-F11-superlinear"] = Measured(bool((np.diff(inc) > 0).all()), shown, f"N_sat = {n_sat}")
    else:
        out["000-F11-superlinear"] = not_run(f"fewer than 3 sizes >= {n_sat // 2} at the {setup.scale} scale")
    return out


def measure(rows: pd.DataFrame, agg: dict, setup: Setup) -> dict[str, Measured]:
    """Every claim of the notebook from the sweep rows and the per-series means (``means``)."""
    return {**_exact(rows, setup), **_fewer(agg, setup, multi_totals(rows)), **_bottleneck(agg, setup)}


def reading(verdicts: pd.DataFrame, rows: pd.DataFrame, agg: dict, setup: Setup) -> str:
    """The explanation of this run's verdicts from the verdict table, the rows and ``means``."""
    from causal_lab.families.vcube_broadcast.artifacts import reading as rd

    ids = list(verdicts["id"])
    exact = [c for c in ids if c.startswith(("000-F11-copies", "000-F11-noaggr-packets", "000-F11-oracle"))]
    paragraphs = [(exact, (
        f"*Exact counts (sanity, {rd.which(verdicts, exact)}).* Every single-tree run carries N² - 1 message copies "
        "and every single-tree NO_AGG run sends N² - 1 packets; these counts do not depend on the delays, so a "
        "deviation would be a bug."))]
    totals = multi_totals(rows)
    for metric, what, label, pct_paper in (("aggregated_messages", "aggfewer", "aggregated messages", 86),
                                           ("delayed_pairs", "delayedfewer", "delayed pairs", 84)):
        per_n = [f"000-F11-{what}-N{n}" for n in setup.paper_sizes]
        judged = [c for c in per_n if rd.verdict(verdicts, c) != "NOT_RUN"]
        skipped = [n for n in setup.sizes if rd.verdict(verdicts, f"000-F11-{what}-N{n}") == "NOT_RUN"]
        red = (100 * (1 - ratio(agg, "unique", metric))).loc[[int(c.rsplit("N", 1)[1]) for c in judged]]
        text = f"*Unique vs multi, {label} ({rd.which(verdicts, per_n + [f'000-F11-{what}-min'])}).* "
        if len(red):
            span = f"N = {red.index.min()}" + (f"..{red.index.max()}" if len(red) > 1 else "")
            text += (f"Where the multi trees give at least {MIN_EVENTS} events over the replications "
                     f"({span}), the unique tree has {red.min():.1f}-{red.max():.1f} % "
                     f"fewer {label}, the smallest gap at N = {red.idxmin()} (paper: at least {pct_paper} %, smallest "
                     f"at N = {32 if what == 'aggfewer' else 128}).  ")
        if skipped:
            text += ("Below that count the row is NOT_RUN: " + ", ".join(
                f"N = {n} ({int(totals[metric].get(n, 0))} events)" for n in skipped)
                + "; there one overtaking of node 0's own message near the root decides the ratio.")
        paragraphs.append((per_n + [f"000-F11-{what}-min"], text))
    a = col(agg, "unique", "aggregated_messages")
    if rd.ran(verdicts, "000-F11-aggdrop-N1024"):
        runs = rows[(rows.trees == "single") & rows.aggregation & (rows.n_nodes == 1024)
                    & (rows.tpp_sigma == setup.default_sigma)].aggregated_messages
        vc = col(agg, "unique", "mean_vc_entries")
        paragraphs.append((["000-F11-aggdrop-N1024"], (
            f"*Unique-tree aggregations at N = 1024 ({rd.verdict(verdicts, '000-F11-aggdrop-N1024')}).* "
            f"{a[1024]:.1f} ± {col(agg, 'unique', 'aggregated_messages', 'ci95')[1024]:.1f} per run at N = 1024 (runs: "
            f"{', '.join(str(int(x)) for x in sorted(runs))}) against {a[512]:.1f} at N = 512.  Root contention is "
            f"visible: the unique-tree messages carry {vc[1024]:.2f} vector-clock entries at N = 1024 against "
            f"{vc[64]:.2f} at N = 64.  But one overtaking of node 0's message yields about as many aggregated messages "
            f"as a subtree holds, so the per-run counts are bimodal and a few replications settle little.")))
    sig = ["000-F11-aggfewer-min-sigma", "000-F11-delayedfewer-min-sigma"]
    if rd.ran(verdicts, *sig):
        rs = ratio(agg, "unique_sigma", "aggregated_messages").dropna()
        paragraphs.append((sig, (
            f"*Sensitivity σ = {setup.sigma:g} on the single tree (REPORT).* A larger per-use σ makes overtaking more "
            f"likely: unique / multi aggregated messages {', '.join(f'{v:.2f} (N={n})' for n, v in rs.items())}.  The "
            f"spec suggested this run because its prototype had no single-tree aggregation at σ = 25; ours has "
            f"{'non-zero means at every N' if (a.dropna() > 0).all() else 'zeros at some N'} at σ = 25.  Reported, "
            "not judged.")))
    lat = [c for c in ids if c.startswith("000-F11-latency") or c == "000-F11-superlinear"]
    lu, lm = col(agg, "unique", "mean_reception_latency"), col(agg, "multi", "mean_reception_latency")
    big = [n for n in setup.sizes if n >= 128 and not np.isnan(lu.get(n, np.nan))]
    if big:
        paragraphs.append((lat, (
            f"*Bottleneck ({rd.which(verdicts, lat)}).* From N = 128 on the unique-tree reception latency exceeds the "
            f"multi-tree one: " + ", ".join(f"{lu[n]:.0f} vs {lm[n]:.0f} u.t. (N = {n})" for n in big)
            + "; notebook 19 (Figure 1) studies the growth.")))
    return rd.compose(verdicts, paragraphs, "No parameter was tuned.  Spec and seed agree on this figure (the "
                                            "spec's reading \"smallest gap at 32 / 128 nodes\" of \"performed by "
                                            "32 nodes (resp., 128 nodes)\" is kept).")
