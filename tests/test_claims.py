"""Published claims as data: relations, NOT_RUN, REPORT, and every claim file of the project."""

import pandas as pd
import pytest

from causal_lab import claims, paths
from causal_lab.claims import Measured, not_run

HEADER = ",".join(claims.CLAIM_COLUMNS)


def claim(id, relation, paper, tolerance="", kind="paper", source="ours: test"):
    return f"{id},{kind},000,Table 1,the claim {id},{paper},{relation},{tolerance},{source},seed §1"


@pytest.fixture
def expected(tmp_path, monkeypatch):
    """A private data/expected with one claims file, and verdicts written under tmp_path."""
    (tmp_path / "claims").mkdir()
    monkeypatch.setattr(paths, "expected_dir", lambda: tmp_path)
    monkeypatch.setattr(paths, "verdicts_dir", lambda scale: tmp_path)

    def write(*rows):
        (tmp_path / "claims" / "nb.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    return write


@pytest.mark.parametrize("relation, paper, tolerance, ours, verdict", [
    ("abs", "10", "2", 11.9, "PASS"), ("abs", "10", "2", 12.1, "DEVIATES"),
    ("rel", "100", "0.1", 109.0, "PASS"), ("rel", "100", "0.1", 89.0, "DEVIATES"),
    ("range", "one hop", "90..115", 90.0, "PASS"), ("range", "one hop", "90..115", 115.5, "DEVIATES"),
    ("at_most", "14", "", 14, "PASS"), ("at_most", "14", "", 15, "DEVIATES"),
    ("at_least", "increasing", "0.9", 0.95, "PASS"), ("below", "25", "", 25.0, "DEVIATES"),
    ("above", "50", "", 50.5, "PASS"), ("equal", "240", "", 240, "PASS"),
    ("equal", "240", "", 239, "DEVIATES"), ("holds", "always", "strict", True, "PASS"),
    ("holds", "always", "strict", False, "DEVIATES"), ("abs", "10", "2", float("nan"), "DEVIATES"),
])
def test_relations(expected, relation, paper, tolerance, ours, verdict):
    expected(claim("c1", relation, paper, tolerance))
    out = claims.judge("nb", {"c1": Measured(ours)}, "default")
    assert out.verdict.tolist() == [verdict]


def test_missing_measurement_or_scale_is_not_run_with_the_reason(expected):
    expected(claim("a", "abs", "1", "1"), claim("b", "abs", "1", "1"))
    out = claims.judge("nb", {"b": not_run("N=1024 not in the smoke scale")}, "smoke").set_index("id")
    assert out.verdict.tolist() == ["NOT_RUN", "NOT_RUN"]
    assert out.ours["a"] == "not measured at the smoke scale"
    assert out.ours["b"] == "N=1024 not in the smoke scale"


def test_report_rows_are_never_pass(expected):
    expected(claim("r", "rel", "3.56", "0.2", kind="report"), claim("s", "holds", "0", "exact", kind="sanity"))
    out = claims.judge("nb", {"r": Measured(3.5), "s": Measured(True)}, "default").set_index("id")
    assert out.verdict["r"] == "REPORT" and out.note["r"].startswith("inside the band")
    assert out.verdict["s"] == "PASS" and out.kind["s"] == "sanity"


def test_a_measurement_without_a_claim_row_is_an_error(expected):
    expected(claim("a", "abs", "1", "1"))
    with pytest.raises(KeyError, match="no row"):
        claims.judge("nb", {"a": Measured(1.0), "typo": Measured(2.0)}, "default")


@pytest.mark.parametrize("rows, message", [
    ([claim("a", "abs", "1", "1"), claim("a", "abs", "1", "1")], "duplicate ids"),
    ([claim("a", "about", "1", "1")], "unknown relations"),
    ([claim("a", "abs", "1", "1", kind="claim")], "unknown kinds"),
    ([claim("a", "abs", "1", "1", source="")], "names no source"),
])
def test_malformed_claim_files_are_rejected(expected, rows, message):
    expected(*rows)
    with pytest.raises(ValueError, match=message):
        claims.load("nb")


def test_every_claim_file_of_the_project_is_well_formed():
    files = sorted((paths.expected_dir() / "claims").glob("*.csv"))
    assert files
    notebooks = {p.stem for p in (paths.repo_root() / "notebooks").glob("*.ipynb")}
    for f in files:
        rows = claims.load(f.stem)
        assert f.stem in notebooks, f"{f.name} judges no notebook"
        assert rows.id.str.match(r"^00[0-4]-").all(), f
        assert rows.source.str.match(r"^00[0-4]_[0-9a-f]{16}\.txt ").all(), f
        judged = rows[rows.relation != "holds"]
        for _, row in judged.iterrows():  # a numeric relation needs the numbers it compares
            fn, text = claims.RELATIONS[row.relation]
            text(row)


def test_totals_count_paper_report_and_sanity_apart():
    verdicts = pd.DataFrame({"notebook": ["a"] * 5,
                             "kind": ["paper", "paper", "report", "sanity", "paper"],
                             "verdict": ["PASS", "DEVIATES", "REPORT", "PASS", "NOT_RUN"]})
    row = claims.totals(verdicts).loc["a"]
    assert (row["paper PASS"], row["paper DEVIATES"], row["paper NOT_RUN"], row.report, row.sanity) == (1, 1, 1, 1, 1)
