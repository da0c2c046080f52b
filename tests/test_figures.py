"""``make figures``: executed notebooks that diff cleanly, and per-notebook dependencies."""

import json
from pathlib import Path

import nbformat

from causal_lab import catalog, figures, paths, warm


def _executed(start, duration, cell_id):
    book = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("scale = 'default'")
    params.id = cell_id
    params.metadata = {"tags": ["injected-parameters"],
                       "papermill": {"start_time": start, "duration": duration}}
    work = nbformat.v4.new_code_cell("run()")
    work.id = "c10-02"
    work.metadata = {"execution": {"iopub.status.busy": start}}
    work.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=figures.JVM_NOTICES[0]),
        nbformat.v4.new_output("stream", name="stdout", text="scale=default: 42 replications\n"),
    ]
    book.cells = [params, work]
    book.metadata["papermill"] = {"start_time": start, "end_time": start, "duration": duration,
                                  "exception": None, "parameters": {"scale": "default"}}
    return book


def test_two_runs_of_unchanged_code_write_the_same_file():
    a = nbformat.writes(figures.pin(_executed("2026-11-26T09:00", 51.3, "a1b2c3d4")))
    b = nbformat.writes(figures.pin(_executed("2026-11-27T17:42", 49.8, "9f8e7d6c")))
    assert a == b
    book = json.loads(a)
    assert book["cells"][0]["id"] == figures.INJECTED_CELL_ID
    outputs = book["cells"][1]["outputs"]  # the JVM's notice is gone, the notebook's own output stays
    assert [(o["name"], "".join(o["text"])) for o in outputs] == [("stdout", "scale=default: 42 replications\n")]
    assert book["metadata"]["papermill"] == {"parameters": {"scale": "default"}}


def test_dependencies_follow_the_imports_and_the_experiments():
    root = paths.repo_root()
    deps = {p.relative_to(root).as_posix() for p in
            figures.dependencies(root / "notebooks" / "10_icpp18_table1.ipynb")}
    assert "notebooks/10_icpp18_table1.ipynb" in deps
    assert "causal_lab/families/vcube_broadcast/artifacts/table1.py" in deps
    assert "causal_lab/families/vcube_broadcast/kernel.py" in deps  # via catalog.get(...)
    assert "causal_lab/oracle.py" in deps and "data/expected/claims/10_icpp18_table1.csv" in deps
    assert not any("families/vcube_ps/" in d for d in deps)  # another family's edit: not stale


def test_every_notebook_is_thin():
    """Notebooks drive (parameters, sweep, judge, figure); the package holds the judgement."""
    for nb in sorted((paths.repo_root() / "notebooks").glob("*.ipynb")):
        code = [c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code"]
        lines = sum(1 for c in code for line in c.splitlines() if line.strip())
        defs = sum(line.lstrip().startswith("def ") for c in code for line in c.splitlines())
        judged = [c for c in code if c.startswith("# NBVAL_CHECK_OUTPUT")]
        assert lines <= 110 and defs <= 1, f"{nb.name}: {lines} code lines, {defs} defs"
        assert judged and all("claims.judge(" in c for c in judged[-1:]), nb.name


def test_paper_timings_in_pieces_keep_earlier_pieces_and_leave_the_rest_empty(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "repo_root", lambda: tmp_path)
    (tmp_path / "data").mkdir()
    books = [tmp_path / "notebooks" / f"{n}.ipynb" for n in ("10_a", "20_b", "30_c")]
    monkeypatch.setattr(figures, "notebooks", lambda pattern="*.ipynb": books)
    figures.status_file("paper", "10_a.ipynb").write_text(json.dumps({"seconds": 100.0, "error": "", "ended": 1000.0}))
    figures.status_file("paper", "30_c.ipynb").write_text(json.dumps({"seconds": 50.0, "error": "x", "ended": 5000.0}))
    try:
        figures.record_timings("paper")
        raise AssertionError("a whole-batch timing was recorded without a run of 20_b")
    except SystemExit as refused:
        assert "20_b" in str(refused)
    rows = figures.record_timings("paper", partial=True).set_index("notebook")
    assert rows.loc["10_a", "seconds"] == 100.0 and rows.loc["30_c", "failed"]
    assert rows.loc["20_b"].isna()["seconds"]
    assert rows.loc["(sum)", "seconds"] == 150.0 and rows.loc["(sum)", "failed"]
    assert rows.loc["10_a", "recorded"] == "1970-01-01"  # the day the run ended, not today
    written = (tmp_path / "data" / "timings.csv").read_text().splitlines()
    assert written[0] == "scale,notebook,seconds,failed,recorded,cores" and len(written) == 5
    # the next piece, in another checkout: 20_b runs; the earlier pieces keep their rows
    for name in ("10_a", "30_c"):
        figures.status_file("paper", f"{name}.ipynb").unlink()
    figures.status_file("paper", "20_b.ipynb").write_text(json.dumps({"seconds": 7.0, "error": "", "ended": 200000.0}))
    rows = figures.record_timings("paper", partial=True).set_index("notebook")
    assert rows.loc["10_a", "seconds"] == 100.0 and rows.loc["20_b", "seconds"] == 7.0
    assert rows.loc["(sum)", "seconds"] == 157.0 and len(rows) == 4
    assert list(rows.recorded) == ["1970-01-01", "1970-01-03", "1970-01-01", "1970-01-03"]


def test_the_warm_up_runs_each_protocol_variant_once():
    """One smoke point per protocol of the cross-family benchmark: each kernel compiles once."""
    cross = catalog.get("cross_family")
    points = warm._variants(cross)
    assert len(points) == len({p["protocol"] for p in cross.points("smoke")}) > 1
    assert [p["protocol"] for p in points] == list(dict.fromkeys(p["protocol"] for p in cross.points("smoke")))


def test_no_notebook_waits_for_another():
    """Notebooks sharing replications run together under make -j2: their sweeps claim
    replications (tests/test_sweep.py), so make need not order them."""
    target = paths.repo_root() / "build" / "test-deps.mk"  # not make's own build/deps.mk
    figures.write_dependencies(target)
    rules = [line for line in target.read_text().splitlines() if line.startswith("$(STAMPS)/")]
    assert len(rules) == len(figures.notebooks()) and not any("|" in rule for rule in rules)