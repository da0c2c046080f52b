"""Figure 6 of the free-scale paper (delays 50-550 ms, N = 10-400), notebook ``42_p2p_figure6``:
the shared overhead claims (``overhead``)."""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.free_scale.artifacts import overhead

NOTEBOOK = "42_p2p_figure6"
FIGURE = overhead.Figure(6, "50_550", 400)


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    return overhead.measure(rows, FIGURE, scale)


def slope_table(rows_by_delays: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per delay range, the Int communication, Int storage and DS slopes fitted over the N
    values every range has (rows: free-scale runs of each overhead experiment)."""
    common = sorted(set.intersection(*(set(r.n_peers) for r in rows_by_delays.values())))
    table = pd.DataFrame({
        delays: {column: overhead.fit(overhead.summarize(r[r.n_peers.isin(common)]), column)["slope"]
                 for column in ("comm Int", "stor Int", "comm DS")}
        for delays, r in rows_by_delays.items()}).T
    table.attrs["range"] = f"N = {common[0]}..{common[-1]}"
    return table


def trends(slopes: pd.DataFrame) -> dict[str, Measured]:
    """Cross-figure trends (spec §7.3 CX): the Int communication and storage slopes and the DS
    slope grow with the delay range.  ``slopes``: one row per delay range (0_50, 50_250, 50_550)
    with the slopes fitted over the N range all three figures share."""
    out = {}
    for key, column in (("int-comm", "comm Int"), ("int-stor", "stor Int"), ("ds-comm", "comm DS")):
        values = slopes[column]
        out[f"001-CX-{key}-slope-grows"] = Measured(
            bool(values.is_monotonic_increasing and values.is_unique),
            " < ".join(f"{v:.3f}" for v in values) + f" ({slopes.attrs['range']})")
    return out
