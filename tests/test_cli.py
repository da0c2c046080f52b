"""The causal-lab command line: bad parameters fail early with exit code 2 and write nothing."""

import subprocess
import sys

import pandas as pd
import pytest

from causal_lab import cli


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "causal_lab.cli", *args],
                          capture_output=True, text=True, timeout=300)


def test_list_shows_experiments_parameters_and_defaults(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "vcube_broadcast" in out
    assert "--set n_nodes=<int>  default 16" in out
    assert "powers of two" in out


@pytest.mark.parametrize("args, message", [
    (["nope"], "unknown experiment 'nope'; available:"),
    (["vcube_broadcast", "--set", "n_nodes=12"], "parameter 'n_nodes': 12 not allowed; allowed: powers of two"),
    (["vcube_broadcast", "--set", "n_nodes=abc"], "parameter 'n_nodes': 'abc' is not a valid int"),
    (["vcube_broadcast", "--set", "window=-5"], "parameter 'window': -5.0 not allowed; allowed: > 0"),
    (["vcube_broadcast", "--set", "tpp=lognormal"], "allowed: constant, normal"),
    (["vcube_broadcast", "--set", "bogus=1"], "has no parameter 'bogus'"),
    (["vcube_broadcast", "--set", "n_nodes"], "--set expects key=value"),
    (["vcube_broadcast", "--reps", "0"], "reps must be a positive int"),
    (["ps_churn", "--set", "t_med=1", "--set", "churn_pct=4"], "give a t_med label or a churn rate, not both"),
    (["ps_churn", "--set", "n_subscribers=4096"], "n_subscribers must be < n_nodes"),
])
def test_bad_parameters_exit_2_before_any_work(tmp_path, capsys, args, message):
    out = tmp_path / "results"
    assert cli.main(["run", *args, "--out", str(out)]) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_bad_scale_is_rejected_by_the_parser():
    result = run_cli("run", "vcube_broadcast", "--scale", "huge")
    assert result.returncode == 2 and "invalid choice: 'huge'" in result.stderr


@pytest.mark.spark
def test_run_writes_parquet_and_prints_a_summary(tmp_path):
    out = tmp_path / "results"
    result = run_cli("run", "vcube_broadcast", "--scale", "smoke", "--set", "n_nodes=8,16",
                     "--reps", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    rows = pd.read_parquet(out)
    # the smoke grid sweeps aggregation off and on: 2 sizes x 2 variants x 2 replications
    assert sorted(zip(rows.n_nodes, rows.aggregation)) == sorted([(8, False), (8, True), (16, False), (16, True)] * 2)
    plain = rows[~rows.aggregation]
    assert (plain.packets == plain.n_nodes * (plain.n_nodes - 1)).all()
    assert (rows.messages_carried == rows.n_nodes * (rows.n_nodes - 1)).all()
    assert "packets" in result.stdout and "56" in result.stdout


def test_verdicts_prints_csv_and_totals(capsys, tmp_path):
    (tmp_path / "x.csv").write_text(
        "id,kind,seed,artifact,claim,paper,ours,tolerance,tolerance_source,verdict,note\n"
        "000-T1-a,paper,000,Table 1,c,1,1,exact,spec §4,PASS,\n"
        "000-T1-b,sanity,000,Table 1,d,0,0,exact,asserted,PASS,\n")
    assert cli.main(["verdicts", "--dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "notebook,id,kind,seed,artifact,claim,paper,ours,tolerance,tolerance_source,verdict,note"
    assert lines[1] == "x,000-T1-a,paper,000,Table 1,c,1,1,exact,spec §4,PASS,"
    assert cli.main(["verdicts", "--dir", str(tmp_path), "--totals"]) == 0
    totals = capsys.readouterr().out.splitlines()
    assert "paper PASS" in totals[0] and totals[-1].split() == ["x", "1", "0", "0", "0", "1", "0"]
