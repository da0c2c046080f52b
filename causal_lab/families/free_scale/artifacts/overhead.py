"""Figures 4-6 of the free-scale paper: communication and storage overhead versus N for the
internal group (Int), the external group (Ext), IDR and Dependency Sequences (DS), one figure
per delay range; shared by the notebooks ``40``-``42`` (``figure4`` .. ``figure6``).

From the sweep rows (one per run; the free-scale rows carry Int, Ext and the DS8 model, the IDR
rows IDR): per N the mean over the replications of each series, the least-squares line of each
series over the scale's grid (spec A22), and every claim of spec §7.1-7.3 with amendments 2-4.
Communication is read in one byte accounting (``accounting``: A with headers, B without; spec
§5.4 and amendment 2), storage has one.
"""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run

SERIES = ("Int", "Ext", "IDR", "DS")
STORED = ("Int", "Ext", "IDR")  # the paper does not analyse DS storage
COMM_COLUMN = {"Int": "comm_int", "Ext": "comm_ext", "IDR": "comm_idr", "DS": "comm_ds"}
STOR_COLUMN = {"Int": "stor_int", "Ext": "stor_ext", "IDR": "stor_idr"}
# the byte accounting the claims use: B (fixed headers excluded) fits the paper's Figure 4a
# internal line over N = 10-200 better than A (amendment 2; notebook 40 re-checks the pick)
DEFAULT_ACCOUNTING = "B"
COLORS = {"Int": "tab:blue", "Ext": "tab:orange", "IDR": "tab:green", "DS": "tab:red"}


@dataclasses.dataclass(frozen=True)
class Figure:
    """One of Figures 4-6: its number, delay range, experiment, largest N and claim prefix."""

    number: int
    delays: str
    n_max: int

    @property
    def experiment(self) -> str:
        return f"p2p_overhead_{self.delays}"

    @property
    def prefix(self) -> str:
        return f"001-F{self.number}"

    @property
    def published(self) -> str:
        return f"001_figure{self.number}_overhead"


def _column(series: str, quantity: str, accounting: str) -> str:
    if quantity == "comm":
        return f"{COMM_COLUMN[series]}_{accounting}"
    return STOR_COLUMN[series]


def summarize(rows: pd.DataFrame, accounting: str = DEFAULT_ACCOUNTING) -> pd.DataFrame:
    """Per N: the mean over replications of every series' communication (``comm <series>``)
    and storage (``stor <series>``) overhead, and the replication count."""
    out = {}
    for series in SERIES:
        out[f"comm {series}"] = rows.groupby("n_peers")[_column(series, "comm", accounting)].mean()
        if series in STORED:
            out[f"stor {series}"] = rows.groupby("n_peers")[_column(series, "stor", accounting)].mean()
    table = pd.DataFrame(out)
    table["reps"] = rows[rows.protocol == "free_scale"].groupby("n_peers").size()
    return table.rename_axis("N")


def fit(summary: pd.DataFrame, column: str, n_min: int = 0, n_max: int | None = None) -> dict:
    """Least-squares line y = a + b N over the grid points in [n_min, n_max]: slope, intercept,
    R^2 and the N range."""
    data = summary[column].dropna()
    data = data[(data.index >= n_min) & (data.index <= (n_max or data.index.max()))]
    if len(data) < 2:
        return {"slope": float("nan"), "intercept": float("nan"), "r2": float("nan"), "n": len(data),
                "range": "-"}
    n, y = data.index.to_numpy(float), data.to_numpy(float)
    slope, intercept = np.polyfit(n, y, 1)
    residual = y - (intercept + slope * n)
    r2 = 1 - (residual ** 2).sum() / ((y - y.mean()) ** 2).sum() if len(y) > 2 else 1.0
    return {"slope": float(slope), "intercept": float(intercept), "r2": float(r2), "n": len(data),
            "range": f"N = {int(n.min())}..{int(n.max())}"}


def paper(figure: Figure) -> pd.DataFrame:
    return claims.table(figure.published)


def _paper_value(published: pd.DataFrame, quantity: str, series: str) -> float:
    row = published[(published.quantity == quantity) & (published.series == series)]
    return float(row.value.iloc[0]) if len(row) else float("nan")


def beside(summary: pd.DataFrame, figure: Figure) -> pd.DataFrame:
    """Ours beside the paper: the value at the paper's largest N (if in this scale), the slope
    and R^2 of each series."""
    published = paper(figure)
    rows = []
    for quantity in ("comm", "stor"):
        for series in SERIES if quantity == "comm" else STORED:
            line = fit(summary, f"{quantity} {series}")
            at = summary[f"{quantity} {series}"].get(figure.n_max, float("nan"))
            rows.append({
                "overhead": quantity, "series": series,
                f"paper @{figure.n_max}": _paper_value(published, f"{quantity}_at_nmax", series),
                f"ours @{figure.n_max}": round(at, 1),
                "paper slope": _paper_value(published, f"{quantity}_slope", series),
                "ours slope": round(line["slope"], 3), "ours intercept": round(line["intercept"], 1),
                "R^2": round(line["r2"], 4), "fit over": line["range"]})
    return pd.DataFrame(rows)


def streams(rows: pd.DataFrame) -> pd.DataFrame:
    """Communication per stream (accounting A): peer -> SP, SP relays, SP translations
    (internal group); external peers, SP translations (external group); DS8, DS12 and the
    non-pruning DS; and the super peer's storage (a diagnostic, spec A16)."""
    fs = rows[rows.protocol == "free_scale"]
    cols = ["comm_int_up", "comm_int_relay", "comm_int_trans", "comm_ext_peer", "comm_ext_sp",
            "comm_ds_A", "comm_ds12", "comm_ds_np", "ds_runs", "stor_sp", "tt_entries"]
    return fs.groupby("n_peers")[cols].mean().round(1).rename_axis("N")


def plot(summary: pd.DataFrame, figure: Figure, accounting: str = DEFAULT_ACCOUNTING):
    """Panel (a) communication, (b) storage: our means per N (markers) and least-squares lines,
    the paper's lines (slope x N, dashed) and its values at N_max (crosses)."""
    published = paper(figure)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    grid = np.linspace(0, max(figure.n_max, summary.index.max()), 50)
    for ax, quantity, title in ((axes[0], "comm", "(a) communication overhead"),
                                (axes[1], "stor", "(b) storage overhead")):
        for series in SERIES if quantity == "comm" else STORED:
            column = f"{quantity} {series}"
            line = fit(summary, column)
            ax.plot(summary.index, summary[column], "o", color=COLORS[series], ms=5,
                    label=f"{series} ours (slope {line['slope']:.3f})")
            ax.plot(grid, line["intercept"] + line["slope"] * grid, "-", color=COLORS[series], lw=1)
            slope = _paper_value(published, f"{quantity}_slope", series)
            ax.plot(grid, slope * grid, "--", color=COLORS[series], lw=1, alpha=0.6,
                    label=f"{series} paper (slope {slope:g})")
            ax.plot([figure.n_max], [_paper_value(published, f"{quantity}_at_nmax", series)], "x",
                    color=COLORS[series], ms=9, mew=2)
        ax.set(xlabel="number of peers N", ylabel="bytes", title=title)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"Figure {figure.number}: delays {figure.delays.replace('_', '-')} ms, accounting "
                 f"{accounting} (x: the paper's value at N = {figure.n_max})", fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------
# claims (spec §7.1-7.3, amendments 2-4)
# ------------------------------------------------------------------------------------------


def _ratio(summary, quantity, top, bottom, n):
    return summary.loc[n, f"{quantity} {top}"] / summary.loc[n, f"{quantity} {bottom}"]


def _orders(summary, chains, n_min=50) -> Measured:
    """Every chain (a < b < ...) holds at every N >= n_min."""
    data = summary[summary.index >= n_min]
    if data.empty:
        return not_run(f"no N >= {n_min} in this scale")
    broken = [f"N = {n}: {' < '.join(c)}" for n, row in data.iterrows() for c in chains
              if not all(row[a] < row[b] for a, b in zip(c, c[1:]))]
    shown = "holds at N = " + ", ".join(str(int(n)) for n in data.index) if not broken else "; ".join(broken[:4])
    return Measured(not broken, shown)


def measure(rows: pd.DataFrame, figure: Figure, scale: str,
            accounting: str = DEFAULT_ACCOUNTING) -> dict[str, Measured]:
    """Every claim of one of Figures 4-6 from the sweep rows."""
    summary = summarize(rows, accounting)
    p, n = figure.prefix, figure.n_max
    at_max = n in summary.index
    missing = not_run(f"N = {n} not in the {scale} scale (its largest N: {summary.index.max()})")
    out: dict[str, Measured] = {}
    comm = [f"comm {s}" for s in SERIES]
    stor = [f"stor {s}" for s in STORED]
    int_, ext, idr, ds = comm
    if figure.number == 6:  # amendment 4: Ext and IDR are "similar" at 50-550 ms
        out[f"{p}-order-comm"] = _orders(summary, [(int_, ext), (int_, ext, ds)])
        similar = (summary[idr] / summary[ext])[summary.index >= 100]
        out[f"{p}-idr-ext-similar"] = (Measured(bool(similar.between(0.85, 1.3).all()),
                                                f"IDR / Ext = {similar.min():.2f}..{similar.max():.2f} over N >= 100")
                                       if len(similar) else not_run("no N >= 100 in this scale"))
    else:
        out[f"{p}-order-comm"] = _orders(summary, [(int_, ext, idr), (int_, ext, ds)])
    out[f"{p}-order-stor"] = _orders(summary, [tuple(stor)])
    out[f"{p}-idr-below-ds"] = (Measured(bool(summary.loc[n, idr] < summary.loc[n, ds]),
                                         f"IDR {summary.loc[n, idr]:.0f} < DS {summary.loc[n, ds]:.0f}")
                                if at_max else missing)
    for quantity, names in (("comm", SERIES), ("stor", STORED)):
        for s in names:
            column = f"{quantity} {s}"
            value = float(summary.loc[n, column]) if at_max else None
            out[f"{p}-{quantity}{n}-{s.lower()}"] = Measured(value, f"{value:.1f}") if at_max else missing
            line = fit(summary, column)
            out[f"{p}-{quantity}-slope-{s.lower()}"] = Measured(
                line["slope"], f"{line['slope']:.3f} ({line['range']}, intercept {line['intercept']:.1f})")
            out[f"{p}-{quantity}-r2-{s.lower()}"] = Measured(line["r2"], f"{line['r2']:.4f}")
    for quantity, top, bottom in (("comm", "IDR", "Int"), ("stor", "IDR", "Int"), ("comm", "IDR", "Ext"),
                                  ("comm", "DS", "Ext"), ("stor", "IDR", "Ext")):
        key = f"{p}-ratio-{quantity}-{top.lower()}-{bottom.lower()}"
        if figure.number == 6 and (quantity, top, bottom) == ("comm", "IDR", "Ext"):
            continue  # judged as "similar" above
        if at_max:
            r = float(_ratio(summary, quantity, top, bottom, n))
            out[key] = Measured(r, f"{r:.2f}")
        else:
            out[key] = missing
    verified = (rows[["oracle_errors", "oracle_duplicates", "oracle_missing"]].sum().sum() == 0)
    out[f"{p}-verified"] = Measured(bool(verified), f"{len(rows)} runs, every delivery checked by the oracle")
    return out


def accounting_fit(rows: pd.DataFrame, figure: Figure, n_max: int = 200) -> dict[str, float]:
    """Amendment 2: per accounting, the mean |ours - paper line| (bytes) of the internal
    communication over N = 10..n_max, the paper's line being slope x N (it passes near the
    origin)."""
    slope = _paper_value(paper(figure), "comm_slope", "Int")
    out = {}
    for accounting in ("A", "B"):
        ours = summarize(rows, accounting)["comm Int"]
        ours = ours[ours.index <= n_max]
        out[accounting] = float(abs(ours - slope * ours.index).mean())
    return out


def sentences(verdicts: pd.DataFrame) -> str:
    """One line per claim judged DEVIATES or REPORT (ours beside the paper), for the notebook's
    closing explanation; then how many were NOT_RUN at this scale."""
    lines = [f"- {r.id} ({r.verdict}): ours {r.ours}, paper {r.paper} ({r.tolerance})"
             for r in verdicts.itertuples() if r.verdict in (claims.DEVIATES, claims.REPORT)]
    skipped = (verdicts.verdict == claims.NOT_RUN).sum()
    return "\n".join([*lines, f"({skipped} claims NOT_RUN at this scale)"])
