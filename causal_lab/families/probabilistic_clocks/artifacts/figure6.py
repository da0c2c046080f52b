"""Figure 6 of seed 002 (§V-B1): the bell load pattern, "intervals in which the message load goes
from 10 to 200 messages broadcast per second" (notebook ``51_dcs_figure6``; spec §6.2, A.7,
amendments 3-4).

The figure is an input of Figures 7's runs: the notebook draws the spec's reconstruction (four
Gaussian bells with a floor of 10) with the broadcasts the default send model draws from it,
beside the authors' generator (no floor) under their deterministic send model, and checks the
reconstruction's test vectors.
"""

from __future__ import annotations

import pandas as pd

from causal_lab.claims import Measured
from causal_lab.families.probabilistic_clocks.artifacts import common

NOTEBOOK = "51_dcs_figure6"
PATTERNS = ("bell", "bell_authors")


def table(rows: pd.DataFrame) -> pd.DataFrame:
    return common.load_table(rows[rows.pattern.isin(PATTERNS)])


def plot(rows: pd.DataFrame):
    return common.plot_load(rows, PATTERNS, "Figure 6: message load following intervals")


def measure(rows: pd.DataFrame) -> dict[str, Measured]:
    bell = rows[(rows.pattern == "bell") & (rows.send_model == "poisson_rr")].iloc[0]
    out = common.measure_load(rows, "bell", "002-F6", {"high-share": bell.high_load_share,
                                                       "peak": bell.max_load, "floor": bell.min_load})
    authors = rows[(rows.pattern == "bell_authors") & (rows.send_model == "deterministic_rr")]
    mean = float(authors.broadcasts.mean() / common.FULL)
    out["002-F6-authors-deterministic"] = Measured(mean, f"{mean:.2f} msg/s")
    low = float(authors.broadcasts_s.map(lambda v: min(v)).mean())
    out["002-F6-authors-floor"] = Measured(low, f"{low:.0f} msg/s in the quietest second")
    return out


def explain(verdicts: pd.DataFrame, rows: pd.DataFrame) -> str:
    t = table(rows)
    spec, authors = t.loc[("bell", "poisson_rr")], t.loc[("bell_authors", "deterministic_rr")]
    return (f"The spec's bell averages {spec.mean_load:.1f} msg/s ({spec.broadcasts:.0f} broadcasts in 850 s, "
            f"{100 * spec.broadcasts_at_high_load:.0f} % of them while λ >= 100); the authors' generator with "
            f"their deterministic send model averages {authors.broadcasts / common.FULL:.1f} msg/s with a floor "
            f"near 1 msg/s instead of 10.")
