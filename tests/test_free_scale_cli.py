"""The free-scale experiments on the command line: impossible parameters (issue 11: an odd split,
zero peers, a delay range with min > max, a rate of 0) exit 2 before any work, naming the
parameter and what it allows, and write nothing."""

import pytest

from causal_lab import cli


@pytest.mark.parametrize("args, message", [
    (["p2p_overhead_0_50", "--set", "n_peers=9"],
     "parameter 'n_peers': 9 not allowed; allowed: even, >= 2"),
    (["p2p_scalability_50_250", "--set", "n_peers=0"],
     "parameter 'n_peers': 0 not allowed; allowed: even, >= 2"),
    (["p2p_overhead_50_550", "--set", "delay_min=600"],
     "delay_min (600 ms) must be <= delay_max (550 ms)"),
    (["p2p_overhead_0_50", "--set", "delay_min=20", "--set", "delay_max=10"],
     "delay_min (20 ms) must be <= delay_max (10 ms)"),
    (["p2p_scalability_0_50", "--set", "rate=0"],
     "parameter 'rate': 0.0 not allowed; allowed: > 0"),
    (["p2p_scalability_0_50", "--set", "rate=-1000"],
     "parameter 'rate': -1000.0 not allowed; allowed: > 0"),
    (["p2p_overhead_0_50", "--set", "protocol=vector_clock"],
     "parameter 'protocol': 'vector_clock' not allowed; allowed: free_scale, idr"),
    (["p2p_overhead_0_50", "--set", "gap_min=100"],
     "need gap_min <= gap_mean <= gap_max"),
])
def test_impossible_parameters_exit_2_and_write_nothing(tmp_path, capsys, args, message):
    out = tmp_path / "results"
    assert cli.main(["run", *args, "--scale", "smoke", "--out", str(out)]) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_list_names_the_free_scale_parameters(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for text in ("p2p_overhead_0_50", "p2p_scalability_50_550", "--set n_peers=<int>", "even, >= 2",
                 "--set delay_min=<float>", "--set link_delay=<str>"):
        assert text in out, text
