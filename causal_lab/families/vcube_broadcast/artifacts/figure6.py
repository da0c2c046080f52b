"""Figure 6 of seed 000 §5.2 (= thesis §4.5.3 Figure 4.3): causal dependencies per message,
N = 256 (notebook ``13_icpp18_figure6``).

The dependencies of a message are its Birman-compressed vector-clock entries minus its own
(spec §3.3, W9).  The runs are notebook 10's N = 256 points, AGG and NO_AGG (same base seed and
replications: no new simulation at the default scale).  Means over the replications are taken
with pandas on the few returned rows: ``sweep.summarize`` would start Spark for a handful of
numbers.  The seeds give no figure image, only prose numbers; the 5-9 bin is 18.4 % in seed 000
and 16.8 % in the thesis, and both are REPORT rows (spec §0.1: "both reported; soft target").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from causal_lab import claims, sweep
from causal_lab.claims import Measured, not_run
from causal_lab.families.vcube_broadcast import experiments

NOTEBOOK = "13_icpp18_figure6"
SMOKE_N = 64  # the smoke scale's N, where the comparisons with the published N = 256 are NOT_RUN
VARIANTS = {"NO_AGG": False, "AGG": True}
# bins as in the spec (0, 1-4, 5-9, ..., 50-54, >= 55), labelled like the published ones -> columns
BINS = {(f"{lo}" if lo == hi else f"{lo}-{hi}" if hi < 10**9 else f">= {lo}"): f"deps_{key}"
        for key, (lo, hi) in experiments.DEPENDENCIES.items()}
METRICS = [*BINS.values(), "deps_gt12", "max_dependencies"]


def published() -> tuple[pd.DataFrame, pd.Series, int]:
    """The published shares (with a ``label`` named like our bins; the open-ended row is the
    "> 12" share, not a bin), the prose numbers, and the published N."""
    paper = claims.table("000_figure6_dependencies")
    text = claims.table("000_figure6_text").set_index("quantity").value

    def label(r):
        if pd.isna(r.hi):
            return f"> {r.lo - 1}"
        return f"{r.lo}" if r.lo == r.hi else f"{r.lo}-{int(r.hi)}"

    return paper.assign(label=paper.apply(label, axis=1)), text, int(paper.n_nodes.iloc[0])


def paper_bins() -> tuple[pd.Series, pd.Series]:
    """The published bins per seed: seed 000's, and the thesis's (003 differs only where it
    prints its own number, the 5-9 bin)."""
    pub = published()[0]
    pub_bins = pub[pub.hi.notna()]
    col_000 = pub_bins[pub_bins.source.str.startswith("000")].set_index("label").pct_messages
    col_003 = pub_bins[pub_bins.source.str.startswith("003")].set_index("label").pct_messages
    return col_000, col_003


def gt12_paper() -> float:
    """The published share of messages with more than 12 dependencies."""
    pub = published()[0]
    return float(pub[pub.hi.isna()].pct_messages.iloc[0])


def n_nodes_of(scale: str, n_nodes: int | None = None) -> int:
    """N of the runs: the notebook's parameter, else the published N (N 64 at the smoke scale)."""
    return n_nodes or (SMOKE_N if scale == "smoke" else published()[2])


def overrides(n: int) -> dict:
    """Notebook 10's points at N: its runs are reused."""
    return {"n_nodes": [n], "aggregation": [False, True]}


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per variant (indexed by ``aggregation``): the mean of every counted metric, and ``reps``."""
    out = rows.groupby("aggregation")[METRICS].mean().add_suffix("_mean")
    out["reps"] = rows.groupby("aggregation").size()
    return out


def _n(rows: pd.DataFrame) -> int:
    return int(rows.n_nodes.iloc[0])


def shares(rows: pd.DataFrame) -> pd.DataFrame:
    """Pooled % of messages per bin, columns NO_AGG and AGG: every run has N messages, so the
    pooled share is 100 * mean count / N."""
    s, n = summary(rows), _n(rows)
    return pd.DataFrame({v: {b: 100 * s.loc[a, f"{c}_mean"] / n for b, c in BINS.items()} for v, a in VARIANTS.items()})


def gt12(rows: pd.DataFrame) -> dict[str, float]:
    """% of messages with more than 12 dependencies, per variant."""
    s, n = summary(rows), _n(rows)
    return {v: 100 * s.loc[a, "deps_gt12_mean"] / n for v, a in VARIANTS.items()}


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Ours (both variants, with the 95 % CI of the per-run shares) beside both seeds."""
    ours, n = shares(rows), _n(rows)
    ci = pd.DataFrame({v: {b: sweep.ci95(100 * rows[rows.aggregation == a][c] / n) for b, c in BINS.items()}
                       for v, a in VARIANTS.items()})
    col_000, col_003 = paper_bins()
    paper_003 = col_000.copy()
    paper_003.update(col_003)
    return pd.DataFrame({
        "paper (000)": col_000, "paper (003)": paper_003,
        "ours AGG": ours.AGG.round(2), "±95% CI (AGG)": ci.AGG.round(2),
        "ours NO_AGG": ours.NO_AGG.round(2), "±95% CI (NO_AGG)": ci.NO_AGG.round(2),
        "AGG - NO_AGG": (ours.AGG - ours.NO_AGG).round(2),
    }, index=list(BINS)).rename_axis("dependencies")


def _maxima(rows: pd.DataFrame) -> dict[str, pd.Series]:
    return {v: rows[rows.aggregation == a].max_dependencies for v, a in VARIANTS.items()}


def prose(rows: pd.DataFrame) -> pd.DataFrame:
    """The prose numbers of the figure's text, ours beside them."""
    _, text, _ = published()
    ours, share, maxima = shares(rows), gt12(rows), _maxima(rows)
    return pd.DataFrame([
        ("% of messages with > 12 dependencies", gt12_paper(), f"{share['AGG']:.2f} (NO_AGG {share['NO_AGG']:.2f})"),
        ("max dependencies (mean of per-run maxima)", int(text["max_dependencies"]),
         f"{maxima['AGG'].mean():.1f} (runs {maxima['AGG'].min()}..{maxima['AGG'].max()}; "
         f"NO_AGG {maxima['NO_AGG'].min()}..{maxima['NO_AGG'].max()})"),
        ("max |AGG - NO_AGG| over the bins (points)", text["max_difference_no_aggr_vs_aggr"],
         round(float((ours.AGG - ours.NO_AGG).abs().max()), 2)),
        ("mean dependencies per message, AGG", "-", round(float(rows[rows.aggregation].mean_vc_entries.mean() - 1), 2)),
    ], columns=["quantity", "paper", "ours"]).set_index("quantity")


def _bookkeeping(rows: pd.DataFrame) -> dict[str, Measured]:
    """Exact at any N (sanity): every message falls in one bin; the oracle (asserted by Run.verify)."""
    n = _n(rows)
    counted = rows[list(BINS.values())].sum(axis=1)
    bad = int(rows[["oracle_errors", "oracle_duplicates", "oracle_missing"]].sum().sum())
    return {
        "000-F6-bins-count": Measured(bool((counted == n).all()), f"{counted.min()}..{counted.max()} (N={n})"),
        "000-F6-oracle": Measured(bad == 0, f"{bad} (N={n})"),
    }


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    """Every claim of the notebook, on the AGG runs; the comparisons with the published N = 256
    numbers are NOT_RUN at any other N."""
    out = _bookkeeping(rows)
    paper_n, n = published()[2], _n(rows)
    ids = ("000-F6-zero", "000-F6-1-4", "000-F6-5-9", "003-F4.3-5-9", "000-F6-gt12", "000-F6-max-deps",
           "000-F6-non-increasing", "000-F6-agg-vs-noagg")
    if n != paper_n:
        return out | {i: not_run(f"not run: N={n} at the {scale} scale, published N={paper_n}") for i in ids}
    ours = shares(rows)
    agg = ours.AGG
    maxima = _maxima(rows)["AGG"]
    tail = agg.iloc[1:]  # from the 1-4 bin on
    rises = np.diff(tail.values)
    k = int(rises.argmax())
    gap = (ours.AGG - ours.NO_AGG).abs()
    share_gt12 = gt12(rows)["AGG"]
    return out | {
        "000-F6-zero": Measured(float(agg["0"]), f"{agg['0']:.2f}"),
        "000-F6-1-4": Measured(float(agg["1-4"]), f"{agg['1-4']:.2f}"),
        "000-F6-5-9": Measured(float(agg["5-9"]), f"{agg['5-9']:.2f}"),
        "003-F4.3-5-9": Measured(float(agg["5-9"]), f"{agg['5-9']:.2f}"),
        "000-F6-gt12": Measured(float(share_gt12), f"{share_gt12:.2f}"),
        "000-F6-max-deps": Measured(float(maxima.mean()), f"{maxima.mean():.1f} (runs {maxima.min()}..{maxima.max()})"),
        "000-F6-non-increasing": Measured(float(rises.max()), f"largest rise {rises.max():+.2f} points "
                                                              f"({tail.index[k]} -> {tail.index[k + 1]})"),
        "000-F6-agg-vs-noagg": Measured(float(gap.max()), f"max {gap.max():.2f} points (bin {gap.idxmax()})"),
    }


def reading(verdicts: pd.DataFrame, rows: pd.DataFrame) -> str:
    """The explanation of this run's verdicts from the verdict table and the runs."""
    from causal_lab.families.vcube_broadcast.artifacts import reading as rd

    paper_n, n = published()[2], _n(rows)
    if n != paper_n:
        return rd.compose(verdicts, [([], f"The comparisons with the published N = {paper_n} numbers are NOT_RUN at "
                                          f"N = {n}; the table shows the shape at this N.")])
    ours, share, maxima = shares(rows), gt12(rows), _maxima(rows)["AGG"]
    agg = ours.AGG
    col_000, col_003 = paper_bins()
    gap = (ours.AGG - ours.NO_AGG).abs()
    levels = ["000-F6-zero", "000-F6-1-4", "000-F6-gt12", "000-F6-max-deps", "000-F6-non-increasing",
              "000-F6-agg-vs-noagg"]
    paragraphs = [(levels, (
        f"*Levels and shape ({rd.which(verdicts, levels)}).* The dependency counts come from the broadcast schedule "
        f"and the delivery times, so they are a property of the workload model more than of the protocol: AGG and "
        f"NO_AGG differ by at most {gap.max():.2f} points per bin (paper 2.73).  With the spec's window W = 500 "
        f"(§3.5 W1, calibrated on Table 1 at N = 1024, not on this figure) {agg['0']:.1f} % of the messages have no "
        f"dependency (paper 27 %), {agg['1-4']:.1f} % have 1-4 (paper 28.5 %) and {share['AGG']:.1f} % more than 12 "
        f"(paper 23 %); the largest count per run is {maxima.min()}-{maxima.max()} (paper 54).  Our messages carry "
        f"somewhat more causal information than the paper's; the spec's prototype found the same (§7).")),
        (["000-F6-5-9", "003-F4.3-5-9"], (
        f"*The 5-9 bin (REPORT).* Ours {agg['5-9']:.2f} % against {col_000['5-9']:g} % (seed 000) and "
        f"{col_003['5-9']:g} % (thesis): the two texts disagree on this bin and the spec gives it no tolerance "
        f"(\"both reported; soft target\"), so it is reported, never passed, with the span between the two texts "
        f"as its band ({'inside' if col_003['5-9'] <= agg['5-9'] <= col_000['5-9'] else 'outside'} here).  A "
        f"larger window (W = 1000) would push the distribution further right (spec §7), and the `with_replacement` "
        f"workload contradicts the text.")),
    ]
    return rd.compose(verdicts, paragraphs, "No parameter was tuned; the runs are notebook 10's.")
