"""Figure 7 of the free-scale paper (fixed total rate, delays 0-50 ms), notebook
``43_p2p_figure7``: the shared scalability claims (``scalability``)."""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.free_scale.artifacts import scalability

NOTEBOOK = "43_p2p_figure7"
FIGURE = scalability.Figure(7, "0_50", NOTEBOOK, order_from=100)


def measure(fixed: pd.DataFrame, original: pd.DataFrame, scale: str) -> dict[str, Measured]:
    return scalability.measure(fixed, original, FIGURE, scale)
