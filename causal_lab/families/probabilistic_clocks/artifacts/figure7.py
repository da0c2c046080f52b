"""Figure 7 of seed 002 (§V-B1): the DCS's size on the bell pattern, and its out-of-order
deliveries against a probabilistic clock of its average size (notebook ``52_dcs_figure7``; spec
§6.2, amendments 2, 4 and 6).  Paper: 260 entries on average; 58 errors with DCS, 231 with a
probabilistic clock of 260 entries, both concentrated around the load peaks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from causal_lab import claims
from causal_lab.claims import Measured, not_run
from causal_lab.families.probabilistic_clocks.artifacts import common

NOTEBOOK = "52_dcs_figure7"
PATTERN = "bell"
DROPS = ((330, 370), (580, 620))  # spec §6.2(d): between the bells the size falls to <= 100


def paper() -> dict:
    p = claims.table("002_figure7_bell").set_index("quantity").value
    return {"size": p["average_entries"], "dcs": p["dcs_errors"], "pc": p["pc_errors"]}


def table(rows: pd.DataFrame) -> pd.DataFrame:
    return common.paired_table(rows[rows.pattern == PATTERN])


def plot(rows: pd.DataFrame):
    return common.plot_dcs(rows, PATTERN, "Figure 7: DCS clock size on the bell pattern")


def measure(rows: pd.DataFrame) -> dict[str, Measured]:
    out = common.measure_dcs(rows, PATTERN, "002-F7", paper())
    g = rows[(rows.pattern == PATTERN) & (rows.variant == "spec")]
    size = common.series(g, "size_mean_s")
    lam = common.load_at_seconds(PATTERN, len(size))
    r = float(np.corrcoef(size, lam)[0, 1])
    out["002-F7-follows-load"] = Measured(r, f"r = {r:.2f}")
    for lo, hi in DROPS:
        key = f"002-F7-drop-{lo}"
        out[key] = (Measured(float(size[lo:hi].min()), f"{size[lo:hi].min():.0f} entries")
                    if len(size) >= hi else not_run(f"the run stops at {len(size)} s at this scale"))
    return out


def explain(verdicts: pd.DataFrame, rows: pd.DataFrame) -> str:
    return common.explain_dcs(verdicts, rows, paper(), PATTERN)
