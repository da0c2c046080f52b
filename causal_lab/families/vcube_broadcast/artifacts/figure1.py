"""Figure 1 of seed 000 §1 (= thesis §2.4.1 Figure 2.9 = §4.5.6 Figure 4.8): reception latency,
one fixed tree vs one tree per source (notebook ``19_icpp18_figure1``).

The figure's data come from the authors' 2017 publish/subscribe study, whose publication instants
are uniform in [0, 1000] (thesis §5.6.3): the **primary** run is therefore both trees without
aggregation at the literal window W = 1000 (spec §3.5 W1), N = 8..1024.  The default model of
notebooks 10-18 (W = 500, calibrated on Table 1) is shown beside it as a REPORT reading: the
per-source trees are notebook 10's NO_AGG points and the tree of node 0 (with and without
aggregation) notebook 18's.
"""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run

NOTEBOOK = "19_icpp18_figure1"
METRICS = ["mean_reception_latency", "max_reception_latency", "mean_queue_wait"]
PRIMARY_CAP = {"smoke": 32, "default": 1024, "paper": 1024}  # largest N of the primary run by default
W_LITERAL = 1000.0  # the window of the 2017 study: the primary run
EXCESS_HOPS = 1.3  # the top of the one-hop ±30 % band: beyond it the root is queuing


def no_contention_excess(n) -> np.ndarray:
    """Fixed tree minus per-source trees, in hops, without queueing: every source but node 0 adds
    the delegate hop to node 0, except for node 0 itself as a receiver, and node 0's own message
    takes none; over the N(N - 1) pairs this is (N - 1)/N - log2 N / (2(N - 1)) hops (0.66 at
    N = 8), of which the paper's "+1 hop" is the large-N limit."""
    n = np.asarray(n, dtype=float)
    return (n - 1) / n - np.log2(n) / (2 * (n - 1))


@dataclasses.dataclass(frozen=True)
class Setup:
    """The sizes each sweep covers and the model constants the checks need."""

    scale: str
    sizes: list  # every N of the scale (the default window's per-source trees)
    single_sizes: list  # single tree (NO_AGG and AGG), default window
    primary_sizes: list  # both trees, NO_AGG, primary window
    windows: tuple  # (primary window, default window)
    paper_sizes: list
    t_t: float
    hop: float  # t_pc + t_t + E[t_pp]: one hop without queuing

    @classmethod
    def of(cls, experiment, scale: str, single_max_n=None, primary_window=W_LITERAL, primary_max_n=None) -> "Setup":
        sizes = list(experiment.grid[scale]["n_nodes"])
        cap = primary_max_n if primary_max_n is not None else PRIMARY_CAP[scale]
        t_t = experiment.param("t_t").default
        return cls(scale, sizes, [n for n in sizes if single_max_n is None or n <= single_max_n],
                   [n for n in sizes if n <= cap], (float(primary_window), experiment.param("window").default),
                   list(experiment.grid["paper"]["n_nodes"]), t_t,
                   experiment.param("t_pc").default + t_t + experiment.param("tpp_mean").default)

    @property
    def primary(self) -> float:
        return self.windows[0]

    @property
    def default(self) -> float:
        return self.windows[1]

    def overrides(self) -> dict[str, dict]:
        """The three sweeps (the default window's per-source NO_AGG and single-tree points are
        shared with notebooks 10 and 18, so they come from the result cache once those ran)."""
        return {
            "primary": {"n_nodes": self.primary_sizes, "aggregation": [False], "trees": ["per_source", "single"],
                        "window": [self.primary]},
            "multi": {"n_nodes": self.sizes, "aggregation": [False]},
            "single": {"n_nodes": self.single_sizes, "aggregation": [False, True], "trees": ["single"]},
        }

    def saturation_point(self, window: float) -> int:
        """Smallest N with N log2 N t_t > W: the root cannot send its N log2 N packets within
        the window."""
        return min(n for n in self.paper_sizes if n * np.log2(n) * self.t_t > window)


def _get(summary, sizes, trees, window, aggregation=False, metric="mean_reception_latency", stat="mean"):
    g = summary[(summary.trees == trees) & (summary.window == window) & (summary.aggregation == aggregation)]
    return g.set_index("n_nodes")[f"{metric}_{stat}"].reindex(sizes)


def frames(summary: pd.DataFrame, setup: Setup) -> dict[float, pd.DataFrame]:
    """Per window, per N: both latencies (Spark SQL means, ±95 % CI), the fixed tree's excess in
    u.t. and hops beside its no-contention value, their ratio and the queue waits."""
    n = np.array(setup.sizes)
    out = {}
    for w in setup.windows:
        def get(trees, aggregation=False, metric="mean_reception_latency", stat="mean"):
            return _get(summary, setup.sizes, trees, w, aggregation, metric, stat)
        multi, single = get("per_source"), get("single")
        out[w] = pd.DataFrame({
            "per-source": multi.round(1),
            "±CI": get("per_source", stat="ci95").round(1),
            "fixed tree": single.round(1),
            "±CI ": get("single", stat="ci95").round(1),
            "fixed tree AGG": get("single", True).round(1),
            "excess (u.t.)": (single - multi).round(1),
            "excess (hops)": ((single - multi) / setup.hop).round(3),
            # no contention, the excess is one delegate hop minus what the root and node 0's own messages save
            "no-contention excess (hops)": np.round(no_contention_excess(n), 3),
            "fixed / per-source": (single / multi).round(3),
            "t_q fixed": get("single", metric="mean_queue_wait").round(2),
            "t_q per-source": get("per_source", metric="mean_queue_wait").round(2),
        }, index=pd.Index(setup.sizes, name="N"))
    return out


def table(frames: dict) -> pd.DataFrame:
    """Both windows in one table (the sizes a window did not run are left out)."""
    return pd.concat(frames, names=["W"]).dropna(subset=["per-source", "fixed tree"], how="all")


def observed(frames: dict) -> dict[float, int | None]:
    """Observed saturation point per window: the smallest N whose excess leaves the one-hop band."""
    out = {}
    for w, f in frames.items():
        excess = f["excess (hops)"].dropna()
        above = excess.index[excess > EXCESS_HOPS]
        out[w] = int(above.min()) if len(above) else None
    return out


def saturation(frames: dict, setup: Setup) -> pd.DataFrame:
    """Analytic (N log2 N t_t > W) and observed (excess > 1.3 hops) saturation point per window."""
    seen = observed(frames)
    return pd.DataFrame({"analytic: N log2 N t_t > W": [setup.saturation_point(w) for w in frames],
                         f"observed: excess > {EXCESS_HOPS:g} hops": [seen[w] for w in frames]},
                        index=pd.Index(list(frames), name="W"))


def plot(frames: dict, setup: Setup):
    """Latency per window: per-source, fixed tree (NO_AGG, AGG), the one-hop band, the analytic
    saturation point and the thesis' "> 128"."""
    published = claims.table("000_figure1_claims").set_index("claim_id")
    limit = published.loc["saturation_above", "value"]
    sizes, hop = setup.sizes, setup.hop
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, w in zip(axes, setup.windows):
        f = frames[w]
        ax.fill_between(sizes, f["per-source"] + 0.7 * hop, f["per-source"] + 1.3 * hop, color="0.85",
                        label="per-source + one hop ±30 %")
        ax.errorbar(sizes, f["per-source"], yerr=f["±CI"], fmt="o-", color=plotting.PALETTE["ours"],
                    capsize=3, label="one tree per source (NO_AGG)")
        ax.errorbar(sizes, f["fixed tree"], yerr=f["±CI "], fmt="s-", color="tab:orange", capsize=3,
                    label="one fixed tree, node 0 (NO_AGG)")
        if f["fixed tree AGG"].notna().any():
            ax.plot(sizes, f["fixed tree AGG"], "x:", color="tab:brown", label="one fixed tree, with aggregation")
        n_sat = setup.saturation_point(w)
        ax.axvline(n_sat, ls="--", color="0.4", lw=1, label=f"N log2 N t_t > W (N = {n_sat})")
        ax.axvline(limit, ls=":", color=plotting.PALETTE["paper"], lw=1.5,
                   label=f"thesis: root queues for N > {limit:g}")
        ax.set(xscale="log", yscale="log", xlabel="nodes N",
               title=f"W = {w:g} u.t." + (" (primary: the 2017 study's window)" if w == setup.primary
                                          else " (default model of notebooks 10-18)"))
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.legend(fontsize=7)
    axes[0].set_ylabel("mean reception latency (u.t.)")
    ticks = [100, 200, 500, 1000, 2000, 5000, 10000]
    axes[0].set_yticks(ticks, [str(t) for t in ticks])
    axes[0].set_ylim(150, None)
    fig.suptitle("Figure 1: reception latency, one fixed tree vs one tree per source", fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------


def _lat(frames, w, n, trees):
    return frames[w]["per-source" if trees == "multi" else "fixed tree"].get(n, np.nan)


def _seed000(frames: dict, setup: Setup) -> dict[str, Measured]:
    """Seed 000 §1 on the primary window: the no-contention excess (N <= 64), the root queues and
    its latency grows super-linearly, more than twice the per-source latency at N >= 512, the
    per-source trees scale; the same shapes at the default window are REPORT rows."""
    out: dict[str, Measured] = {}
    w1, w0, scale, hop = setup.primary, setup.default, setup.scale, setup.hop
    seen = observed(frames)
    for n in [n for n in setup.paper_sizes if n <= 64]:
        if n not in setup.primary_sizes or np.isnan(_lat(frames, w1, n, "single")):
            out[f"000-F1-onehop-N{n}"] = not_run(f"N={n} not run at W={w1:g} at the {scale} scale")
            continue
        ex = (_lat(frames, w1, n, "single") - _lat(frames, w1, n, "multi")) / hop
        nc = float(no_contention_excess(n))
        out[f"000-F1-onehop-N{n}"] = Measured(float(ex / nc), f"{ex / nc:.2f} ({ex:.2f} hops, no-contention "
                                                               f"{nc:.2f})")
    for w in (w1, w0):
        cid = f"000-F1-superlinear-W{w:g}"
        n_sat = setup.saturation_point(w)
        pts = frames[w]["fixed tree"].loc[[n for n in setup.sizes if n >= n_sat // 2]].dropna()
        if len(pts) < 3:
            out[cid] = not_run(f"fewer than 3 sizes >= {n_sat // 2} at W={w:g} at the {scale} scale")
            continue
        inc = np.diff(pts.to_numpy())
        out[cid] = Measured(bool((np.diff(inc) > 0).all()), f"increments per doubling "
                            f"{', '.join(f'{v:.0f}' for v in inc)} u.t. (N = {pts.index[0]}..{pts.index[-1]})")
    n_sat = setup.saturation_point(w1)
    have = frames[w1]["excess (hops)"].dropna()
    if len(have) == 0 or have.index.max() < n_sat:
        out[f"000-F1-queues-W{w1:g}"] = not_run(f"no N >= {n_sat} at W={w1:g} at the {scale} scale")
    else:
        out[f"000-F1-queues-W{w1:g}"] = Measured(seen[w1] is not None, f"excess > {EXCESS_HOPS:g} hops from "
                                                 f"N={seen[w1]} (N log2 N t_t > W from N={n_sat})")
    for w in (w1, w0):
        for n in [n for n in setup.paper_sizes if n >= 512]:
            cid = f"000-F1-twice-N{n}-W{w:g}"
            if np.isnan(_lat(frames, w, n, "single")) or np.isnan(_lat(frames, w, n, "multi")):
                out[cid] = not_run(f"N={n} not run at W={w:g} at the {scale} scale")
                continue
            s, m = _lat(frames, w, n, "single"), _lat(frames, w, n, "multi")
            out[cid] = Measured(float(s / m), f"ratio {s / m:.2f} ({s:.0f} vs {m:.0f} u.t.)")
    n_lo, n_hi = min(setup.paper_sizes), max(setup.paper_sizes)
    if np.isnan(_lat(frames, w1, n_hi, "multi")):
        out["000-F1-scales"] = not_run(f"N={n_hi} not run at W={w1:g} at the {scale} scale")
    else:
        r = _lat(frames, w1, n_hi, "multi") / _lat(frames, w1, n_lo, "multi")
        out["000-F1-scales"] = Measured(float(r), f"ratio {r:.2f}")
    return out


def _seed003(frames: dict, setup: Setup) -> dict[str, Measured]:
    """Thesis: the root queues "for a number of nodes greater than 128" (the first size above
    128 is the observed saturation point; primary window, and the default one as a REPORT row),
    and the §5.6.3 corroboration at W = 1000: one hop up to 128 nodes, 2.48x at 256, a ratio
    growing beyond."""
    out: dict[str, Measured] = {}
    published = claims.table("000_figure1_claims").set_index("claim_id")
    w1, w0, scale = setup.primary, setup.default, setup.scale
    seen = observed(frames)
    limit = int(published.loc["saturation_above", "value"])
    first_above = min(n for n in setup.paper_sizes if n > limit)
    for w in (w1, w0):
        cid = f"003-F2.9-saturation-W{w:g}"
        have = [n for n in setup.paper_sizes if n <= first_above
                and not np.isnan(frames[w]["excess (hops)"].get(n, np.nan))]
        if first_above not in have:
            out[cid] = not_run(f"N={first_above} not run at W={w:g} at the {scale} scale")
            continue
        out[cid] = Measured(seen[w] == first_above,
                            f"{seen[w]} (N log2 N t_t > W from N={setup.saturation_point(w)})")
    at = int(published.loc["one_hop_up_to", "at_n"])
    ex = frames[w1]["excess (hops)"].loc[[n for n in setup.sizes if n <= at]].dropna()
    if len(ex) == 0 or ex.index.max() < at:
        out["003-F2.9-onehop-W1000"] = not_run(f"N={at} not run at W={w1:g} at the {scale} scale")
    else:
        out["003-F2.9-onehop-W1000"] = Measured(float(ex.mean()), f"mean {ex.mean():.2f} hops (N = {ex.index.min()}.."
                                                f"{ex.index.max()}: {', '.join(f'{v:.2f}' for v in ex)})")
    n = int(published.loc["ratio_at_256", "at_n"])
    if np.isnan(_lat(frames, w1, n, "single")):
        out["003-F2.9-ratio-N256-W1000"] = not_run(f"N={n} not run at W={w1:g} at the {scale} scale")
    else:
        r = _lat(frames, w1, n, "single") / _lat(frames, w1, n, "multi")
        r0 = _lat(frames, w0, n, "single") / _lat(frames, w0, n, "multi")
        out["003-F2.9-ratio-N256-W1000"] = Measured(float(r), f"{r:.2f} (default W={w0:g}: {r0:.2f})")
    at = int(published.loc["ratio_grows", "at_n"])
    ratios = (frames[w1]["fixed tree"] / frames[w1]["per-source"]).loc[[n for n in setup.sizes if n >= at]].dropna()
    if len(ratios) < 2:
        out["003-F2.9-ratiogrows-W1000"] = not_run(f"fewer than 2 sizes >= {at} at W={w1:g} at the {scale} scale")
    else:
        out["003-F2.9-ratiogrows-W1000"] = Measured(bool((np.diff(ratios.to_numpy()) > 0).all()),
                                                    ", ".join(f"{v:.2f} (N={k})" for k, v in ratios.items()))
    return out


def measure(frames: dict, setup: Setup) -> dict[str, Measured]:
    """Every claim of the notebook from ``frames`` (both windows)."""
    return {**_seed000(frames, setup), **_seed003(frames, setup)}


def reading(verdicts: pd.DataFrame, frames: dict, setup: Setup) -> str:
    """The explanation of this run's verdicts from the verdict table and ``frames``."""
    from causal_lab.families.vcube_broadcast.artifacts import reading as rd

    w1, w0, hop = setup.primary, setup.default, setup.hop
    f1, f0 = frames[w1], frames[w0]
    seen = observed(frames)
    ids = list(verdicts["id"])
    paragraphs = []
    one = [c for c in ids if c.startswith("000-F1-onehop")]
    ex = f1[["excess (hops)", "no-contention excess (hops)"]].dropna().loc[lambda f: f.index <= 64]
    if len(ex):
        paragraphs.append((one, (
            f"*No contention, N <= 64 at W = {w1:g} ({rd.which(verdicts, one)}).* The fixed tree's excess over the "
            f"per-source trees is " + ", ".join(f"{r['excess (hops)']:.2f} hop (N = {n}; no-contention "
                                                f"{r['no-contention excess (hops)']:.2f})" for n, r in ex.iterrows())
            + ".  Averaged over all (message, receiver) pairs, the fixed tree adds the delegate hop for every source "
              "other than node 0, but node 0 itself receives a delegated message after that single hop and node 0's "
              "own message takes none: the expected excess is (N - 1)/N - log2 N / (2(N - 1)) hops, 0.66 at N = 8, "
              "and the paper's \"+1 hop\" is its large-N limit.  Each row compares ours with that value (±30 %).")))
    sat = ["000-F1-queues-W1000", "000-F1-superlinear-W1000", "000-F1-twice-N512-W1000", "000-F1-twice-N1024-W1000",
           "000-F1-scales", "003-F2.9-saturation-W1000"]
    big = f1[["fixed tree", "per-source"]].dropna()
    if len(big) and big.index.max() >= 256 and seen[w1] is not None:
        inc = np.diff(big["fixed tree"].loc[big.index >= setup.saturation_point(w1) // 2].to_numpy())
        ratio = big["fixed tree"] / big["per-source"]
        paragraphs.append((sat, (
            f"*The root saturates at W = {w1:g} ({rd.which(verdicts, sat)}).* The excess leaves the one-hop band at "
            f"N = {seen[w1]} ({f1.loc[seen[w1], 'excess (hops)']:.1f} hops; N log2 N t_t > W from "
            f"N = {setup.saturation_point(w1)}; thesis: \"greater than 128\"), then grows super-linearly "
            f"({', '.join(f'{v:.0f}' for v in inc)} u.t. per doubling); the fixed tree is "
            + ", ".join(f"{ratio[n]:.1f}x (N = {n})" for n in ratio.index if n >= 512)
            + f" slower than the per-source trees, whose latency grows {big['per-source'].iloc[-1] / big['per-source'].iloc[0]:.2f}x "
              f"from N = {big.index[0]} to {big.index[-1]} (<= 4.5x).")))
    cor = ["003-F2.9-onehop-W1000", "003-F2.9-ratio-N256-W1000", "003-F2.9-ratiogrows-W1000"]
    if rd.ran(verdicts, *cor):
        r = (f1["fixed tree"] / f1["per-source"]).dropna()
        paragraphs.append((cor, (
            f"*Thesis §5.6.3 corroboration ({rd.which(verdicts, cor)}).* The fixed tree is on average "
            f"{f1['excess (hops)'].loc[f1.index <= 128].mean():.2f} hop above the per-source trees for N <= 128; the "
            f"latency ratio is {r[256]:.2f} at N = 256 (thesis 2.48) and grows beyond ("
            + ", ".join(f"{v:.2f} at N = {n}" for n, v in r.items() if n > 256)
            + ").  That framework differs in details (a random root, a fixed t_pp = 100, publish/subscribe), so these "
              "rows are corroboration only.")))
    rep = [c for c in ids if c.endswith("-W500")]
    if len(f0.dropna(subset=["fixed tree"])) and seen[w0] is not None:
        paragraphs.append((rep, (
            f"*The default model, W = {w0:g} (REPORT).* With the window calibrated on Table 1 the root saturates one "
            f"doubling earlier: the excess leaves the one-hop band at N = {seen[w0]} "
            f"(N log2 N t_t > W from N = {setup.saturation_point(w0)}), so the thesis' \"greater than 128\" is "
            f"{'met' if seen[w0] == 256 else 'missed by one size'} there; the root must send N log2 N packets at one "
            f"per u.t., so the saturation point is set by the window.  Figure 1's data come from the 2017 study with "
            f"publication instants uniform in [0, 1000], hence W = {w1:g} as the primary run.  Aggregation does not "
            f"change the fixed tree's latency (the \"fixed tree AGG\" column).")))
    return rd.compose(verdicts, paragraphs, "No parameter was tuned: W = 1000 is the spec's literal reading of "
                                            "\"λ = 1000\" (§3.5 W1) and the 2017 study's window.")
