"""A sweep on a real Spark standalone cluster (a master and two one-core workers on 127.0.0.1,
``causal_lab.cluster``) gives the same rows as local mode: seeds and environment travel with the
tasks, not with the machine; and both workers take part."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from causal_lab import cli, cluster
from causal_lab.sweep import run_sweep
from toy_experiment import TOY


@pytest.mark.spark
def test_cluster_sweep_equals_local_sweep(tmp_path):
    script = ("import sys, toy_experiment; from causal_lab.sweep import run_sweep; "
              "run_sweep(toy_experiment.TOY, 'smoke', out=sys.argv[1], progress=False)")
    with cluster.standalone(workers=2, cores=1, root=tmp_path / "cluster") as running:
        subprocess.run([sys.executable, "-c", script, str(tmp_path / "on_cluster")],
                       env={**os.environ, "SPARK_MASTER": running.url}, check=True, timeout=120)
        apps = running.applications()
    assert all(len(a) == 1 for a in apps.values()), f"not every worker ran an executor: {apps}"

    on_cluster = run_sweep(TOY, "smoke", out=tmp_path / "on_cluster", progress=False)  # reads only
    local = run_sweep(TOY, "smoke", out=tmp_path / "local", progress=False)
    pd.testing.assert_frame_equal(on_cluster, local, check_exact=True)


def test_cluster_command_rejects_bad_arguments_before_starting_anything(capsys):
    assert cli.main(["cluster", "--workers", "0", "--", "true"]) == 2
    assert cli.main(["cluster"]) == 2
    assert "--workers" in capsys.readouterr().err
