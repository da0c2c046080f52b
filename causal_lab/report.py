"""``make report``: the reproduction report, a static site under ``report/`` built from what the
runs wrote (``data/verdicts/``, ``figures/``, ``papermill_runs/``, and their ``paper/`` folders
when the paper scale ran), never by hand.

* ``index.html``: per-paper totals (paper claims, report rows and sanity checks counted apart, at
  both scales), then one section per published artifact: its figure, its verdict counts and every
  claim row (the paper's claim and value, ours, the tolerance and where it comes from, the
  verdict at the default and at the paper scale), its measured run time at both scales
  (``data/timings.csv``), with a link to the rendered notebook;
* ``notebooks/<notebook>.html``: the executed notebook, rendered by nbconvert;
* ``deviates/<notebook>.html``: one page per artifact with DEVIATES rows: those rows and the
  explanation its notebook printed (every cell after the judge cell).

An artifact is a notebook with a claims file; which paper it belongs to follows from the
notebook's number (``PAPERS``).  Companion notebooks (the VCube overlay, the cross-family
benchmark) are listed after the artifacts; the cross-family benchmark (notebook 90, no paper of its
own) also gets a section of its own: its figure, its table and its generated reading, taken from
the executed notebook (``cross_family_section``).
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import mistune
import nbconvert
import nbformat
import pandas as pd

from causal_lab import claims, paths

# notebook number prefix -> (paper, how many artifacts it publishes)
PAPERS = {
    "1": ("Seed 000 (ICPP 2018) / thesis chapter 4: VCube causal aggregation broadcast", 11),
    "2": ("Seed 000 (ICPP 2018) / thesis chapter 4: VCube causal aggregation broadcast", 11),
    "3": ("Thesis chapter 5: VCube-PS publish/subscribe", 9),
    "4": ("Seed 001: free-scale P2P causal protocol", 6),
    "5": ("Seed 002: probabilistic clocks and the Dynamic Clock Set", 6),
    "6": ("Seed 004: error detectors for probabilistic causal broadcast", 3),
}
COMPANIONS = ("00", "90")  # notebooks that are not a published artifact
CROSS_FAMILY = "90_cross_family"
SCALES = ("default", "paper")
JUDGE_MARK = "# NBVAL_CHECK_OUTPUT"


@dataclass
class Artifact:
    notebook: str
    paper: str
    title: str
    verdicts: dict[str, pd.DataFrame]  # scale -> verdict rows ("" frame when not run)

    @property
    def figure(self) -> str:
        return f"figures/{self.notebook}.png"


def _title(notebook: Path) -> str:
    """The first line of the notebook's first markdown cell, without the heading marks."""
    book = nbformat.read(notebook, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            return cell.source.strip().splitlines()[0].lstrip("# ").strip()
    return notebook.stem


def _verdicts(scale: str, notebook: str) -> pd.DataFrame:
    path = paths.repo_root() / ("data/verdicts" if scale == "default" else "data/verdicts/paper") / f"{notebook}.csv"
    if not path.exists():
        return pd.DataFrame(columns=list(claims.COLUMNS))
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def artifacts() -> list[Artifact]:
    """Every notebook with a claims file, in notebook order."""
    root = paths.repo_root()
    out = []
    for nb in sorted((root / "notebooks").glob("*.ipynb")):
        prefix = nb.stem[:2]
        if prefix in COMPANIONS or not claims.claims_file(nb.stem).exists():
            continue
        if prefix[0] not in PAPERS:
            raise ValueError(f"{nb.name}: no paper for notebook numbers {prefix[0]}x (report.PAPERS)")
        out.append(Artifact(nb.stem, PAPERS[prefix[0]][0], _title(nb),
                            {s: _verdicts(s, nb.stem) for s in SCALES}))
    return out


def run_times() -> dict[str, dict[str, pd.Series]]:
    """``data/timings.csv`` by scale and notebook: each notebook's measured wall time (while it
    shared the cores with the rest of its batch), the day it was recorded and the core count.
    The default scale's ``(batch)`` row is one batch's wall; the paper scale's ``(sum)`` adds the
    walls of notebooks run in several batches, so it is not a batch wall."""
    path = paths.timings_file()
    table = pd.read_csv(path).dropna(subset=["seconds"]) if path.exists() else pd.DataFrame(columns=["scale", "notebook"])
    return {s: dict(list(table[table.scale == s].set_index("notebook").iterrows())) for s in SCALES}


def _run_time_line(times: dict[str, dict[str, pd.Series]], notebook: str) -> str:
    parts = [f"{s} scale {times[s][notebook].seconds:,.0f} s ({times[s][notebook].recorded})"
             if notebook in times[s] else f"{s} scale not timed" for s in SCALES]
    return "run time (wall, data/timings.csv): " + "; ".join(parts)


def _batch_line(times: dict[str, dict[str, pd.Series]]) -> str:
    default, paper = times["default"].get("(batch)"), times["paper"].get("(sum)")
    parts = []
    if default is not None:
        parts.append(f"default scale: the whole batch in {default.seconds:,.0f} s wall on "
                     f"{default.cores:.0f} cores ({default.recorded})")
    if paper is not None:
        parts.append(f"paper scale: {paper.seconds:,.0f} s of notebook time added over the batches it was "
                     f"run in (notebooks share the {paper.cores:.0f} cores, so this is not the batch's wall; "
                     "README.md gives the measured batch walls)")
    return "; ".join(parts)


def counts(verdicts: pd.DataFrame) -> dict[str, int]:
    """Paper claims by verdict, report rows, sanity rows and how many of them fail."""
    kind, verdict = verdicts["kind"], verdicts["verdict"]
    paper = verdict[kind == claims.PAPER]
    return {"PASS": int((paper == claims.PASS).sum()), "DEVIATES": int((paper == claims.DEVIATES).sum()),
            "NOT_RUN": int((paper == claims.NOT_RUN).sum()), "report": int((kind == claims.REPORT_KIND).sum()),
            "sanity": int((kind == claims.SANITY).sum()),
            "sanity failing": int(((kind == claims.SANITY) & (verdict == claims.DEVIATES)).sum())}


def explanation(notebook: Path) -> str:
    """What the notebook says after its judge cell, as HTML: the markdown cells and the text or
    markdown its code cells printed (the generated reading of the verdicts)."""
    book = nbformat.read(notebook, as_version=4)
    parts, after = [], False
    for cell in book.cells:
        if cell.cell_type == "code" and cell.source.startswith(JUDGE_MARK):
            after = True
            continue
        if not after:
            continue
        if cell.cell_type == "markdown":
            parts.append(mistune.html(cell.source))
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/markdown" in data:
                parts.append(mistune.html(data["text/markdown"]))
            elif out.get("output_type") == "stream":
                parts.append(f"<pre>{html.escape(out['text'])}</pre>")
            elif "text/plain" in data:
                parts.append(f"<pre>{html.escape(data['text/plain'])}</pre>")
    return "\n".join(parts) or "<p>(the notebook prints no explanation)</p>"


def cross_family_section(executed: Path, figure: bool) -> str:
    """Notebook 90's section: its figure, the table its sweep cell displayed (the first HTML
    output) and what it prints after its judge cell, with a link to the rendered notebook."""
    book = nbformat.read(executed, as_version=4)
    tables = [out["data"]["text/html"] for cell in book.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if "text/html" in out.get("data", {})]
    image = (f"<img class='wide' src='figures/{CROSS_FAMILY}.png' alt='{CROSS_FAMILY} figure'>"
             if figure else "")
    return (f"<section class='cross' id='{CROSS_FAMILY}'><h2>Cross-family benchmark</h2>"
            f"<p>Every causal broadcast protocol on one common workload (issue 14; no paper of its own): "
            f"<a href='notebooks/{CROSS_FAMILY}.html'>{CROSS_FAMILY}.ipynb (rendered)</a></p>{image}"
            f"<div class='table'>{tables[0] if tables else '<p>(no table)</p>'}</div>"
            f"{explanation(executed)}</section>")


# ------------------------------------------------------------------------------------------
# HTML
# ------------------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
.PASS { background: #e3f4e3; } .DEVIATES { background: #fde2e0; }
.NOT_RUN { background: #eee; color: #666; } .REPORT { background: #e6eefb; }
section.artifact { border-top: 2px solid #999; margin-top: 2em; }
img.thumb { max-width: 28em; max-height: 18em; border: 1px solid #ddd; float: right; margin: 0 0 1em 1em; }
details > summary { cursor: pointer; }
.clear { clear: both; }
section.cross { border-top: 2px solid #999; margin-top: 2em; }
img.wide { max-width: 100%; border: 1px solid #ddd; }
div.table { overflow-x: auto; }
"""


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def _cell(value) -> str:
    return html.escape(str(value))


def _totals_table(rows: list[tuple[str, dict[str, dict[str, int]]]]) -> str:
    head = ("<tr><th rowspan=2>paper</th>" + "".join(f"<th colspan=6>{s} scale</th>" for s in SCALES) + "</tr><tr>"
            + "<th>paper PASS</th><th>paper DEVIATES</th><th>paper NOT_RUN</th><th>report</th><th>sanity</th>"
              "<th>sanity failing</th>" * len(SCALES) + "</tr>")
    body = "".join("<tr><td>" + _cell(name) + "</td>"
                   + "".join(f"<td>{c[s][k]}</td>" for s in SCALES for k in
                             ("PASS", "DEVIATES", "NOT_RUN", "report", "sanity", "sanity failing")) + "</tr>"
                   for name, c in rows)
    return f"<table class='totals'>{head}{body}</table>"


def _claims_table(art: Artifact) -> str:
    default, paper = art.verdicts["default"], art.verdicts["paper"].set_index("id") if len(art.verdicts["paper"]) else None
    head = ("<tr><th>id</th><th>kind</th><th>claim</th><th>paper</th><th>ours (default)</th><th>tolerance</th>"
            "<th>tolerance from</th><th>default</th><th>ours (paper scale)</th><th>paper scale</th></tr>")
    rows = []
    for r in default.itertuples():
        p_ours, p_verdict = ("", "not run")
        if paper is not None and r.id in paper.index:
            p_ours, p_verdict = paper.loc[r.id, "ours"], paper.loc[r.id, "verdict"]
        rows.append(f"<tr class='claim'><td>{_cell(r.id)}</td><td>{_cell(r.kind)}</td><td>{_cell(r.claim)}</td>"
                    f"<td>{_cell(r.paper)}</td><td>{_cell(r.ours)}</td><td>{_cell(r.tolerance)}</td>"
                    f"<td>{_cell(r.tolerance_source)}</td><td class='{_cell(r.verdict)}'>{_cell(r.verdict)}</td>"
                    f"<td>{_cell(p_ours)}</td><td class='{_cell(p_verdict)}'>{_cell(p_verdict)}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _artifact_section(art: Artifact, times: dict[str, dict[str, pd.Series]]) -> str:
    c = {s: counts(v) for s, v in art.verdicts.items()}
    line = lambda s: (f"{s} scale: " + (f"paper claims {c[s]['PASS']} PASS, {c[s]['DEVIATES']} DEVIATES, "
                                         f"{c[s]['NOT_RUN']} NOT_RUN; {c[s]['report']} report rows; "
                                         f"{c[s]['sanity']} sanity checks ({c[s]['sanity failing']} failing)"
                                         if len(art.verdicts[s]) else "not run"))
    deviates = (f" · <a href='deviates/{art.notebook}.html'>DEVIATES explained</a>"
                if c["default"]["DEVIATES"] or c["paper"]["DEVIATES"] else "")
    return (f"<section class='artifact' id='{art.notebook}'><h3>{_cell(art.title)}</h3>"
            f"<img class='thumb' src='{art.figure}' alt='{_cell(art.notebook)} figure'>"
            f"<p><a href='notebooks/{art.notebook}.html'>{art.notebook}.ipynb (rendered)</a>{deviates}</p>"
            f"<p>{_cell(line('default'))}<br>{_cell(line('paper'))}</p>"
            f"<p class='runtime'>{_cell(_run_time_line(times, art.notebook))}</p>"
            f"<details><summary>{len(art.verdicts['default'])} claim rows</summary>{_claims_table(art)}</details>"
            f"<div class='clear'></div></section>")


def _deviates_page(art: Artifact, executed: Path) -> str:
    rows = []
    for scale in SCALES:
        v = art.verdicts[scale]
        v = v[v.verdict == claims.DEVIATES]
        if len(v):
            rows.append(f"<h2>{scale} scale</h2><table><tr><th>id</th><th>kind</th><th>claim</th><th>paper</th>"
                        "<th>ours</th><th>tolerance</th><th>tolerance from</th></tr>"
                        + "".join(f"<tr><td>{_cell(r.id)}</td><td>{_cell(r.kind)}</td><td>{_cell(r.claim)}</td>"
                                  f"<td>{_cell(r.paper)}</td><td>{_cell(r.ours)}</td><td>{_cell(r.tolerance)}</td>"
                                  f"<td>{_cell(r.tolerance_source)}</td></tr>" for r in v.itertuples())
                        + "</table>")
    body = (f"<p><a href='../index.html#{art.notebook}'>back to the report</a></p><h1>{_cell(art.title)}: "
            f"what deviates and why</h1>{''.join(rows)}<h2>The notebook's explanation (default scale)</h2>"
            f"{explanation(executed)}")
    return _page(f"{art.notebook}: deviations", body)


def build(target: Path | None = None) -> Path:
    """Write the site into ``target`` (default ``report/``), atomically: a half-built site never
    replaces a complete one."""
    root = paths.repo_root()
    target = target or root / "report"
    arts = artifacts()
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=target.parent))
    try:
        for folder in ("notebooks", "deviates", "figures"):
            (staging / folder).mkdir()
        exporter = nbconvert.HTMLExporter()
        executed = {}
        for nb in sorted((root / "notebooks").glob("*.ipynb")):
            run = root / "papermill_runs" / nb.name
            if run.exists():
                executed[nb.stem] = run
                body, _ = exporter.from_filename(str(run))
                (staging / "notebooks" / f"{nb.stem}.html").write_text(body)
            figure = root / "figures" / f"{nb.stem}.png"
            if figure.exists():
                shutil.copy2(figure, staging / "figures" / figure.name)
        by_paper: dict[str, list[Artifact]] = {}
        for art in arts:
            by_paper.setdefault(art.paper, []).append(art)
            if art.notebook in executed and any(counts(v)["DEVIATES"] for v in art.verdicts.values()):
                (staging / "deviates" / f"{art.notebook}.html").write_text(
                    _deviates_page(art, executed[art.notebook]))
        totals = [(paper, {s: counts(pd.concat([a.verdicts[s] for a in group])) for s in SCALES})
                  for paper, group in by_paper.items()]
        totals.append(("all papers", {s: counts(pd.concat([a.verdicts[s] for a in arts])) for s in SCALES}))
        expected = {PAPERS[k][0]: PAPERS[k][1] for k in PAPERS}
        times = run_times()
        sections = []
        for paper, group in by_paper.items():
            sections.append(f"<h2>{_cell(paper)} ({len(group)} of {expected[paper]} artifacts)</h2>"
                            + "".join(_artifact_section(a, times) for a in group))
        companions = [nb.stem for nb in sorted((root / "notebooks").glob("*.ipynb"))
                      if nb.stem[:2] in COMPANIONS and nb.stem in executed]
        body = ("<h1>causal_lab: reproduction report</h1>"
                f"<p>{len(arts)} published artifacts. Built by <code>make report</code> from "
                "<code>data/verdicts/</code> (default scale) and <code>data/verdicts/paper/</code> (paper scale) "
                "and the executed notebooks; paper claims, report rows and sanity checks are counted apart "
                "(a sanity check holds by construction: it is a test, not a reproduced claim).</p>"
                + _totals_table(totals) + f"<p class='runtime'>{_cell(_batch_line(times))}</p>" + "".join(sections)
                + (cross_family_section(executed[CROSS_FAMILY], (staging / "figures" / f"{CROSS_FAMILY}.png").exists())
                   if CROSS_FAMILY in executed else "")
                + "<h2>Companion notebooks</h2><ul>"
                + "".join(f"<li><a href='notebooks/{n}.html'>{n}.ipynb</a></li>" for n in companions) + "</ul>")
        (staging / "index.html").write_text(_page("causal_lab reproduction report", body))
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="target folder (default: report/)")
    args = parser.parse_args(argv)
    target = build(args.out)
    print(f"report written to {target}/index.html")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
