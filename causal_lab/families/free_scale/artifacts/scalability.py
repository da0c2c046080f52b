"""Figures 7-9 of the free-scale paper: internal (a) and external (b) communication overhead at
a fixed total generation rate R = 2500, 2000, 1500, 1000 msg/s, beside the original experiment
(12.5 msg/s per peer); shared by the notebooks ``43``-``45`` (``figure7`` .. ``figure9``).

Slopes of the "linear growth part" are least-squares lines over N >= 200 (spec §6.6, A22); the
original experiment's slope is its Figure 4-6 slope (all grid points).  Claims: spec §7.4-7.6
with amendment 1 (the crossing at N* = R / 12.5 holds by construction: sanity; the two-stage
growth is reported, not asserted).
"""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims
from causal_lab.claims import Measured, not_run
from causal_lab.families.free_scale.artifacts.overhead import DEFAULT_ACCOUNTING, fit
from causal_lab.families.free_scale.experiments import RATES

GROUPS = {"Int": "comm_int", "Ext": "comm_ext"}
ORIGINAL = "original"
LINEAR_FROM = 200  # N where the "linear growth part" is fitted from (spec §6.6)
ORDER_SLACK = 0.05  # spec C7.1: "5 % slack"
CROSSING_BAND = 0.10  # spec C7.2


@dataclasses.dataclass(frozen=True)
class Figure:
    """One of Figures 7-9: its number, delay range and the N from which C7.1 is checked."""

    number: int
    delays: str
    notebook: str
    order_from: int = 100

    @property
    def experiment(self) -> str:
        return f"p2p_scalability_{self.delays}"

    @property
    def original_experiment(self) -> str:
        return f"p2p_overhead_{self.delays}"

    @property
    def prefix(self) -> str:
        return f"001-F{self.number}"

    @property
    def published(self) -> str:
        return f"001_figure{self.number}_scalability"


def summarize(fixed: pd.DataFrame, original: pd.DataFrame, accounting: str = DEFAULT_ACCOUNTING) -> pd.DataFrame:
    """Per N, columns (group, rate): the mean communication overhead over replications; rate
    ``original`` is the 12.5 msg/s-per-peer experiment."""
    parts = {}
    for group, column in GROUPS.items():
        per_rate = fixed.groupby(["n_peers", "rate"])[f"{column}_{accounting}"].mean().unstack("rate")
        for rate in per_rate.columns:
            parts[(group, int(rate))] = per_rate[rate]
        parts[(group, ORIGINAL)] = original.groupby("n_peers")[f"{column}_{accounting}"].mean()
    table = pd.DataFrame(parts)
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["group", "rate"])
    return table.rename_axis("N")


def slopes(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (group, rate): the slope of the linear part (N >= 200; all N for the original)."""
    rows = []
    for group, rate in summary.columns:
        data = summary[[(group, rate)]].droplevel(0, axis=1).rename(columns={rate: "y"})
        line = fit(data, "y", 0 if rate == ORIGINAL else LINEAR_FROM)
        rows.append({"group": group, "rate": rate, "slope": line["slope"], "points": line["n"],
                     "over": line["range"]})
    return pd.DataFrame(rows)


def paper(figure: Figure) -> pd.DataFrame:
    return claims.table(figure.published)


def _paper_slope(published, group, rate) -> float:
    row = published[(published.quantity == "slope") & (published.group == group)
                    & (published.rate.astype(str) == str(rate))]
    return float(row.value.iloc[0]) if len(row) else float("nan")


def beside(summary: pd.DataFrame, figure: Figure) -> pd.DataFrame:
    """Our slopes beside the paper's, per group and rate."""
    ours = slopes(summary)
    published = paper(figure)
    ours["paper slope"] = [_paper_slope(published, g, r) for g, r in zip(ours.group, ours.rate)]
    ours["slope"] = ours.slope.round(4)
    return ours[["group", "rate", "paper slope", "slope", "points", "over"]]


def plot(summary: pd.DataFrame, figure: Figure, accounting: str = DEFAULT_ACCOUNTING):
    """(a) internal, (b) external communication overhead vs N per rate (the original dashed),
    (c) the slopes of the linear part, ours beside the paper's."""
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.6))
    colors = dict(zip(RATES, ["tab:red", "tab:orange", "tab:green", "tab:blue"]))
    for ax, group in zip(axes[:2], GROUPS):
        for rate in [*RATES, ORIGINAL]:
            if (group, rate) not in summary.columns:
                continue
            style = "k--" if rate == ORIGINAL else "o-"
            label = "original (12.5 msg/s per peer)" if rate == ORIGINAL else f"{rate} msg/s"
            kwargs = {} if rate == ORIGINAL else {"color": colors[rate]}
            ax.plot(summary.index, summary[(group, rate)], style, ms=4, label=label, **kwargs)
        ax.set(xlabel="number of peers N", ylabel="bytes per message",
               title=f"({'a' if group == 'Int' else 'b'}) {'internal' if group == 'Int' else 'external'} group")
        ax.legend(fontsize=7)
    table = beside(summary, figure)
    table = table[table.rate != ORIGINAL]
    x = np.arange(len(table))
    axes[2].bar(x - 0.2, table["slope"], 0.4, label="ours (N >= 200)")
    axes[2].bar(x + 0.2, table["paper slope"].fillna(0), 0.4, label="paper", color="tab:red", alpha=0.7)
    axes[2].set_xticks(x, [f"{g}\n{r}" for g, r in zip(table.group, table.rate)], fontsize=7)
    axes[2].axhline(0, color="0.5", lw=0.8)
    axes[2].set(ylabel="bytes per peer", title="(c) slope of the linear part")
    axes[2].legend(fontsize=7)
    fig.suptitle(f"Figure {figure.number}: fixed total rate, delays {figure.delays.replace('_', '-')} ms, "
                 f"accounting {accounting}", fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------
# claims (spec §7.4-7.6, amendment 1)
# ------------------------------------------------------------------------------------------


def _ordered(summary, group, n_min) -> Measured:
    """C7.1: y_2500 >= y_2000 >= y_1500 >= y_1000 at every N >= n_min, 5 % slack."""
    data = summary[group][summary.index >= n_min]
    if data.empty:
        return not_run(f"no N >= {n_min} in this scale")
    broken = [f"N = {n}: {a} < {b}" for n, row in data.iterrows() for a, b in zip(RATES, RATES[1:])
              if row[a] < (1 - ORDER_SLACK) * row[b]]
    return Measured(not broken, "; ".join(broken[:3]) or f"holds at N = {', '.join(str(int(n)) for n in data.index)}")


def _crossing(summary, group) -> Measured:
    """C7.2: the fixed-rate curve meets the original at N* = R / 12.5 (within 10 %), lies above
    it below N* and below it above N* (by construction: at N* both workloads are the same).
    Only the rates whose N* lies inside the scale's N range are checked."""
    problems, shown = [], []
    original = summary[(group, ORIGINAL)]
    lo, hi = summary.index.min(), summary.index.max()
    for rate in RATES:
        star = rate / 12.5
        if not lo <= star <= hi:
            continue
        curve = summary[(group, rate)]
        at = np.interp(star, curve.index, curve) / np.interp(star, original.index, original)
        shown.append(f"{rate}: {at:.2f}")
        if abs(at - 1) > CROSSING_BAND:
            problems.append(f"{rate} msg/s at N* = {star:g}: ratio {at:.2f}")
        for n in curve.index:
            if n < 0.8 * star and curve[n] < (1 - CROSSING_BAND) * original[n]:
                problems.append(f"{rate} msg/s below the original at N = {n} < N*")
            if n > 1.25 * star and curve[n] > (1 + CROSSING_BAND) * original[n]:
                problems.append(f"{rate} msg/s above the original at N = {n} > N*")
    if not shown:
        return not_run(f"no N* = R / 12.5 inside N = {lo}..{hi}")
    return Measured(not problems, "; ".join(problems[:3]) or "fixed / original at N*: " + ", ".join(shown))


def measure(fixed: pd.DataFrame, original: pd.DataFrame, figure: Figure, scale: str,
            accounting: str = DEFAULT_ACCOUNTING) -> dict[str, Measured]:
    summary = summarize(fixed, original, accounting)
    table = slopes(summary).set_index(["group", "rate"])
    p = figure.prefix
    out: dict[str, Measured] = {}
    enough = (summary.index >= LINEAR_FROM).sum() >= 2
    for group in GROUPS:
        g = group.lower()
        out[f"{p}-order-{g}"] = _ordered(summary, group, figure.order_from)
        out[f"{p}-crossing-{g}"] = _crossing(summary, group)
        fixed_slopes = [table.loc[(group, r), "slope"] for r in RATES]
        for rate, s in zip(RATES, fixed_slopes):
            out[f"{p}-slope-{g}-{rate}"] = (Measured(float(s), f"{s:.4f} ({table.loc[(group, rate), 'over']})")
                                            if enough else not_run(f"fewer than 2 N >= {LINEAR_FROM} in the {scale} scale"))
        mean, orig = float(np.mean(fixed_slopes)), float(table.loc[(group, ORIGINAL), "slope"])
        if enough:
            out[f"{p}-mean-slope-{g}"] = Measured(mean / orig, f"mean {mean:.4f} / original {orig:.3f} = {mean / orig:.3f}")
            out[f"{p}-ratio-{g}"] = Measured(orig / mean, f"{orig:.3f} / {mean:.4f} = {orig / mean:.1f}")
            spread = (max(fixed_slopes) - min(fixed_slopes)) / max(abs(v) for v in fixed_slopes)
            out[f"{p}-spread-{g}"] = Measured(float(spread), f"{100 * spread:.0f} % ({min(fixed_slopes):.4f}..{max(fixed_slopes):.4f})")
        else:
            for key in ("mean-slope", "ratio", "spread"):
                out[f"{p}-{key}-{g}"] = not_run(f"fewer than 2 N >= {LINEAR_FROM} in the {scale} scale")
    low = [fit(summary[[(g, r)]].droplevel(0, axis=1).rename(columns={r: "y"}), "y", 0, 100)["slope"]
           for g in GROUPS for r in RATES]
    high = [table.loc[(g, r), "slope"] for g in GROUPS for r in RATES]
    if enough:
        slower = sum(a < b for a, b in zip(low, high))
        out[f"{p}-two-stage"] = Measured(slower == len(low), f"{slower} of {len(low)} curves grow more slowly "
                                         f"over N <= 100 than over N >= {LINEAR_FROM}")
    else:
        out[f"{p}-two-stage"] = not_run(f"fewer than 2 N >= {LINEAR_FROM} in the {scale} scale")
    runs = pd.concat([fixed, original])
    verified = runs[["oracle_errors", "oracle_duplicates", "oracle_missing"]].sum().sum() == 0
    out[f"{p}-verified"] = Measured(bool(verified), f"{len(runs)} runs, every delivery checked by the oracle")
    # a figure's claims file names what its prose claims (Figure 9 gives no external slope
    # ratio, for instance): the rest is measured for the tables, not judged
    return {k: v for k, v in out.items() if k in set(claims.load(figure.notebook).id)}
