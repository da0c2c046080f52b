"""Bad input to the seed-002 experiments fails before any work: exit code 2, a message naming the
parameter and the allowed values, nothing written (issue: an error probability outside (0, 1), a
clock size below the entries per process, negative load rates, zero processes)."""

import pytest

from causal_lab import cli


@pytest.mark.parametrize("args, message", [
    # an error probability outside (0, 1)
    (["dcs_vs_pc", "--set", "p_star=1.5"], "parameter 'p_star': 1.5 not allowed; allowed: 0 < P* < 1"),
    (["dcs_vs_pc", "--set", "p_star=0"], "parameter 'p_star': 0.0 not allowed; allowed: 0 < P* < 1"),
    (["dcs_balancing", "--set", "skewed_share=1"], "parameter 'skewed_share': 1.0 not allowed; allowed: 0 < share < 1"),
    # a clock size below the entries per process
    (["dcs_vs_pc", "--set", "reference_size=1"], "parameter 'reference_size': 1 entries is below the k = 2 entries per process; allowed: >= k"),
    (["dcs_vs_pc", "--set", "m_c=3", "--set", "k=4"], "parameter 'm_c': 3 entries is below the k = 4 entries per process; allowed: >= k"),
    (["pc_clock_size", "--set", "direct_size=1"], "parameter 'direct_size': 1 entries is below the k = 2 entries per process"),
    (["dcs_balancing", "--set", "m_c=0"], "parameter 'm_c': 0 not allowed; allowed: >= 1"),
    # negative load rates
    (["pc_clock_size", "--set", "load=-5"], "parameter 'load': -5.0 not allowed; allowed: > 0"),
    (["dcs_balancing", "--set", "load=-100"], "parameter 'load': -100.0 not allowed; allowed: > 0"),
    # zero processes
    (["dcs_vs_pc", "--set", "n_nodes=0"], "parameter 'n_nodes': 0 not allowed; allowed: 1..65535"),
    (["pc_clock_size", "--set", "n_nodes=0"], "parameter 'n_nodes': 0 not allowed; allowed: 1..65535"),
    (["dcs_balancing", "--set", "n_nodes=0"], "parameter 'n_nodes': 0 not allowed; allowed: 1..65535"),
    # and what the model cannot express
    (["dcs_vs_pc", "--set", "t_t=1"], "parameters 't_pc' and 't_t': direct broadcast without sending queue"),
    (["dcs_vs_pc", "--set", "duration=900"], "parameter 'duration': 900.0 s is longer than the pattern; allowed: (0, 850]"),
    (["dcs_vs_pc", "--set", "pattern=constant"], "allowed: bell, bell_authors, random, random_authors"),
    (["load_pattern", "--set", "send_model=poisson"], "allowed: poisson_rr, poisson_indep, deterministic_rr"),
])
def test_bad_parameters_exit_2_before_any_work(tmp_path, capsys, args, message):
    out = tmp_path / "results"
    assert cli.main(["run", *args, "--out", str(out)]) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not out.exists()
