"""The batch's shared Spark driver (``causal_lab.spark_driver``): two notebook-like processes
running sweeps and Spark SQL summaries at the same time attach to one driver, get the rows a
process with its own driver gets, and the driver leaves once nobody holds the lease."""

import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from causal_lab import processes, spark_driver
from causal_lab.sweep import run_sweep
from toy_experiment import TOY

CLIENT = """
import json, sys, toy_experiment
from pathlib import Path
from causal_lab import sweep
out = sys.argv[1]
rows = sweep.run_sweep(toy_experiment.TOY, 'default', out=out, progress=False)
summary = sweep.summarize(toy_experiment.TOY, out=out)
driver = json.loads(next(Path(sys.argv[2]).glob('*/driver.json')).read_text())['pid']
print(json.dumps({'driver': driver, 'rows': len(rows), 'points': len(summary)}))
"""


@pytest.mark.spark
def test_two_processes_share_one_driver_that_leaves_when_idle(tmp_path):
    folder = tmp_path / "driver"
    env = {**os.environ, spark_driver.SHARED_ENV: str(folder), spark_driver.IDLE_ENV: "2"}
    clients = [subprocess.Popen([sys.executable, "-c", CLIENT, str(tmp_path / f"out{i}"), str(folder)],
                                env=env, stdout=subprocess.PIPE, text=True) for i in range(2)]
    reports = []
    for client in clients:
        stdout, _ = client.communicate(timeout=180)
        assert client.returncode == 0
        reports.append(json.loads(stdout.strip().splitlines()[-1]))
    assert reports[0]["driver"] == reports[1]["driver"], reports
    assert all(r["rows"] == 24 and r["points"] == 6 for r in reports), reports

    own = run_sweep(TOY, "default", out=tmp_path / "own", progress=False)
    for i in range(2):  # reads the files the shared driver's workers wrote
        shared = run_sweep(TOY, "default", out=tmp_path / f"out{i}", progress=False)
        pd.testing.assert_frame_equal(shared, own, check_exact=True)

    deadline = time.monotonic() + 60
    while processes.alive(reports[0]["driver"]) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not processes.alive(reports[0]["driver"]), "the idle driver did not leave"
    assert not list(folder.glob("*/driver.json"))
