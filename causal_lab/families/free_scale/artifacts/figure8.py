"""Figure 8 of the free-scale paper (fixed total rate, delays 50-250 ms), notebook
``44_p2p_figure8``: the shared scalability claims (``scalability``)."""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.free_scale.artifacts import scalability

NOTEBOOK = "44_p2p_figure8"
FIGURE = scalability.Figure(8, "50_250", NOTEBOOK, order_from=100)


def measure(fixed: pd.DataFrame, original: pd.DataFrame, scale: str) -> dict[str, Measured]:
    return scalability.measure(fixed, original, FIGURE, scale)
