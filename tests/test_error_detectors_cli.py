"""The error-detector experiments on the command line: bad inputs exit 2 before any work, name
the parameter and the allowed values, and write nothing."""

import pytest

from causal_lab import cli


@pytest.mark.parametrize("experiment", ["ed_table1", "ed_figure1", "ed_table2"])
@pytest.mark.parametrize("setting, message", [
    ("clock_size=0", "parameter 'clock_size': 0 not allowed; allowed: integers >= 1"),
    ("k=0", "parameter 'k': 0 not allowed; allowed: integers >= 1 (and <= clock_size)"),
    ("k=51", "k = 51 exceeds clock_size"),
    ("hash_bits=65", "parameter 'hash_bits': 65 not allowed; allowed: integers 1..64"),
    ("hash_bits=0", "parameter 'hash_bits': 0 not allowed; allowed: integers 1..64"),
    ("l_authors=0", "parameter 'l_authors': 0 not allowed; allowed: integers >= 1"),
    ("l_residual=0", "parameter 'l_residual': 0 not allowed; allowed: integers >= 1"),
    ("recovery=maybe", "parameter 'recovery': 'maybe' not allowed; allowed: serial, parallel"),
    ("tau=0", "parameter 'tau': 0.0 not allowed; allowed: > 0"),
])
def test_bad_inputs_exit_2_and_write_nothing(tmp_path, capsys, experiment, setting, message):
    out = tmp_path / "results"
    assert cli.main(["run", experiment, "--set", setting, "--out", str(out)]) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["ed_figure1", "--set", "hash_mode=exact"], "allowed: authors, residual"),
    (["ed_figure1", "--set", "load=-10"], "parameter 'load': -10.0 not allowed; allowed: > 0"),
    (["ed_table1", "--set", "broadcasts=0"], "parameter 'broadcasts': 0 not allowed; allowed: integers >= 1"),
    (["ed_table2", "--set", "n_nodes=1"], "parameter 'n_nodes': 1 not allowed; allowed: integers >= 2"),
    (["ed_figure1", "--set", "k_mode=formula", "--set", "clock_size=3", "--set", "load=5"],
     "k = 4 exceeds clock_size = 3; allowed: 1 <= k <= clock_size"),
])
def test_other_bad_inputs(tmp_path, capsys, args, message):
    out = tmp_path / "results"
    assert cli.main(["run", *args, "--out", str(out)]) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not out.exists()
