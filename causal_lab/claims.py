"""Published claims in, verdicts out: the package, not the notebooks, judges every claim.

Published numbers live in ``data/expected/`` and are only ever *read* here:

* ``data/expected/<name>.csv``: the papers' tables and quoted numbers, each row naming its
  source (seed file and section); notebooks plot them beside ours (``table``);
* ``data/expected/claims/<notebook>.csv``: one row per claim a notebook checks (``load``):

  ``id``                a stable identifier (``<seed>-<artifact>-<what>``), the key of the claim;
  ``kind``              ``paper`` (a number or shape the paper states), ``report`` (a number the
                        spec marks REPORT: shown beside the paper, never judged PASS) or
                        ``sanity`` (holds by construction or by an assertion that already stops
                        the run: a test, reported apart, never a reproduced claim);
  ``seed``, ``artifact``, ``claim``, ``source``: which paper says what, where;
  ``paper``             the paper's value (a number, or words for a shape or an ordering);
  ``relation``          how ours is compared (``RELATIONS``);
  ``tolerance``         the relation's parameter (a tolerance, a ``lo..hi`` band, a bound);
  ``tolerance_source``  where that parameter comes from: the spec's section, or ``ours: why``.

A family's ``artifacts`` module *measures* each claim from sweep results and returns
``{id: Measured}``; ``judge`` compares every claim of the notebook with its measurement and writes
the verdict rows.  A claim with no measurement, or a measurement made with ``not_run(reason)``
(the scale lacks the point), is ``NOT_RUN``; a measurement of an id that no claim row has is an
error, so code and data cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from causal_lab import paths

PAPER, REPORT_KIND, SANITY = "paper", "report", "sanity"
KINDS = (PAPER, REPORT_KIND, SANITY)
PASS, DEVIATES, NOT_RUN, REPORT = "PASS", "DEVIATES", "NOT_RUN", "REPORT"
VERDICTS = (PASS, DEVIATES, NOT_RUN, REPORT)
CLAIM_COLUMNS = ("id", "kind", "seed", "artifact", "claim", "paper", "relation", "tolerance",
                 "tolerance_source", "source")
COLUMNS = ("id", "kind", "seed", "artifact", "claim", "paper", "ours", "tolerance",
           "tolerance_source", "verdict", "note")


def _number(text) -> float:
    return float(str(text).replace("−", "-"))


def _bound(claim) -> float:
    """A one-sided relation's bound: the tolerance column, else the paper's value."""
    return _number(claim["tolerance"] or claim["paper"])


def _band(claim) -> tuple[float, float]:
    lo, hi = str(claim["tolerance"]).split("..")
    return _number(lo), _number(hi)


# relation -> (test of ours against the claim, how the tolerance column reads)
RELATIONS = {
    "equal": (lambda v, c: v == c["paper"] if isinstance(v, str) else v == _number(c["paper"]),
              lambda c: "exact"),
    "abs": (lambda v, c: abs(v - _number(c["paper"])) <= _number(c["tolerance"]),
            lambda c: f"±{c['tolerance']}"),
    "rel": (lambda v, c: abs(v - _number(c["paper"])) <= _number(c["tolerance"]) * abs(_number(c["paper"])),
            lambda c: f"±{100 * _number(c['tolerance']):g} %"),
    "range": (lambda v, c: _band(c)[0] <= v <= _band(c)[1],
              lambda c: f"{_band(c)[0]:g}..{_band(c)[1]:g}"),
    "at_most": (lambda v, c: v <= _bound(c), lambda c: f"<= {_bound(c):g}"),
    "at_least": (lambda v, c: v >= _bound(c), lambda c: f">= {_bound(c):g}"),
    "below": (lambda v, c: v < _bound(c), lambda c: f"< {_bound(c):g}"),
    "above": (lambda v, c: v > _bound(c), lambda c: f"> {_bound(c):g}"),
    # a truth value the family measured (an ordering, a shape, "in every run"); the tolerance
    # column then says in words what the measurement tolerates
    "holds": (lambda v, c: bool(v), lambda c: str(c["tolerance"])),
}


@dataclasses.dataclass(frozen=True)
class Measured:
    """Our side of one claim: the value the relation compares (None: not run), how to show it,
    and a note for the reader (what else the runs show about it)."""

    value: Any
    shown: str | None = None
    note: str = ""

    def display(self) -> str:
        if self.shown is not None:
            return self.shown
        v = self.value
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)


def not_run(reason: str) -> Measured:
    """A claim this scale cannot judge (the point is not in its grid, too few events...)."""
    return Measured(None, reason)


def table(name: str) -> pd.DataFrame:
    """A published table from ``data/expected/<name>.csv`` (must carry a ``source`` column)."""
    published = pd.read_csv(paths.expected_dir() / f"{name}.csv")
    if "source" not in published.columns:
        raise ValueError(f"data/expected/{name}.csv has no source column")
    return published


def claims_file(notebook: str) -> Path:
    return paths.expected_dir() / "claims" / f"{notebook}.csv"


def load(notebook: str) -> pd.DataFrame:
    """The claim rows a notebook judges, checked for shape (ids unique, kinds and relations
    known, every paper row with a tolerance source)."""
    rows = pd.read_csv(claims_file(notebook), dtype=str, keep_default_na=False)
    problems = []
    if tuple(rows.columns) != CLAIM_COLUMNS:
        problems.append(f"columns {tuple(rows.columns)} != {CLAIM_COLUMNS}")
    else:
        if rows["id"].duplicated().any():
            problems.append(f"duplicate ids {sorted(rows.id[rows.id.duplicated()])}")
        if bad := set(rows["kind"]) - set(KINDS):
            problems.append(f"unknown kinds {bad}")
        if bad := set(rows["relation"]) - set(RELATIONS):
            problems.append(f"unknown relations {bad}")
        if (rows["source"] == "").any():
            problems.append(f"claims without a source: {list(rows.id[rows.source == ''])}")
        judged = rows[(rows["kind"] != SANITY) & (rows["relation"] != "equal")]
        if (judged["tolerance_source"] == "").any():
            problems.append("claims whose tolerance names no source: "
                            f"{list(judged.id[judged.tolerance_source == ''])}")
    if problems:
        raise ValueError(f"{claims_file(notebook)}: " + "; ".join(problems))
    return rows


def _verdict(claim, measured: Measured | None, scale: str) -> dict:
    relation, tolerance_text = RELATIONS[claim["relation"]]
    out = {k: claim[k] for k in ("id", "kind", "seed", "artifact", "claim", "paper",
                                 "tolerance_source")}
    out["tolerance"] = tolerance_text(claim)
    if measured is None or measured.value is None:
        out.update(ours=measured.display() if measured else f"not measured at the {scale} scale",
                   verdict=NOT_RUN, note=measured.note if measured else "")
        return out
    value = measured.value
    if isinstance(value, float) and math.isnan(value):
        holds = False
    else:
        holds = bool(relation(value, claim))
    note = measured.note
    if claim["kind"] == REPORT_KIND:
        inside = "inside" if holds else "outside"
        note = "; ".join(x for x in (f"{inside} the band {out['tolerance']}", note) if x)
        verdict = REPORT
    else:
        verdict = PASS if holds else DEVIATES
    out.update(ours=measured.display(), verdict=verdict, note=note)
    return out


def judge(notebook: str, measured: Mapping[str, Measured], scale: str) -> pd.DataFrame:
    """Judge every claim of ``notebook`` against ``measured``; write and return the verdicts."""
    rows = load(notebook)
    if unknown := set(measured) - set(rows["id"]):
        raise KeyError(f"measured claims with no row in {claims_file(notebook)}: {sorted(unknown)}")
    verdicts = pd.DataFrame([_verdict(c, measured.get(c["id"]), scale) for _, c in rows.iterrows()],
                            columns=list(COLUMNS))
    return write(notebook, verdicts, scale)


def show(verdicts: pd.DataFrame) -> None:
    """Print the verdict rows and their counts as plain text (what nbval compares)."""
    shown = verdicts[["id", "kind", "paper", "ours", "tolerance", "verdict"]]
    with pd.option_context("display.max_rows", None, "display.max_colwidth", 70,
                           "display.width", 250):
        print(shown.to_string(index=False))
    counts = (verdicts["kind"] + " " + verdicts["verdict"]).value_counts().sort_index()
    print("\n" + ", ".join(f"{k}: {v}" for k, v in counts.items()))


def write(name: str, verdicts: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Write ``<verdicts dir of scale>/<name>.csv`` atomically and return the table."""
    bad = set(verdicts["verdict"]) - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdicts {bad}")
    directory = paths.verdicts_dir(scale)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        verdicts.to_csv(f, index=False)
    os.replace(tmp, directory / f"{name}.csv")
    return verdicts


def load_verdicts(directory: Path | None = None) -> pd.DataFrame:
    """Every verdict row of a verdict directory (default: the committed default scale), with a
    ``notebook`` column."""
    directory = directory or paths.verdicts_dir("default")
    files = sorted(directory.glob("*.csv"))
    if not files:
        return pd.DataFrame(columns=["notebook", *COLUMNS])
    return pd.concat([pd.read_csv(f, dtype=str, keep_default_na=False).assign(notebook=f.stem)
                      for f in files], ignore_index=True)[["notebook", *COLUMNS]]


def totals(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per notebook: paper claims PASS / DEVIATES / NOT_RUN, report rows and sanity rows."""
    kind_verdict = verdicts["kind"] + ":" + verdicts["verdict"]
    counts = pd.crosstab(verdicts["notebook"], kind_verdict)
    columns = {f"{PAPER}:{PASS}": "paper PASS", f"{PAPER}:{DEVIATES}": "paper DEVIATES",
               f"{PAPER}:{NOT_RUN}": "paper NOT_RUN"}
    out = pd.DataFrame({label: counts.get(col, 0) for col, label in columns.items()})
    out["report"] = counts[[c for c in counts if c.startswith(f"{REPORT_KIND}:")]].sum(axis=1)
    out["sanity"] = counts[[c for c in counts if c.startswith(f"{SANITY}:")]].sum(axis=1)
    out["sanity failing"] = counts.get(f"{SANITY}:{DEVIATES}", 0)
    return out.fillna(0).astype(int)
