"""Families plug in as folders: the catalog finds them, and nothing imports in a cycle."""

import subprocess
import sys
import textwrap

import pytest

from causal_lab import catalog, families
from causal_lab.params import ParameterError


def test_every_family_folder_is_found():
    assert {"vcube_broadcast", "vcube_ps"} <= set(catalog.families())
    names = set(catalog.experiments())
    assert {"vcube_broadcast", "vcube_pairs", "ps_single", "ps_churn", "ps_brokers"} <= names
    assert {"vcube_broadcast", "vcube_ps"} <= {p.family for p in catalog.protocols()}


def test_a_new_family_is_one_new_folder(tmp_path, monkeypatch):
    """A folder with an experiments module is found without touching a shared module."""
    folder = tmp_path / "toy_family"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""A family made for this test."""\n')
    (folder / "experiments.py").write_text(textwrap.dedent('''
        from causal_lab.experiment import Experiment
        from causal_lab.params import Param
        TOY = Experiment(name="toy_family_run", description="d", source="s",
                         params=(Param("x", int, 1, "x"),), grid={}, reps={"smoke": 1},
                         replicate=lambda point, seed: {"y": point["x"]})
        EXPERIMENTS = (TOY,)
    '''))
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(tmp_path)])
    assert "toy_family" in catalog.families()
    assert catalog.get("toy_family_run").replicate({"x": 3}, None) == {"y": 3}
    assert catalog.protocols("toy_family") == []  # no soak module: nothing to soak


def test_unknown_names_are_parameter_errors():
    with pytest.raises(ParameterError, match="available: "):
        catalog.get("nope")
    with pytest.raises(ParameterError, match="families: .*vcube_broadcast"):
        catalog.protocols("nope")


@pytest.mark.parametrize("module", [
    "causal_lab.catalog", "causal_lab.families.vcube_broadcast.experiments",
    "causal_lab.families.vcube_ps.experiments", "causal_lab.families.vcube_ps.srpt_broker",
    "causal_lab.engine.run", "causal_lab.sweep", "causal_lab.claims", "causal_lab.soak",
])
def test_every_module_imports_alone(module):
    """Importing any module first, in a fresh interpreter, works: no import cycle hides behind
    an import order that happens to work."""
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, timeout=120)


def test_families_import_nothing_that_lists_families():
    """The catalog looks at families; no family (and nothing they use) looks at the catalog."""
    from pathlib import Path

    from causal_lab import codegraph

    for family in catalog.families():
        module = catalog.family_module(family, "experiments")
        if module is None:
            continue
        used = codegraph.imported_files(Path(module.__file__))
        assert not any(p.name == "catalog.py" for p in used), family
