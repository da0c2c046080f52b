"""The closing explanation of a chapter-5 notebook, assembled from its own verdict table.

Every artifact module of the family has ``reading(verdicts, ...) -> str``: the notebook prints it
after the judge cell, so the numbers it quotes are the ones the run produced, at whatever scale
(issue 10, item 7).  ``explain`` writes one paragraph per DEVIATES, REPORT or NOT_RUN row: the
row's own numbers (ours, the paper's, the tolerance), followed by the module's explanation for
that row when it has one (``why``: id -> a function of the verdict row returning text built from
the run's values); a NOT_RUN row shows its reason.  Rows that PASS are listed with their values.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

import pandas as pd

from causal_lab.claims import DEVIATES, NOT_RUN, PASS, REPORT

Why = Mapping[str, Callable[[pd.Series], str]]


def counts(verdicts: pd.DataFrame) -> str:
    """'paper: 9 PASS, 1 DEVIATES; report: 2; sanity: 2 PASS' for the verdict table."""
    parts = []
    for kind in ("paper", "report", "sanity"):
        v = verdicts[verdicts.kind == kind].verdict.value_counts()
        if len(v):
            parts.append(f"{kind}: " + ", ".join(f"{n} {k}" for k, n in v.sort_index().items()))
    return "; ".join(parts)


_LABEL = re.compile(r"^(?:E\d+-\d+|A\d+)[^:(]*(?:\([^)]*\))?: ")


def _head(row: pd.Series) -> str:
    what = _LABEL.sub("", row["claim"])
    if row["verdict"] == NOT_RUN:
        return f"**{row['id']}** (NOT_RUN): {what}; {row['ours']}."
    band = f" (tolerance {row['tolerance']})" if row["tolerance"] not in ("", "exact") else ""
    note = f" [{row['note']}]" if row["note"] else ""
    return (f"**{row['id']}** ({row['verdict']}{', report row' if row['kind'] == 'report' else ''}): "
            f"{what}: ours {row['ours']}, thesis {row['paper']}{band}{note}.")


def explain(verdicts: pd.DataFrame, why: Why | None = None, intro: str = "",
            skip_not_run: bool = False) -> str:
    """Markdown-ish text: the counts, ``intro``, then one paragraph per row that is not a PASS
    (NOT_RUN rows too, with their reason, unless ``skip_not_run``); DEVIATES and REPORT rows get
    their explanation from ``why``."""
    why = why or {}
    out = [f"Verdicts of this run: {counts(verdicts)}."]
    said: dict[str, str] = {}  # explanation -> the first row that gave it
    if intro:
        out.append(intro)
    for _, row in verdicts.iterrows():
        if row["verdict"] == PASS or (skip_not_run and row["verdict"] == NOT_RUN):
            continue
        text = _head(row)
        if row["id"] in why and row["verdict"] in (DEVIATES, REPORT):
            extra = why[row["id"]](row)
            if extra in said:
                text += f" (Explained under {said[extra]} above.)"
            elif extra:
                said[extra] = row["id"]
                text += " " + extra
        out.append(text)
    passing = verdicts[(verdicts.verdict == PASS) & (verdicts.kind == "paper")]
    if len(passing):
        out.append("PASS (paper): " + ", ".join(f"{r.id} ({r.ours})" for r in passing.itertuples()) + ".")
    return "\n\n".join(out)


__all__ = ["explain", "counts", "DEVIATES", "REPORT", "NOT_RUN", "PASS"]
