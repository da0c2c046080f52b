"""Table 1 of seed 004 (notebook ``60_ed_table1``): messages delivered out of causal order by
probabilistic causal broadcast without detector, left by the Mostéfaoui-Weiss detector, and with
the hash detector (paper: 507 / 502 / 0 of 100 000 broadcasts, N = 200, 100 msg/s, M = 50).

Every count is the oracle's.  R1 (no detector acts) gives the first two columns: its errors, and
those of them the Mostéfaoui detector does not flag (spec §3.5: Table 1's "among them").  R2 runs
the hash detector with dependency requests on the same workload; its column is the errors left.
Counts are scaled to 100 000 broadcasts when a scale runs fewer.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from causal_lab import claims, plotting
from causal_lab.claims import Measured, not_run

NOTEBOOK = "60_ed_table1"
PER = 100_000  # the paper's broadcasts
MIN_ERRORS = 10  # below this, detection shares are not judged
COLUMNS = {  # our column -> (what it counts, sweep column)
    "Probabilistic": ("errors of R1 (no detector)", "r1_errors"),
    "Mostéfaoui": ("errors of R1 the detector does not flag (spec §3.3 polarity)", "r1_mw_normative_missed"),
    "Mostéfaoui, literal reading": ("errors of R1 the literal polarity does not flag", "r1_mw_literal_missed"),
    "Hash (authors' mode)": ("errors left by the hash detector with requests", "r2_authors_errors"),
    "Hash (residual search, ours)": ("errors left by our variant with requests", "r2_residual_errors"),
}


PAPER_ROW = {"Probabilistic": "Probabilistic", "Mostéfaoui": "Mostéfaoui",
             "Hash (authors' mode)": "Hash error detector"}


def pooled(rows: pd.DataFrame) -> pd.DataFrame:
    """Sums over the replications of each k (counts add up; rates are ratios of sums)."""
    return rows.groupby("k_used").sum(numeric_only=True).assign(runs=rows.groupby("k_used").size())


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """The paper's row beside ours: per 100 000 broadcasts, then the raw counts."""
    paper = claims.table("004_table1_errors").set_index("algorithm")["errors"]
    out = {"paper (100 000 broadcasts)": [paper.get(PAPER_ROW.get(c), np.nan) for c in COLUMNS]}
    for k, r in pooled(rows).iterrows():
        scale = PER / r["r1_broadcasts"]
        out[f"ours, k = {k}, per 100 000"] = [round(r[col] * scale, 1) for _, col in COLUMNS.values()]
        out[f"ours, k = {k}, counted"] = [int(r[col]) for _, col in COLUMNS.values()]
    return pd.DataFrame(out, index=list(COLUMNS)).rename_axis("errors")


def details(rows: pd.DataFrame) -> pd.DataFrame:
    """What each detector flagged, caught and cost, per k (sums over the replications)."""
    out = []
    for k, r in pooled(rows).iterrows():
        errors = r["r1_errors"]
        for name, prefix in (("Mostéfaoui", "r1_mw_normative"), ("Mostéfaoui literal", "r1_mw_literal"),
                             ("hash authors (shadow)", "r1_hash_authors"), ("hash residual (shadow)", "r1_hash_residual")):
            out.append({"k": k, "detector": name, "flagged deliveries %": 100 * r[f"{prefix}_flagged"] / r["r1_deliveries"],
                        "errors caught": int(r[f"{prefix}_caught"]), "of errors": int(errors),
                        "caught %": 100 * r[f"{prefix}_caught"] / errors if errors else np.nan})
        for mode in ("authors", "residual"):
            p = f"r2_{mode}_"
            out.append({"k": k, "detector": f"hash {mode} + requests", "errors left": int(r[p + "errors"]),
                        "hash collisions": int(r[p + "collisions"]), "errors through collisions": int(r[p + "collision_errors"]),
                        "REQ": int(r[p + "req"]), "REQ needed": int(r[p + "req_needed"]),
                        "requested messages": int(r[p + "req_messages"]),
                        "request rate": r[p + "req"] / (r[p + "broadcasts"] * r["n_nodes"] / r["runs"]),
                        "skipped slots": int(r[p + "skipped_slots"]),
                        "hashes per test": r[p + "mean_hashes"] / r["runs"]})
    return pd.DataFrame(out).set_index(["k", "detector"])


def plot(ours: pd.DataFrame):
    """Errors per 100 000 broadcasts, the paper's bars beside ours (k = 4)."""
    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(len(ours))
    paper = ours.iloc[:, 0]
    mine = ours[[c for c in ours.columns if "per 100 000" in c][0]]
    ax.bar(x - 0.2, paper.fillna(0), 0.4, color=plotting.PALETTE["paper"], label="paper (Table 1)")
    ax.bar(x + 0.2, mine, 0.4, color=plotting.PALETTE["ours"], label=f"ours ({mine.name})")
    for xi, (p, o) in enumerate(zip(paper, mine)):
        if not np.isnan(p):
            ax.annotate(f"{p:g}", (xi - 0.2, p), ha="center", va="bottom", fontsize=8)
        ax.annotate(f"{o:g}", (xi + 0.2, o), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [c.replace(" (", "\n(").replace(", ", ",\n") for c in ours.index], fontsize=8)
    ax.set(ylabel="messages delivered out of causal order\nper 100 000 broadcasts",
           title="Table 1: out-of-order deliveries, N = 200, 100 msg/s, M = 50")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _share(caught, errors) -> Measured:
    if errors < MIN_ERRORS:
        return not_run(f"{int(errors)} errors: fewer than {MIN_ERRORS}")
    return Measured(caught / errors, f"{caught / errors:.1%} ({int(caught)} of {int(errors)})")


def measure(rows: pd.DataFrame, scale: str) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    sums = pooled(rows)
    main = sums.loc[4]
    scale_to = PER / main["r1_broadcasts"]
    runs = f"{int(main['runs'])} runs, {int(main['r1_broadcasts'])} broadcasts"
    errors = main["r1_errors"]
    out["004-T1-errors-plain"] = Measured(errors * scale_to, f"{errors * scale_to:.0f} ({int(errors)} in {runs})")
    missed = main["r1_mw_normative_missed"]
    out["004-T1-mw-missed"] = Measured(missed * scale_to, f"{missed * scale_to:.0f} ({int(missed)} in {runs})")
    out["004-T1-mw-caught-share"] = _share(main["r1_mw_normative_caught"], errors)
    out["004-T1-mw-literal-caught-share"] = _share(main["r1_mw_literal_caught"], errors)
    out["004-T1-hash-shadow-authors"] = _share(main["r1_hash_authors_caught"], errors)
    out["004-T1-hash-shadow-residual"] = _share(main["r1_hash_residual_caught"], errors)
    for mode in ("authors", "residual"):
        left = int(main[f"r2_{mode}_errors"])
        out[f"004-T1-hash-errors-{mode}"] = Measured(left, f"{left} in {int(main[f'r2_{mode}_broadcasts'])} broadcasts")
    left = main["r2_authors_errors"]
    if errors + left == 0:
        out["004-T1-paired"] = not_run("no error in either run")
    else:  # conditional binomial test of equal rates, exposures = deliveries (spec §7.2)
        share = main["r2_authors_deliveries"] / (main["r2_authors_deliveries"] + main["r1_deliveries"])
        p = stats.binomtest(int(left), int(errors + left), share, alternative="less").pvalue
        out["004-T1-paired"] = Measured(float(p), f"p = {p:.2g} ({int(left)} vs {int(errors)})")
    ordered = errors >= missed >= left
    out["004-T1-ordering"] = Measured(bool(ordered), f"{int(errors)} >= {int(missed)} >= {int(left)}: {'yes' if ordered else 'no'}")
    req, needed = main["r2_residual_req"], main["r2_residual_req_needed"]
    out["004-T1-req-needed-residual"] = (Measured(needed / req, f"{needed / req:.1%} of {int(req)}")
                                         if req >= MIN_ERRORS else not_run(f"{int(req)} requests"))
    if 2 in sums.index:
        k2 = sums.loc[2]
        out["004-T1-errors-plain-k2"] = Measured(k2["r1_errors"] * PER / k2["r1_broadcasts"],
                                                 f"{k2['r1_errors'] * PER / k2['r1_broadcasts']:.0f} ({int(k2['r1_errors'])} errors)")
    else:
        out["004-T1-errors-plain-k2"] = not_run(f"k = 2 is run at the paper scale only ({scale})")
    bad = int(rows.filter(regex="duplicates|undelivered").to_numpy().sum())
    out["004-T1-integrity"] = Measured(bad == 0, f"{bad} duplicated or undelivered in {len(rows) * 3} runs")
    return out
