"""The cross-family benchmark (issue 14): every family's adapter runs the common workload, exact
protocols are oracle-clean, every protocol broadcasts the identical schedule, the common byte
accounting holds where it can be computed by hand, and bad parameters are refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from causal_lab import catalog, codegraph, cross_family
from causal_lab.params import ParameterError

N = 16
POINT = {"n_nodes": N, "load": 1000.0, "broadcasts": 120, "tpp_mean": 100.0, "tpp_sigma": 25.0}


@pytest.fixture(scope="module")
def rows():
    exp = catalog.get("cross_family")
    seed = np.random.SeedSequence(7)
    return {p.name: exp.replicate({**POINT, "protocol": p.name}, seed)
            for p in catalog.cross_protocols()}


def test_catalog_finds_every_family_protocol():
    names = [p.name for p in catalog.cross_protocols()]
    assert set(names) == {"vcube", "vcube_agg", "vcube_ps", "free_scale", "idr", "pc", "dcs",
                          "pc_mostefaoui", "pc_hash"}
    exp = catalog.get("cross_family")
    assert exp.variant_params == ("protocol",)
    assert {p["protocol"] for p in exp.points("smoke")} == set(names)


def test_every_protocol_sees_the_same_schedule(rows):
    assert {r["logged_broadcasts"] for r in rows.values()} == {POINT["broadcasts"]}
    assert len({r["senders_crc"] for r in rows.values()}) == 1
    point = cross_family.Point.of(POINT)
    a = cross_family.schedule(point, np.random.SeedSequence(7))
    b = cross_family.schedule(point, np.random.SeedSequence(7))
    assert np.array_equal(a.times, b.times) and np.array_equal(a.senders, b.senders)
    assert a.times.max() <= point.duration_ms == 120.0


def test_rows_follow_the_schema(rows):
    for name, row in rows.items():
        assert set(cross_family.METRICS) <= set(row), name
        assert row["control_bytes"] > 0 and row["stored_bytes"] > 0, name
        # one packet per copy at least, except where aggregation packs several messages
        assert row["packets_per_broadcast"] >= (1 if name == "vcube_agg" else N - 1), name


def test_exact_protocols_are_oracle_clean_and_complete(rows):
    for p in catalog.cross_protocols():
        row = rows[p.name]
        assert row["duplicates"] == 0 and row["undelivered"] == 0, p.name
        if p.exact:
            assert row["out_of_order"] == 0, p.name


def test_common_accounting_by_hand(rows):
    """VCube: 4 bytes for the source id and per vector entry, at most 4 (N + 1); stores VC and
    VMAX.  VCube without aggregation sends one packet per copy; aggregation sends fewer.  A
    probabilistic clock of M entries carries 4 + 4 M bytes and stores 4 M."""
    assert 8 <= rows["vcube"]["control_bytes"] <= 4 * (N + 1)
    assert rows["vcube"]["control_bytes"] == rows["vcube_agg"]["control_bytes"]
    assert rows["vcube"]["stored_bytes"] == 8 * N
    assert rows["vcube"]["packets_per_broadcast"] == N - 1
    assert rows["vcube_agg"]["packets_per_broadcast"] < N - 1
    assert rows["pc"]["control_bytes"] == 4 + 4 * 50 and rows["pc"]["stored_bytes"] == 4 * 50
    assert rows["pc_hash"]["control_bytes"] == rows["pc_mostefaoui"]["control_bytes"] + 8
    assert rows["idr"]["packets_per_broadcast"] == N
    assert N <= rows["free_scale"]["packets_per_broadcast"] <= N + 1
    assert rows["vcube_ps"]["packets_per_broadcast"] == 2 * (N - 1)  # a PUB and an ACK per edge


def test_latencies_where_recorded(rows):
    """Reception precedes delivery; both are at least one propagation delay on average."""
    for name in ("vcube", "vcube_agg", "vcube_ps", "pc", "dcs"):
        r = rows[name]
        assert POINT["tpp_mean"] * 0.8 < r["reception_latency"] <= r["delivery_latency"], name


@pytest.mark.parametrize("name, value, match", [
    ("n_nodes", 1, "n_nodes"), ("n_nodes", 24, "n_nodes"), ("load", 0.0, "load"),
    ("load", -5.0, "load"), ("protocol", "nope", "protocol"), ("broadcasts", 0, "broadcasts"),
])
def test_bad_parameters_name_the_parameter(name, value, match):
    with pytest.raises(ParameterError, match=match):
        catalog.get("cross_family").points("smoke", {name: [value]})


def test_adapters_import_alone_and_never_the_catalog():
    """A family's cross.py imports the shared module, never what lists families (no cycle)."""
    for family in catalog.families():
        module = catalog.family_module(family, "cross")
        used = codegraph.imported_files(Path(module.__file__))
        assert not any(p.name == "catalog.py" for p in used), family
    subprocess.run([sys.executable, "-c", "import causal_lab.families.vcube_ps.cross"], check=True, timeout=120)


def test_the_cached_results_and_the_notebook_follow_every_adapter_and_kernel():
    """The experiment finds its protocols at run time: their modules still count in the result
    cache's code fingerprint and in notebook 90's make dependencies."""
    from causal_lab import catalog, figures, paths

    files = catalog.get("cross_family").code_files()
    names = {f.relative_to(paths.repo_root()).as_posix() for f in files}
    for family in catalog.families():
        assert f"causal_lab/families/{family}/cross.py" in names
    assert {"causal_lab/families/vcube_ps/kernel.py", "causal_lab/families/error_detectors/kernel.py",
            "causal_lab/engine/state.py"} <= names
    deps = figures.dependencies(paths.repo_root() / "notebooks" / "90_cross_family.ipynb")
    assert files <= set(deps)
