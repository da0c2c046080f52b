"""Figure 4 of the free-scale paper (delays 0-50 ms, N = 10-900), notebook ``40_p2p_figure4``:
the shared overhead claims (``overhead``), plus the two of amendments 2 and 3 that this delay
range carries: which byte accounting fits the paper's internal line, and how the non-pruning
variant of the DS model grows with the run."""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.free_scale.artifacts import overhead

NOTEBOOK = "40_p2p_figure4"
FIGURE = overhead.Figure(4, "0_50", 900)


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    out = overhead.measure(rows, FIGURE, scale)
    fits = overhead.accounting_fit(rows, FIGURE)
    best = min(fits, key=fits.get)
    out["001-F4-accounting"] = Measured(
        best, f"{best} (mean |ours - 0.098 N| over N <= 200: A {fits['A']:.1f} bytes, B {fits['B']:.1f} bytes)",
        note=f"the claims use accounting {overhead.DEFAULT_ACCOUNTING}")
    fs = rows[rows.protocol == "free_scale"].set_index("n_peers").sort_index()
    n = fs.index.max()
    growth = float(fs.loc[n, "comm_ds_np_late"] / fs.loc[n, "comm_ds_np_early"])
    out["001-F4-ds-nonpruning"] = Measured(
        growth, f"x{growth:.3f} from the first to the second half of the window at N = {n} "
        f"(DS8 {fs.loc[n, 'comm_ds_A']:.0f} B, non-pruning {fs.loc[n, 'comm_ds_np']:.0f} B)")
    return out
