"""Figure 9 of the free-scale paper (fixed total rate, delays 50-550 ms), notebook
``45_p2p_figure9``: the shared scalability claims (``scalability``)."""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.free_scale.artifacts import scalability

NOTEBOOK = "45_p2p_figure9"
FIGURE = scalability.Figure(9, "50_550", NOTEBOOK, order_from=150)


def measure(fixed: pd.DataFrame, original: pd.DataFrame, scale: str) -> dict[str, Measured]:
    return scalability.measure(fixed, original, FIGURE, scale)
