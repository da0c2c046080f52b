"""Figure 10 of seed 002 (§V-C): out-of-order deliveries per second while DCS rebalances its
components (notebook ``55_dcs_figure10``; spec §2.11, §6.4).  Four components of 50 entries,
100 msg/s; from t = 50 s the processes on C_0 send 75 % of the broadcasts instead of 25 %;
errors rise, the processes on C_0 notice at 70 s and move with probability 1/2, again until the
increments are uniform at 90 s.  The control run (same seed) never rebalances.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from causal_lab import plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.probabilistic_clocks.artifacts import common

NOTEBOOK = "55_dcs_figure10"
WINDOWS = {"uniform [10, 50)": (10, 50), "skewed [52, 70)": (52, 70), "one move [72, 90)": (72, 90),
           "balanced [92, 130)": (92, 130)}
EVENTS = (50, 70, 90)
MIN_ERRORS = 20  # errors in a window below which a ratio of window rates is noise


def window_rates(g: pd.DataFrame) -> dict:
    errors = common.series(g, "run_errors_s")
    return {name: float(errors[lo:hi].mean()) for name, (lo, hi) in WINDOWS.items()}


def moves(g: pd.DataFrame) -> pd.Series:
    """Movers per check time, summed over replications."""
    out: dict[float, int] = {}
    for times, movers in zip(g.check_times, g.check_movers):
        for t, m in zip(times, movers):
            out[t] = out.get(t, 0) + int(m)
    return pd.Series(out).sort_index()


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean out-of-order deliveries per second in each window, with and without balancing."""
    out = {("balancing" if on else "control"): window_rates(g) for on, g in rows.groupby("balancing")}
    return pd.DataFrame(out).round(2)


def plot(rows: pd.DataFrame):
    on, off = rows[rows.balancing], rows[~rows.balancing]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    t = np.arange(len(on.run_errors_s.iloc[0]))
    top.plot(t, common.series(off, "run_errors_s"), "x", ms=4, color=plotting.PALETTE["paper"], label="no balancing (control)")
    top.plot(t, common.series(on, "run_errors_s"), "o", ms=3, color=plotting.PALETTE["ours"], label="load balancing")
    top.set(ylabel="out-of-order deliveries per second", title="Figure 10: out-of-order deliveries and load balancing")
    components = sorted(c for c in rows.columns if c.startswith("share_c"))
    for c in components:
        bottom.plot(t, common.series(on, c), lw=1, label=f"C_{c[len('share_c'):-2]}")
    bottom.set(xlabel="time (s)", ylabel="share of broadcasts incrementing")
    for ax in (top, bottom):
        for x in EVENTS:
            ax.axvline(x, color="0.5", ls=":", lw=0.8)
        ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def window_counts(g: pd.DataFrame) -> dict:
    errors = common.series(g, "run_errors_s", "sum")
    return {name: int(errors[lo:hi].sum()) for name, (lo, hi) in WINDOWS.items()}


def measure(rows: pd.DataFrame) -> dict[str, Measured]:
    on, off = rows[rows.balancing], rows[~rows.balancing]
    r_on, r_off = window_rates(on), window_rates(off)
    counts = window_counts(on)
    uniform, skewed, balanced = (r_on[k] for k in ("uniform [10, 50)", "skewed [52, 70)", "balanced [92, 130)"))
    few = counts["skewed [52, 70)"] < MIN_ERRORS
    why = f"only {counts['skewed [52, 70)']} errors in [52, 70) (< {MIN_ERRORS})"
    rise = skewed / uniform if uniform else float("inf")
    out = {"002-F10-rise": not_run(why) if few else Measured(rise, f"x{rise:.1f} ({skewed:.2f} vs {uniform:.2f} per s)")}
    out["002-F10-drop"] = (not_run(why) if few else
                           Measured(balanced / skewed, f"x{balanced / skewed:.2f} ({balanced:.2f} vs {skewed:.2f} per s)"))
    control = r_off["balanced [92, 130)"] / balanced if balanced else float("inf")
    out["002-F10-control"] = (not_run(f"only {counts['balanced [92, 130)']} errors after 92 s")
                              if counts["balanced [92, 130)"] < MIN_ERRORS else
                              Measured(control, f"x{control:.1f} ({r_off['balanced [92, 130)']:.2f} vs {balanced:.2f} per s)"))
    m = moves(on)
    moved = m[m > 0]
    out["002-F10-first-move"] = Measured(float(moved.index[0]) if len(moved) else float("nan"),
                                         f"{moved.index[0]:.0f} s ({moved.iloc[0]} movers)" if len(moved) else "no move")
    out["002-F10-second-move"] = Measured(float(moved.index[1]) if len(moved) > 1 else float("nan"),
                                          f"{moved.index[1]:.0f} s ({moved.iloc[1]} movers)" if len(moved) > 1 else "one move only")
    early, late = int(m[m.index < 70].sum()), int(m[m.index > 100].sum())
    out["002-F10-no-early-move"] = Measured(early, f"{early} movers before 70 s")
    out["002-F10-no-late-move"] = Measured(late, f"{late} movers after 100 s")
    shares = np.array([common.series(on, c)[92:130] for c in rows.columns if c.startswith("share_c")])
    top = float(shares.mean(axis=1).max())
    out["002-F10-uniform"] = Measured(top, f"{top:.3f}")
    return out


def explain(verdicts: pd.DataFrame, rows: pd.DataFrame) -> str:
    t = table(rows)
    m = moves(rows[rows.balancing])
    lines = [f"Balancing run, errors per second: " + ", ".join(f"{k} {v:.2f}" for k, v in t["balancing"].items())
             + f"; control run after 92 s: {t.loc['balanced [92, 130)', 'control']:.2f}.",
             "Movers per check: " + ", ".join(f"{k:.0f} s: {v}" for k, v in m.items() if v) + "."]
    return "\n".join(lines + common.explain_deviations(verdicts))
