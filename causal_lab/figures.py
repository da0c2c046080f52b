"""``make figures``: execute notebooks with papermill at one scale, one notebook per call.

Each notebook runs into ``papermill_runs/<name>.ipynb`` (``build/smoke/papermill_runs/`` at the
smoke scale), written to a temporary file first so an interrupted batch never leaves a
half-written notebook behind, with ``scale`` injected as a parameter.  Notebooks write their own
images and verdict rows.

Executed notebooks diff cleanly: what changes from one run of unchanged code to the next
(papermill's and Jupyter's timestamps and durations, the random id of the injected parameters
cell, the JVM's start-up notice in whichever cell first starts Spark) is pinned or removed, so
re-running unchanged code leaves ``git status`` clean.

The Makefile gives every notebook its own rule (``make -j2 figures`` runs two at a time and
re-runs only what is stale): ``--deps`` writes the rules' prerequisites, i.e. the notebook's cells
(without outputs), its claims and published tables, and every ``causal_lab`` module its code imports, directly or through
the experiments it names (``catalog.get("...")``).  ``--summary`` prints the status and wall time
of every notebook's last run at a scale and fails if one failed.

``--smoke-outputs`` executes the source notebooks in ``notebooks/`` in place at the smoke scale:
they are committed with those outputs, which ``make test`` compares with nbval.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

# nbformat imports jsonschema, which imports rfc3987_syntax where it is installed (JupyterLab's
# jupyter-events asks for it): that module builds a parser when imported, 2.4 s of every
# notebook's process here, for URI formats that nbformat never checks.  A None entry makes the
# import fail, and jsonschema then goes without those formats.
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat
import pandas as pd
import papermill

from causal_lab import catalog, paths
from causal_lab.params import SCALES
from causal_lab.codegraph import imported_files

# stderr lines of the JVM that appear in whichever cell first starts Spark
JVM_NOTICES = ("WARNING: Using incubator modules: jdk.incubator.vector\n",)
INJECTED_CELL_ID = "injected-parameters"


def notebooks(pattern: str = "*.ipynb") -> list[Path]:
    return sorted((paths.repo_root() / "notebooks").glob(pattern))


def output_dir(scale: str) -> Path:
    return paths.output_folder(scale, "papermill_runs")


def status_file(scale: str, name: str) -> Path:
    folder = paths.repo_root() / "build" / "status" / scale
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{Path(name).stem}.json"


def pin(book: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove or pin everything that changes between two runs of unchanged code."""
    meta = book.metadata.get("papermill")
    if meta is not None:
        for key in ("start_time", "end_time", "duration", "exception"):
            meta.pop(key, None)
    for cell in book.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "injected-parameters" in cell.metadata.get("tags", ()):
            cell.id = INJECTED_CELL_ID
        if cell.cell_type == "code":
            kept = []
            for out in cell.outputs:
                if out.output_type == "stream" and out.name == "stderr":
                    text = "".join(line for line in out.text.splitlines(keepends=True)
                                   if line not in JVM_NOTICES)
                    if not text:
                        continue
                    out.text = text
                kept.append(out)
            cell.outputs = kept
    return book


def _finish(executed: Path, source: Path, target: Path) -> None:
    """Pin the executed notebook and record repository-relative paths in papermill's metadata
    (committed outputs must not depend on where the checkout lives)."""
    book = pin(nbformat.read(executed, as_version=4))
    root = paths.repo_root()
    book.metadata.papermill["input_path"] = source.relative_to(root).as_posix()
    book.metadata.papermill["output_path"] = target.relative_to(root).as_posix()
    nbformat.write(book, executed)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_one(nb: Path, scale: str) -> tuple[float, str]:
    """Execute one notebook; return (seconds, error or '') and record them for ``--summary``."""
    out_dir = output_dir(scale)
    target = out_dir / nb.name
    tmp = target.with_name(f".{nb.stem}.tmp.ipynb")
    started = time.perf_counter()
    try:
        papermill.execute_notebook(
            str(nb), str(tmp), parameters={"scale": scale}, kernel_name="python3",
            cwd=str(nb.parent), progress_bar=False,
        )
        _finish(tmp, nb, target)
        os.replace(tmp, target)
        error = ""
    except papermill.PapermillExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}"
    finally:
        tmp.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    status_file(scale, nb.name).write_text(json.dumps(
        {"seconds": round(seconds, 1), "error": error, "ended": round(time.time(), 1)}))
    return seconds, error


def run(scale: str, pattern: str = "*.ipynb") -> list[tuple[str, float, str]]:
    """Run the notebooks one after the other; return (name, seconds, error or '') for each."""
    signal.signal(signal.SIGTERM, _interrupt)  # a terminated batch cleans up like Ctrl-C
    chosen = notebooks(pattern)
    for nb in chosen:  # only this batch's leftovers: another batch may be running beside it
        (output_dir(scale) / f".{nb.stem}.tmp.ipynb").unlink(missing_ok=True)
    return [(nb.name, *run_one(nb, scale)) for nb in chosen]


def summary(scale: str) -> int:
    """Print the last run of every notebook at ``scale``; 1 if one failed or never ran."""
    failed = 0
    total = 0.0
    for nb in notebooks():
        record = status_file(scale, nb.name)
        if not record.exists():
            print(f"{nb.name:40s} {'':>8s}    NOT RUN")
            failed += 1
            continue
        status = json.loads(record.read_text())
        total += status["seconds"]
        failed += bool(status["error"])
        print(f"{nb.name:40s} {status['seconds']:8.1f} s  "
              f"{'FAILED: ' + status['error'] if status['error'] else 'ok'}")
    print(f"total {total:.1f} s of notebook time; {failed} failed or not run")
    return 1 if failed else 0


def day(epoch_seconds: float) -> str:
    """The UTC date a run ended: a row's ``recorded`` is when it was measured, not when the
    table was rewritten (the paper scale's rows are gathered over days)."""
    return pd.Timestamp(epoch_seconds, unit="s", tz="UTC").strftime("%Y-%m-%d")


def record_timings(scale: str, partial: bool = False) -> pd.DataFrame:
    """Replace ``scale``'s rows of ``data/timings.csv`` by the last run of every notebook, and a
    row ``(batch)`` with the batch's wall time: from the first notebook's start to the last
    one's end (``make timings`` runs them all, from an empty result cache).

    ``partial``: the paper scale is run in pieces (hours each, over several checkouts), so a
    notebook with no timed run here keeps its row of ``data/timings.csv`` from an earlier piece,
    or gets a row with no seconds; the last row is the ``(sum)`` of the notebooks timed instead of
    a batch wall time that no single run measured."""
    path = paths.timings_file()
    old = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["scale", "notebook"])
    earlier = old[old.scale == scale].set_index("notebook")
    rows = []
    for nb in notebooks():
        record = status_file(scale, nb.name)
        status = json.loads(record.read_text()) if record.exists() else {}
        if "ended" in status:
            rows.append({"scale": scale, "notebook": nb.stem, "seconds": status["seconds"],
                         "failed": bool(status["error"]), "ended": status["ended"],
                         "recorded": day(status["ended"]), "cores": os.cpu_count()})
        elif not partial:
            raise SystemExit(f"{nb.name}: no timed run at the {scale} scale (run `make timings SCALE={scale}`)")
        elif nb.stem in earlier.index and pd.notna(earlier.loc[nb.stem, "seconds"]):
            rows.append({"scale": scale, "notebook": nb.stem, **earlier.loc[nb.stem].to_dict()})
        else:
            rows.append({"scale": scale, "notebook": nb.stem})
    runs = pd.DataFrame(rows)
    ran = runs.dropna(subset=["seconds"])
    if partial:
        total = {"notebook": "(sum)", "seconds": round(ran.seconds.sum(), 1)}
    else:
        total = {"notebook": "(batch)", "seconds": round(ran.ended.max() - (ran.ended - ran.seconds).min(), 1)}
    runs = pd.concat([runs, pd.DataFrame([{"scale": scale, **total, "failed": bool(ran.failed.any()),
                                           "recorded": ran.recorded.max(), "cores": os.cpu_count()}])],
                     ignore_index=True)
    runs = runs.drop(columns="ended", errors="ignore")[["scale", "notebook", "seconds", "failed", "recorded", "cores"]]
    runs = pd.concat([old[old.scale != scale], runs], ignore_index=True)
    tmp = path.with_suffix(".tmp")
    runs.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return runs


# ------------------------------------------------------------------------------------------
# Dependencies of every notebook, for the Makefile
# ------------------------------------------------------------------------------------------

_EXPERIMENT = re.compile(r"catalog\.get\(\s*[\"']([\w-]+)[\"']\s*\)")


def experiments_run(nb: Path) -> set[str]:
    """The catalog experiments a notebook runs (``catalog.get("name")`` in its code)."""
    return set(_EXPERIMENT.findall(_code(nb)))


def _code(nb: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(nb, as_version=4).cells
                     if c.cell_type == "code" and not c.source.lstrip().startswith("%"))


def dependencies(nb: Path) -> list[Path]:
    """What a notebook's outputs depend on: itself, its claims and the published tables, and the
    ``causal_lab`` modules its code imports, directly or through the experiments it runs."""
    files = imported_files(ast.parse(_code(nb)))
    experiments = catalog.experiments()
    for name in experiments_run(nb):
        files |= experiments[name].code_files()
    expected = paths.expected_dir()
    data = sorted(expected.glob("*.csv")) + sorted(expected.glob("claims/*.csv"))
    return [nb, *sorted(files), *data]


def _source_file(nb: Path, folder: Path) -> Path:
    """``folder/<name>.json``: the notebook's cells without their outputs, rewritten only when
    they change, so that refreshing the smoke outputs (``make notebooks``) leaves the default
    and paper runs up to date."""
    cells = [[c.cell_type, c.source, c.metadata.get("tags", [])]
             for c in nbformat.read(nb, as_version=4).cells]
    text = json.dumps(cells, indent=0)
    target = folder / f"{nb.stem}.json"
    if not target.exists() or target.read_text() != text:
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return target


def write_dependencies(target: Path) -> None:
    """A Makefile fragment: ``$(STAMPS)/<name>.done: <dependencies>`` for every notebook, the
    notebook itself standing for its cells without outputs (``_source_file``).

    No notebook waits for another: two that share replications through the result cache may
    run together under ``make -j2``, each computing what the other has not claimed
    (``sweep.run_sweep``)."""
    root = paths.repo_root()
    lines = ["# generated by python -m causal_lab.figures --deps; do not edit"]
    for nb in notebooks():
        deps = [_source_file(nb, target.resolve().parent / "sources"), *dependencies(nb)[1:]]
        lines.append(f"$(STAMPS)/{nb.stem}.done: " + " ".join(p.relative_to(root).as_posix() for p in deps))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, target)


# ------------------------------------------------------------------------------------------
# Smoke-scale outputs of the source notebooks (compared by nbval in make test)
# ------------------------------------------------------------------------------------------


def smoke_outputs(pattern: str = "*.ipynb") -> int:
    """Execute ``notebooks/<pattern>`` in place at the smoke scale, pinned; 1 if one failed."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    os.environ["CAUSAL_LAB_SCALE"] = "smoke"  # the kernels inherit it: the parameters cell reads it
    failed = 0
    for nb in notebooks(pattern):
        book = nbformat.read(nb, as_version=4)
        started = time.perf_counter()
        try:
            NotebookClient(book, kernel_name="python3", timeout=1800,
                           resources={"metadata": {"path": str(nb.parent)}}).execute()
        except CellExecutionError as exc:
            print(f"{nb.name}: FAILED {str(exc).splitlines()[-1] if str(exc) else exc}")
            failed += 1
            continue
        book.metadata.pop("papermill", None)
        tmp = nb.with_name(f".{nb.stem}.tmp.ipynb")
        nbformat.write(pin(book), tmp)
        os.replace(tmp, nb)
        print(f"{nb.name:40s} {time.perf_counter() - started:8.1f} s  ok")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="default", choices=SCALES)
    parser.add_argument("--only", default="*.ipynb", help="glob of notebooks to run")
    parser.add_argument("--deps", metavar="FILE", help="write the Makefile dependencies to FILE")
    parser.add_argument("--summary", action="store_true",
                        help="print the last run of every notebook at --scale; fail if one failed")
    parser.add_argument("--partial", action="store_true",
                        help="with --timings: notebooks not run at --scale get an empty row (the paper scale, run in pieces)")
    parser.add_argument("--timings", action="store_true",
                        help="write the last run of every notebook at --scale to data/timings.csv")
    parser.add_argument("--smoke-outputs", action="store_true",
                        help="execute notebooks/ in place at the smoke scale (the nbval reference)")
    args = parser.parse_args(argv)
    if args.deps:
        write_dependencies(Path(args.deps))
        return 0
    if args.summary:
        return summary(args.scale)
    if args.timings:
        print(record_timings(args.scale, args.partial).to_string(index=False))
        return 0
    if args.smoke_outputs:
        return smoke_outputs(args.only)
    outcomes = run(args.scale, args.only)
    for name, seconds, error in outcomes:
        print(f"{name:40s} {seconds:8.1f} s  {'FAILED: ' + error if error else 'ok'}")
    return 1 if any(error for *_, error in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
