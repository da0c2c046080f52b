"""What the seed-004 artifacts share: request rates with their 95 % intervals (spec
probabilistic_clocks §7.1, §7.3), and the verdict rows as sentences for the notebooks' closing
explanations (numbers written by the run, not typed by hand).

A request count is not Poisson: a message that the detector flags at one receiver is often
flagged at many (its candidate set holds the same undetected concurrent message everywhere), so
requests come in clusters, one per requested message, of 1 to N − 1 requests.  The count is a
weighted sum of Poisson events (the requested messages, each weighted by its cluster size), and
its interval is the gamma interval of Fay and Feuer (1997) for such sums: it equals Garwood's
exact interval (§7.1) when every cluster has size 1, and widens with the clusters (the spec's
over-dispersion, §7.3).  Its upper end allows one more cluster of the largest possible size,
N − 1 (every other process requests the message), because one such message can double a
short run's rate: a run too short to have seen one is not evidence that they are rare.
Below ``MIN_MESSAGES`` requested messages a rate is shown but not judged (NOT_RUN).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

MIN_MESSAGES = 3


def weighted_poisson(total: float, squares: float, largest: float) -> tuple[float, float]:
    """95 % interval of ``total`` = Σ w_i over Poisson events of weights w_i (Fay and Feuer
    1997): ``squares`` = Σ w_i², ``largest`` = the largest weight one more event could have."""
    lo = stats.gamma.ppf(0.025, total ** 2 / squares, scale=squares / total) if total > 0 else 0.0
    hi = stats.gamma.ppf(0.975, (total + largest) ** 2 / (squares + largest ** 2),
                         scale=(squares + largest ** 2) / (total + largest))
    return float(lo), float(hi)


def with_rates(rows: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
    """Add ``rate``, ``rate_lo``, ``rate_hi`` (requests per broadcast and process) and
    ``cluster`` (requests per requested message) to sweep rows, one run per row."""
    req, msgs = rows[f"{prefix}req"], rows[f"{prefix}req_messages"]
    n = rows["n_used"] if "n_used" in rows else rows["n_nodes"]
    exposure = rows[f"{prefix}broadcasts"] * n
    bounds = np.array([weighted_poisson(t, q, w) for t, q, w in
                       zip(req, rows[f"{prefix}req_cluster_sq"], n - 1)]).reshape(-1, 2)
    return rows.assign(rate=req / exposure, rate_lo=bounds[:, 0] / exposure,
                       rate_hi=bounds[:, 1] / exposure, cluster=(req / msgs.where(msgs > 0)).fillna(0.0))


def judged(row) -> bool:
    return row["req_messages"] >= MIN_MESSAGES


def sentences(verdicts: pd.DataFrame) -> str:
    """Every verdict row that is not a sanity test, as one line: claim, paper, ours, verdict."""
    v = verdicts[verdicts["kind"] != "sanity"]
    return "\n".join(f"- {r.claim}: paper {r.paper}, ours {r.ours} -> {r.verdict}"
                     + (f" ({r.note})" if r.note else "") for r in v.itertuples())
