"""Figure 5 of seed 002 (§V-A): the probabilistic-clock size a system of 2000 processes needs
so that a delivery is out of causal order with probability 1e-4 .. 1e-6, against the load
(notebook ``50_dcs_figure5``; spec §6.1).

Per load, the evaluator (``shadow``) gives each grid size's error count over the same
deliveries; the rate r(M) = errors / deliveries falls like a power of M, fitted by Poisson
regression log r = α - β log M over the sizes with at least ``MIN_ERRORS`` errors.  The size a
target P needs is interpolated log-log between the two grid sizes that bracket it when both are
measured that well, else read from the fit (an extrapolation, drawn hollow).  The dashed curves
are the spec's model (§1.6.1), which the paper's formula underlies.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import optimize

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run
from causal_lab.families.probabilistic_clocks import clocks
from causal_lab.families.probabilistic_clocks.artifacts import common
from causal_lab.families.probabilistic_clocks.experiments import SIZES

NOTEBOOK = "50_dcs_figure5"
MIN_ERRORS = 5
PLAUSIBLE = (0.5, 5.0)  # slopes a power law may be extrapolated with (model: about k = 2)
TARGETS_TABLE = "002_figure5_targets"


def targets() -> list[float]:
    return [float(p) for p in claims.table(TARGETS_TABLE).probability]


def rates(rows: pd.DataFrame) -> pd.DataFrame:
    """Errors, deliveries and rate per (load, size), pooled over replications."""
    out = []
    for load, g in rows.groupby("load"):
        deliveries = int(g.deliveries.sum())
        for m in SIZES:
            e = int(g[f"errors_M{m}"].sum())
            out.append({"load": load, "M": m, "errors": e, "deliveries": deliveries, "rate": e / deliveries})
    return pd.DataFrame(out)


def fit(r: pd.DataFrame) -> pd.DataFrame:
    """Per load: the Poisson regression of the error counts on log M (sizes with enough
    errors), α and β of r = exp(α) M^-β."""
    out = []
    for load, g in r.groupby("load"):
        use = g[g.errors >= MIN_ERRORS]
        if len(use) < 3:
            out.append({"load": load, "alpha": np.nan, "beta": np.nan, "points": len(use),
                        "model_beta": np.nan})
            continue
        x, y, d = np.log(use.M.to_numpy(float)), use.errors.to_numpy(float), use.deliveries.to_numpy(float)

        def nll(p):
            mu = d * np.exp(p[0] - p[1] * x)
            return float((mu - y * np.log(mu)).sum())

        start = np.polyfit(x, np.log(y / d), 1)
        res = optimize.minimize(nll, [start[1], -start[0]], method="Nelder-Mead",
                                options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 5000})
        out.append({"load": load, "alpha": res.x[0], "beta": res.x[1], "points": len(use),
                    "model_beta": model_slope(load, use.M.min(), use.M.max())})
    return pd.DataFrame(out).set_index("load")


def model_slope(load: float, m_lo: float, m_hi: float, k: int = 2) -> float:
    """The slope of the formula of seed 002 §II, -d log P_cond / d log M, between two sizes:
    below k where k·X/M is not small (the formula saturates at small clocks)."""
    x = load * clocks.DELAY_MEAN
    return math.log(clocks.p_cond(m_lo, x, k) / clocks.p_cond(m_hi, x, k)) / math.log(m_hi / m_lo)


def analytic(load: float, target: float, n: int = 2000, k: int = 2) -> float:
    """The model's required size (spec A.9): p_model(M, λ) = P."""
    conditional = target / clocks.overtake(load, n)
    return clocks.m_required(conditional, load * clocks.DELAY_MEAN, k) if conditional < 1 else 1.0


def decreasing(rates: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted least-squares non-increasing fit of ``rates`` (pool adjacent violators):
    a larger clock cannot err more in expectation, and clustered errors make single sizes
    lumpy (the maps of sizes that divide each other share their twins)."""
    blocks = [[float(r), float(w), 1] for r, w in zip(rates, weights)]
    i = 0
    while i < len(blocks) - 1:
        if blocks[i][0] < blocks[i + 1][0]:
            (r1, w1, n1), (r2, w2, n2) = blocks[i], blocks.pop(i + 1)
            blocks[i] = [(r1 * w1 + r2 * w2) / (w1 + w2), w1 + w2, n1 + n2]
            i = max(i - 1, 0)
        else:
            i += 1
    return np.array([r for r, _, n in blocks for _ in range(n)], float)


def required(r: pd.DataFrame, fits: pd.DataFrame, n_nodes: int) -> pd.DataFrame:
    """M_req per (load, target): interpolated log-log on the non-increasing fit of the measured
    rates, or extrapolated with the power law when the fit is usable (β in ``PLAUSIBLE``)."""
    out = []
    for load, g in r.groupby("load"):
        good = g[g.errors >= MIN_ERRORS].sort_values("M")
        for target in targets():
            m, how = np.nan, "none"
            ms, rs = good.M.to_numpy(float), decreasing(good.rate.to_numpy(), good.deliveries.to_numpy(float))
            for i in range(len(ms) - 1):
                if rs[i] >= target > rs[i + 1] and rs[i + 1] > 0:
                    w = (math.log(target) - math.log(rs[i])) / (math.log(rs[i + 1]) - math.log(rs[i]))
                    m, how = math.exp(math.log(ms[i]) + w * (math.log(ms[i + 1]) - math.log(ms[i]))), "interpolated"
                    break
            else:
                a, b = fits.loc[load, "alpha"], fits.loc[load, "beta"]
                if PLAUSIBLE[0] <= b <= PLAUSIBLE[1]:
                    m, how = math.exp((a - math.log(target)) / b), "extrapolated"
            out.append({"load": load, "target": target, "M_req": m, "how": how,
                        "model": analytic(load, target, n_nodes)})
    return pd.DataFrame(out)


def table(req: pd.DataFrame) -> pd.DataFrame:
    """Required clock size per load (rows) and target (columns), ours and the model's."""
    ours = req.pivot(index="load", columns="target", values="M_req").round(0)
    model = req.pivot(index="load", columns="target", values="model").round(0)
    ours.columns = [f"ours {t:g}" for t in ours.columns]
    model.columns = [f"model {t:g}" for t in model.columns]
    return pd.concat([ours, model], axis=1)


def plot(req: pd.DataFrame, n_nodes: int):
    """Required clock size against the load, one curve per target (the paper's figure), log
    scale; hollow markers are extrapolated, dashed lines the model."""
    fig, ax = plt.subplots(figsize=(8, 5))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(targets())))
    for color, (target, g) in zip(colors, req.groupby("target", sort=False)):
        g = g.sort_values("load")
        ax.plot(g.load, g.M_req, "-", color=color, label=f"P = {target:g}")
        inside = g.how == "interpolated"
        ax.plot(g.load[inside], g.M_req[inside], "o", color=color)
        ax.plot(g.load[~inside], g.M_req[~inside], "o", mfc="white", color=color)
        ax.plot(g.load, g.model, "--", lw=0.8, color=color)
    ax.set(yscale="log", xlabel="message load (messages broadcast per second)",
           ylabel="required clock size M (entries)",
           title=f"Figure 5: clock size for a given out-of-order probability (N = {n_nodes}, k = 2)")
    ax.legend(title="ours (dashed: model)", fontsize=8)
    fig.tight_layout()
    return fig


def measure(rows: pd.DataFrame, req: pd.DataFrame, fits: pd.DataFrame, scale: str) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    piv = req.pivot(index="load", columns="target", values="M_req").sort_index()
    loads = list(piv.index)
    for target in targets():
        col = piv[target].dropna().to_numpy()
        inversions = int((np.diff(col) < 0).sum())
        out[f"002-F5-monotone-{target:g}"] = (
            Measured(inversions, f"{inversions} inversion(s) over {len(col)} loads") if len(col) >= 3
            else not_run(f"M_req at {len(col)} load(s) only"))
        if 100.0 in piv.index and 200.0 in piv.index:
            ratio = piv.loc[200.0, target] / piv.loc[100.0, target]
            out[f"002-F5-superlinear-{target:g}"] = Measured(float(ratio), f"{ratio:.2f}")
        else:
            out[f"002-F5-superlinear-{target:g}"] = not_run(f"loads 100 and 200 not in the {scale} scale")
        model = req[(req.target == target) & (req.model >= 25) & req.M_req.notna()]
        factor = float(np.max(np.maximum(model.M_req / model.model, model.model / model.M_req))) if len(model) else math.nan
        out[f"002-F5-model-{target:g}"] = (Measured(factor, f"x{factor:.2f} at most") if len(model)
                                           else not_run("no model value >= 25 at this scale"))
    for load in sorted(rows.load.unique()):
        sizes = piv.loc[load, sorted(piv.columns, reverse=True)].to_numpy()  # 1e-4 first
        ordered = bool(np.all(np.diff(sizes) > 0))
        out[f"002-F5-ordered-L{load:g}"] = (
            Measured(ordered, " < ".join(f"{m:.0f}" for m in sizes)) if np.isfinite(sizes).all()
            else not_run(f"no M_req for every target at {load:g} msg/s: {fits.loc[load, 'points']} sizes with >= "
                         f"{MIN_ERRORS} errors, slope {fits.loc[load, 'beta']:.2f} (extrapolated only within {PLAUSIBLE})"))
        beta, points = fits.loc[load, "beta"], fits.loc[load, "points"]
        out[f"002-F5-slope-L{load:g}"] = (Measured(float(beta), f"β = {beta:.2f} ({points} sizes)")
                                          if np.isfinite(beta) else not_run(f"{points} sizes with >= {MIN_ERRORS} errors"))
    for load, size in ((100.0, 100), (200.0, 280)):
        g = rows[(rows.load == load) & (rows.checked_size == size)]
        key = f"002-F5-check-L{load:g}"
        if g.empty:
            out[key] = not_run(f"load {load:g} not in the {scale} scale")
            continue
        shadow_n, direct_n = int(g[f"errors_M{size}"].sum()), int(g.direct_errors.sum())
        lo, hi = common.garwood(shadow_n)
        out[key] = Measured(bool(lo <= direct_n <= hi), f"direct {direct_n}, evaluator {shadow_n} ({lo:.0f}..{hi:.0f})")
    out["002-F5-exact"] = Measured(True, f"{len(rows)} exact executions, oracle clean (asserted)")
    return out


def explain(verdicts: pd.DataFrame, req: pd.DataFrame, fits: pd.DataFrame) -> str:
    """Sentences with the numbers of this run, for the notebook's closing cell."""
    deviates = verdicts[(verdicts.kind == "paper") & (verdicts.verdict == "DEVIATES")]
    extrapolated = int((req.how == "extrapolated").sum())
    lines = [f"{len(req)} required sizes: {len(req) - extrapolated} interpolated between measured grid sizes, "
             f"{extrapolated} extrapolated with the fitted power law (slopes β from "
             f"{np.nanmin(fits.beta):.2f} to {np.nanmax(fits.beta):.2f}; the formula's own slope over the "
             f"same sizes from {np.nanmin(fits.model_beta):.2f} to {np.nanmax(fits.model_beta):.2f})."]
    for _, row in deviates.iterrows():
        lines.append(f"DEVIATES {row['id']}: ours {row['ours']} against {row['tolerance']}.")
    if deviates.empty:
        lines.append("No paper claim deviates at this scale.")
    return "\n".join(lines)
