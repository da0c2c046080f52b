"""Generated "Reading the verdicts" text (issue 10, item 7): every notebook of this family prints
its explanation from the verdict table it has just judged and from the summaries of the run,
so a paper-scale run states its own numbers instead of the default scale's.

Each artifact module's ``reading(verdicts, ...)`` writes its paragraphs with the helpers below;
``compose`` appends a line for every DEVIATES or REPORT row that no paragraph explained, so no
such row can go unmentioned.
"""

from __future__ import annotations

import pandas as pd


def counts(verdicts: pd.DataFrame) -> str:
    """One line: paper claims by verdict, report rows, sanity rows (and how many hold)."""
    kind = verdicts["kind"]
    paper = verdicts[kind == "paper"].verdict.value_counts()
    sanity = verdicts[kind == "sanity"]
    parts = [f"paper claims: {paper.get('PASS', 0)} PASS, {paper.get('DEVIATES', 0)} DEVIATES, "
             f"{paper.get('NOT_RUN', 0)} NOT_RUN"]
    if (kind == "report").any():
        parts.append(f"{int((kind == 'report').sum())} report rows (never PASS)")
    if len(sanity):
        failing = int((sanity.verdict == "DEVIATES").sum())
        parts.append(f"{len(sanity)} sanity rows ({'all hold' if failing == 0 else f'{failing} FAIL'}"
                     f"{', ' + str(int((sanity.verdict == 'NOT_RUN').sum())) + ' not run' if (sanity.verdict == 'NOT_RUN').any() else ''})")
    return "; ".join(parts) + "."


def row(verdicts: pd.DataFrame, cid: str) -> pd.Series:
    """The verdict row of claim ``cid``."""
    hit = verdicts[verdicts["id"] == cid]
    if hit.empty:
        raise KeyError(cid)
    return hit.iloc[0]


def verdict(verdicts: pd.DataFrame, cid: str) -> str:
    return str(row(verdicts, cid).verdict)


def ours(verdicts: pd.DataFrame, cid: str) -> str:
    return str(row(verdicts, cid).ours)


def ran(verdicts: pd.DataFrame, *cids: str) -> bool:
    """Whether every one of ``cids`` was judged (not NOT_RUN) at this scale."""
    return all(verdict(verdicts, c) != "NOT_RUN" for c in cids)


def flagged(verdicts: pd.DataFrame) -> list[str]:
    """Ids of the rows a reader must be told about: DEVIATES (paper or sanity) and REPORT."""
    return list(verdicts[verdicts.verdict.isin(["DEVIATES", "REPORT"])]["id"])


def which(verdicts: pd.DataFrame, cids) -> str:
    """'PASS' / 'DEVIATES' / 'REPORT' / 'NOT_RUN', or a summary when several rows differ."""
    got = [verdict(verdicts, c) for c in cids]
    kinds = sorted(set(got))
    if len(kinds) == 1:
        return kinds[0]
    return ", ".join(f"{got.count(k)} {k}" for k in kinds)


def line(verdicts: pd.DataFrame, cid: str) -> str:
    """The generic sentence of one row: claim, paper, ours, verdict."""
    r = row(verdicts, cid)
    note = f" ({r.note})" if str(r.note) else ""
    return f"`{cid}` {r.claim}: paper {r.paper}, ours {r.ours} -> {r.verdict}{note}"


def compose(verdicts: pd.DataFrame, paragraphs: list[tuple[list[str], str]], closing: str = "") -> str:
    """The reading: the counts, then every paragraph (ids it explains, text; empty texts are
    skipped), then one generic line per flagged row no paragraph covered, then ``closing``."""
    explained = {c for cids, text in paragraphs if text for c in cids}
    out = [f"**Reading the verdicts** ({counts(verdicts)})"]
    out += [text for _, text in paragraphs if text]
    rest = [c for c in flagged(verdicts) if c not in explained]
    if rest:
        out.append("Other rows to read:\n" + "\n".join(f"* {line(verdicts, c)}" for c in rest))
    if closing:
        out.append(closing)
    return "\n\n".join(out)


def pct(a: float, b: float) -> float:
    """100 (a - b) / b."""
    return 100.0 * (a - b) / b
