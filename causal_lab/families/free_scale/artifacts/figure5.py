"""Figure 5 of the free-scale paper (delays 50-250 ms, N = 10-500), notebook ``41_p2p_figure5``:
the shared overhead claims (``overhead``)."""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.free_scale.artifacts import overhead

NOTEBOOK = "41_p2p_figure5"
FIGURE = overhead.Figure(5, "50_250", 500)


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    return overhead.measure(rows, FIGURE, scale)
