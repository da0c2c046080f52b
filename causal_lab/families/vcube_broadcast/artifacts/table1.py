"""Table 1 of seed 000 (= thesis Table 4.1): packets sent with and without aggregation
(notebook ``10_icpp18_table1``)."""

from __future__ import annotations

import pandas as pd
from scipy import stats

from causal_lab import claims
from causal_lab.claims import Measured, not_run

NOTEBOOK = "10_icpp18_table1"


def table(rows: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Ours beside the paper, per N: packets, 95 % CI, % reduction, % aggregated packets."""
    paper = claims.table("000_table1_packets").set_index("n_nodes")
    copies = rows.n_nodes * (rows.n_nodes - 1)
    rows = rows.assign(reduction_pct=100 * (copies - rows.packets) / copies,
                       aggr_pct=100 * rows.aggregated_packets / rows.packets)
    no_aggr = rows[~rows.aggregation].groupby("n_nodes").packets.agg(["min", "max", "size"])
    aggr = rows[rows.aggregation].groupby("n_nodes")[["packets", "reduction_pct", "aggr_pct"]].mean()
    ci = summary[summary.aggregation].set_index("n_nodes").packets_ci95
    return pd.DataFrame({
        "N(N-1)": no_aggr.index * (no_aggr.index - 1),
        "paper No aggr.": paper.no_aggr,
        "ours No aggr. (min..max)": no_aggr["min"].astype(str) + ".." + no_aggr["max"].astype(str),
        "paper Aggr.": paper.aggr,
        "ours Aggr.": aggr.packets.round(1),
        "±95% CI": ci.round(1),
        "paper % red.": paper.reduction_pct,
        "ours % red.": aggr.reduction_pct.round(2),
        "paper % aggr.": paper.aggr_pct,
        "ours % aggr.": aggr.aggr_pct.round(2),
    }, index=no_aggr.index).rename_axis("N")


def measure(rows: pd.DataFrame, ours: pd.DataFrame, scale: str) -> dict[str, Measured]:
    """Every claim of the notebook from the runs (``rows``) and ``table``'s ``ours``."""
    out: dict[str, Measured] = {}
    for n, group in rows.groupby("n_nodes"):
        plain, agg = group[~group.aggregation], group[group.aggregation]
        exact = bool((plain.packets == n * (n - 1)).all())
        out[f"000-T1-noaggr-exact-N{n}"] = Measured(
            exact, f"{plain.packets.min()}..{plain.packets.max()} over {len(plain)} runs")
        carried = bool((agg.messages_carried == n * (n - 1)).all())
        out[f"000-T1-carried-N{n}"] = Measured(carried, "all runs" if carried else "some run differs")
        bad = int(group[["oracle_errors", "oracle_duplicates", "oracle_missing"]].to_numpy().sum())
        out[f"000-T1-oracle-N{n}"] = Measured(bad == 0, str(bad))
    for n in claims.table("000_table1_packets").n_nodes:
        if n not in ours.index:
            for what in ("aggr", "reduction", "aggrpct", "fewer")[:4 if n >= 32 else 3]:
                out[f"000-T1-{what}-N{n}"] = not_run(f"N={n} not in the {scale} scale")
            continue
        r = ours.loc[n]
        out[f"000-T1-aggr-N{n}"] = Measured(float(r["ours Aggr."]))
        out[f"000-T1-reduction-N{n}"] = Measured(float(r["ours % red."]))
        out[f"000-T1-aggrpct-N{n}"] = Measured(float(r["ours % aggr."]))
        if n >= 32:
            out[f"000-T1-fewer-N{n}"] = Measured(bool(r["ours Aggr."] < r["N(N-1)"]))
    trend = ours.loc[ours.index >= 16]
    for what, column in (("reduction", "ours % red."), ("aggrpct", "ours % aggr.")):
        if len(trend) >= 4:
            rho = float(stats.spearmanr(trend.index, trend[column]).statistic)
            out[f"000-T1-{what}-trend"] = Measured(rho, f"Spearman rho = {rho:.2f}")
        else:
            out[f"000-T1-{what}-trend"] = not_run(f"only {len(trend)} sizes at the {scale} scale")
    return out
