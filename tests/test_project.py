"""Project plumbing: environment files in sync, published numbers well-formed."""

import json
import tomllib
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"]) | set(project["optional-dependencies"]["dev"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert set(pip) - {"-e ."} == wanted
    assert "-e ." in pip
    assert any(str(d).startswith("openjdk=17") for d in env["dependencies"])
    python = next(d for d in env["dependencies"] if str(d).startswith("python="))
    assert project["requires-python"] == ">=" + python.split("=")[1]


def test_expected_tables_name_their_source():
    files = sorted((ROOT / "data" / "expected").glob("*.csv"))
    assert files
    for f in files:
        table = pd.read_csv(f)
        assert "source" in table.columns, f
        assert table["source"].str.match(r"00[0-4]_[0-9a-f]{16}\.txt ").all(), f


def test_ci_runs_make_test():
    script = (ROOT / ".ci" / "run").read_text()
    assert "make test" in script


def test_executed_notebooks_do_not_depend_on_the_checkout_location():
    for f in sorted((ROOT / "papermill_runs").glob("*.ipynb")):
        meta = json.loads(f.read_text())["metadata"]["papermill"]
        assert not meta["input_path"].startswith("/") and not meta["output_path"].startswith("/"), f
        assert meta["output_path"] == f"papermill_runs/{f.name}", f
