"""Figure 9 of seed 002 (§V-B2): the DCS's size on the random pattern, and its out-of-order
deliveries against a probabilistic clock of its average size (notebook ``54_dcs_figure9``; spec
§6.3, amendments 2-4).  Paper: 97 active entries on average; 45 errors with DCS, 305 with a
probabilistic clock of 97 entries ("6x"), concentrated around the peaks.  The authors' random
pattern (amendment 3) is a required run beside the spec's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from causal_lab import claims
from causal_lab.claims import Measured, not_run
from causal_lab.families.probabilistic_clocks import workload
from causal_lab.families.probabilistic_clocks.artifacts import common

NOTEBOOK = "54_dcs_figure9"
PATTERN = "random"
AUTHORS = "random_authors"
NEAR = 30  # seconds around a peak knot (spec §6.3(c))


def paper() -> dict:
    p = claims.table("002_figure9_random").set_index("quantity").value
    return {"size": p["average_entries"], "dcs": p["dcs_errors"], "pc": p["pc_errors"]}


def table(rows: pd.DataFrame) -> pd.DataFrame:
    return common.paired_table(rows[rows.pattern.isin((PATTERN, AUTHORS))])


def plot(rows: pd.DataFrame):
    return common.plot_dcs(rows, PATTERN, "Figure 9: DCS clock size on the random pattern")


def measure(rows: pd.DataFrame) -> dict[str, Measured]:
    out = common.measure_dcs(rows, PATTERN, "002-F9", paper())
    g = rows[(rows.pattern == PATTERN) & (rows.variant == "spec")]
    size = common.series(g, "size_mean_s")
    seconds = np.arange(len(size))
    near = np.zeros(len(size), bool)
    for peak in workload.PEAK_KNOTS:
        near |= np.abs(seconds + 0.5 - peak) <= NEAR
    pc = common.series(g, "pc_errors_s", "sum")
    out["002-F9-pc-near-peaks"] = (Measured(pc[near].sum() / pc.sum(), f"{100 * pc[near].sum() / pc.sum():.0f} % "
                                            f"of {pc.sum():.0f}") if pc.sum() >= common.MIN_ERRORS
                                   else not_run(f"only {pc.sum():.0f} errors (< {common.MIN_ERRORS})"))
    small = float((size <= 100).mean())
    out["002-F9-small"] = Measured(small, f"{100 * small:.0f} % of {len(size)} s")
    for peak in workload.PEAK_KNOTS:
        key = f"002-F9-grows-{peak:.0f}"
        window = np.abs(seconds + 0.5 - peak) <= NEAR
        out[key] = (Measured(float(size[window].max()), f"{size[window].max():.0f} entries")
                    if peak + NEAR <= len(size) else not_run(f"the run stops at {len(size)} s at this scale"))
    a = rows[rows.pattern == AUTHORS]
    for variant in ("spec", "authors_policy"):
        v = a[a.variant == variant]
        key = f"002-F9-authors-pattern-{variant.replace('_', '-')}"
        if v.empty:
            out[f"{key}-size"] = out[f"{key}-ratio"] = not_run(f"the authors' pattern with {variant} is not in this scale")
            continue
        sizes = " / ".join(f"{v[k].mean():.0f}" for k in common.SIZE_DEFINITIONS)
        out[f"{key}-size"] = Measured(float(v.size_time_mean.mean()), f"{sizes} (mean / max / message-weighted)")
        out[f"{key}-ratio"] = common.paired_ratio(int(v.pc_errors.sum()), int(v.dcs_errors.sum()))
    return out


def explain(verdicts: pd.DataFrame, rows: pd.DataFrame) -> str:
    return common.explain_dcs(verdicts, rows, paper(), PATTERN)
