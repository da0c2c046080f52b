"""A sweep on a real Spark standalone cluster (master + one worker on 127.0.0.1) gives the
same rows as local mode: seeds and environment travel with the tasks, not with the machine."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyspark
import pytest

from causal_lab.sweep import run_sweep
from toy_experiment import TOY

SPARK_HOME = Path(pyspark.__file__).parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    """Start a master and a 2-core worker; yield (master URL, worker dir); kill both groups."""
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_WORKER_DIR": str(tmp_path / "work"), "SPARK_LOG_DIR": str(tmp_path / "logs")}
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    daemons = {
        "master": ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                   "--port", str(port), "--webui-port", str(free_port())],
        "worker": ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                   "--webui-port", str(free_port()), "--cores", "2", "--memory", "2g"],
    }
    procs = []
    try:
        for name, args in daemons.items():
            with open(tmp_path / f"{name}.log", "w") as log:
                procs.append(subprocess.Popen(
                    [str(SPARK_HOME / "bin" / "spark-class"), *args], env=env,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        master_log = tmp_path / "master.log"
        deadline = time.monotonic() + 45
        while "Registering worker" not in master_log.read_text():
            assert time.monotonic() < deadline, master_log.read_text()
            assert all(p.poll() is None for p in procs), "master or worker exited"
            time.sleep(0.2)
        yield url, tmp_path / "work"
    finally:
        for p in procs:  # each group also holds the executor JVM and its Python workers
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.mark.spark
def test_cluster_sweep_equals_local_sweep(cluster, tmp_path):
    url, worker_dir = cluster
    script = ("import sys, toy_experiment; from causal_lab.sweep import run_sweep; "
              "run_sweep(toy_experiment.TOY, 'smoke', out=sys.argv[1], progress=False)")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "cluster")],
                   env={**os.environ, "SPARK_MASTER": url}, check=True, timeout=90)
    assert list(worker_dir.glob("app-*")), "the sweep did not run on the cluster"

    on_cluster = run_sweep(TOY, "smoke", out=tmp_path / "cluster", progress=False)  # reads only
    local = run_sweep(TOY, "smoke", out=tmp_path / "local", progress=False)
    pd.testing.assert_frame_equal(on_cluster, local, check_exact=True)
