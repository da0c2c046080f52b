"""Table 2 of seed 004 (notebook ``62_ed_table2``): dependency-request rate of the hash detector at
a constant 110 messages per second for 500 to 5000 processes (M = 50, k = 2): 2.21, 6.80, 2.81,
6.14, 5.78 ×10^-4, "the rate does not vary much when the number of processes increases".

Accepted when each rate is within 3x of the paper's (spec amendment 1, authors' mode); our
residual-guided variant is reported beside it.  A request rate rests on few events: one message
the detector flags can be flagged by all N − 1 receivers, so the interval treats requests as
clusters (``common``); below a few requested messages, or when the interval is wider than the
band itself (``resolved``), the rate is not judged.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.error_detectors.artifacts import common

NOTEBOOK = "62_ed_table2"
BAND = 3.0  # spec amendment 1: within 3x of the paper's rate


def resolved(row) -> bool:
    """Whether a run can tell a rate inside the band from one outside: its 95 % interval is
    narrower than the band itself (a factor BAND² from end to end).  A run of a few hundred
    broadcasts has not seen enough messages flagged at (nearly) every receiver, which carry
    most of the authors' requests (``common``), so its interval spans the whole band."""
    return row.rate_lo > 0 and row.rate_hi / row.rate_lo <= BAND ** 2


def paper() -> pd.Series:
    return claims.table("004_table2_request_rate").set_index("n_nodes")["request_rate_e4"]


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """The paper's rate beside ours (authors' mode, then our variant), ×10^-4, per N (a size the
    scale did not run is left empty)."""
    out = pd.DataFrame({"paper ×1e-4": paper()})
    for mode in ("authors", "residual"):
        s = common.with_rates(rows[rows.hash_mode == mode]).set_index("n_nodes")
        if not len(s):
            continue
        out[f"{mode} ×1e-4"] = 1e4 * s.rate
        out[f"{mode} CI low"] = 1e4 * s.rate_lo
        out[f"{mode} CI high"] = 1e4 * s.rate_hi
        out[f"{mode} REQ / requested msgs / needed"] = pd.Series(
            [f"{a} / {b} / {c}" for a, b, c in zip(s.req, s.req_messages, s.req_needed)], index=s.index)
        out[f"{mode} errors"] = s.errors
    return out.rename_axis("N")


def plot(ours: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(7, 4))
    x = np.arange(len(ours))
    ax.plot(x, ours["paper ×1e-4"], "x", ms=10, color=plotting.PALETTE["paper"], label="paper (Table 2)")
    ax.fill_between(x, ours["paper ×1e-4"] / BAND, ours["paper ×1e-4"] * BAND, color=plotting.PALETTE["paper"],
                    alpha=0.12, label="within 3x of the paper (acceptance)")
    for mode, marker, color in (("authors", "o", plotting.PALETTE["ours"]), ("residual", "s", "tab:green")):
        if f"{mode} ×1e-4" in ours:
            y = ours[f"{mode} ×1e-4"]
            ax.errorbar(x, y, yerr=[y - ours[f"{mode} CI low"], ours[f"{mode} CI high"] - y], fmt=marker,
                        color=color, capsize=3, label=f"ours, {'authors mode' if mode == 'authors' else 'residual search'}")
    ax.set_xticks(x, [str(n) for n in ours.index])
    ax.set(yscale="log", xlabel="number of processes (110 msg/s, M = 50, k = 2)", ylabel="request rate (×10^-4)",
           title="Table 2: request rate at a constant load")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    ours = {mode: common.with_rates(rows[rows.hash_mode == mode]).set_index("n_nodes")
            for mode in ("authors", "residual")}
    for n, published in paper().items():
        for mode, prefix in (("authors", "004-T2-rate"), ("residual", "004-T2-residual-rate")):
            s = ours[mode]
            if n not in s.index:
                out[f"{prefix}-N{n}"] = not_run(f"{mode} mode at N = {n} not in the {scale} grid")
            elif not common.judged(s.loc[n]):
                out[f"{prefix}-N{n}"] = not_run(f"{int(s.at[n, 'req_messages'])} requested messages "
                                                f"(rate {1e4 * s.at[n, 'rate']:.2f}): fewer than {common.MIN_MESSAGES}")
            elif not resolved(s.loc[n]):
                r = s.loc[n]
                out[f"{prefix}-N{n}"] = not_run(f"rate {1e4 * r.rate:.2f}, 95 % interval {1e4 * r.rate_lo:.2f}.."
                                                f"{1e4 * r.rate_hi:.2f} wider than the {BAND:g}x band: too short a run")
            else:
                r = s.loc[n]
                out[f"{prefix}-N{n}"] = Measured(1e4 * r.rate, f"{1e4 * r.rate:.2f} ({1e4 * r.rate_lo:.2f}..{1e4 * r.rate_hi:.2f})")
    a = ours["authors"]
    if len(a) == len(paper()) and all(common.judged(a.loc[n]) and resolved(a.loc[n]) for n in paper().index):
        ratio = a.rate.max() / a.rate.min()
        out["004-T2-flat"] = Measured(float(ratio), f"{ratio:.1f}")
    else:
        out["004-T2-flat"] = not_run("needs every N judged (a rate with too few requested messages or too wide an interval)")
    out["004-T2-errors"] = Measured(int(a.errors.sum()), f"{int(a.errors.sum())} in {len(a)} runs")
    r = ours["residual"]
    if len(r):
        both = a.rate.align(r.rate, join="inner")
        below = int((both[1] <= both[0]).sum())
        out["004-T2-mode-order"] = Measured(below == len(both[0]), f"{below} of {len(both[0])} sizes")
    bad = int(rows[["duplicates", "undelivered"]].to_numpy().sum())
    out["004-T2-integrity"] = Measured(bad == 0, f"{bad} duplicated or undelivered in {len(rows)} runs")
    return out
