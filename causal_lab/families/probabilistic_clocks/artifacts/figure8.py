"""Figure 8 of seed 002 (§V-B2): the random load pattern, "randomly chosen message load targets
reached every 20 seconds, with 3 peaks" (notebook ``53_dcs_figure8``; spec §6.3, A.8,
amendment 3).

As for Figure 6 the pattern is an input: the spec's reconstruction (knots every 20 s, three
single-knot peaks) with its broadcasts, beside the authors' generator (a new value every
second, 50-s plateaus at the peaks), whose wider peaks the amendment requires as a sensitivity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import signal

from causal_lab.claims import Measured
from causal_lab.families.probabilistic_clocks import workload
from causal_lab.families.probabilistic_clocks.artifacts import common

NOTEBOOK = "53_dcs_figure8"
PATTERNS = ("random", "random_authors")


def table(rows: pd.DataFrame) -> pd.DataFrame:
    return common.load_table(rows[rows.pattern.isin(PATTERNS)])


def plot(rows: pd.DataFrame):
    return common.plot_load(rows, PATTERNS, "Figure 8: random message load pattern")


def peaks(per_second) -> int:
    """Peaks of the realised load: maxima of the 10-s average above 100 msg/s, 60 s apart."""
    smooth = np.nan_to_num(common.rolling_rate(per_second))
    found, _ = signal.find_peaks(smooth, height=common.HIGH_LOAD, distance=60)
    return len(found)


def measure(rows: pd.DataFrame) -> dict[str, Measured]:
    times, values = workload.knot_values()
    at = dict(zip(times, values))
    spec = rows[(rows.pattern == "random") & (rows.send_model == "poisson_rr")]
    out = common.measure_load(rows, "random", "002-F8", {
        "knot-0": at[0.0], "knot-60": at[60.0], "peak-200": at[200.0], "peak-460": at[460.0],
        "peak-700": at[700.0]})
    out["002-F8-spacing"] = Measured(float(np.diff(times).max()), f"{np.diff(times).max():.0f} s")
    n = [peaks(v) for v in spec.broadcasts_s]
    out["002-F8-peaks"] = Measured(int(np.median(n)), f"{np.median(n):.0f} (per seed: {n})")
    authors = rows[(rows.pattern == "random_authors") & (rows.send_model == "poisson_rr")]
    out["002-F8-authors-mean"] = Measured(float(authors.mean_load.iloc[0]), f"{authors.mean_load.iloc[0]:.2f} msg/s")
    width = [float((np.asarray(t) >= common.HIGH_LOAD).sum()) / 3 for t in rows[rows.pattern == "random"].target_s[:1]]
    authors_width = float((np.asarray(authors.target_s.iloc[0]) >= common.HIGH_LOAD).sum()) / 3
    out["002-F8-peak-width"] = Measured(width[0], f"{width[0]:.0f} s per peak at λ >= 100 (authors: {authors_width:.0f} s)")
    return out


def explain(verdicts: pd.DataFrame, rows: pd.DataFrame) -> str:
    t = table(rows)
    spec, authors = t.loc[("random", "poisson_rr")], t.loc[("random_authors", "poisson_rr")]
    return (f"The spec's random pattern averages {spec.mean_load:.1f} msg/s and spends "
            f"{100 * spec.time_at_high_load:.1f} % of the time at λ >= 100; the authors' generator averages "
            f"{authors.mean_load:.1f} msg/s and spends {100 * authors.time_at_high_load:.1f} % there: its "
            f"peaks are plateaus, the spec's single knots (the calibration choice amendment 3 names).")
