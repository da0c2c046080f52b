"""A Spark standalone cluster on this machine: one master and several workers on 127.0.0.1.

``SPARK_MASTER`` sends every sweep to a standalone cluster (``causal_lab.spark``); this module
starts one locally so that path can be shown and tested without a second machine::

    causal-lab cluster --workers 2 -- make figures SCALE=smoke

runs the command with ``SPARK_MASTER`` pointing at a fresh master with two workers, then says
which workers ran executors for which applications (one application per notebook) and stops the
daemons, whatever the command did.  On a real cluster, set ``SPARK_MASTER`` yourself instead.

The daemons are the ``spark-class`` launcher of the installed pyspark (no separate Spark
download); each runs in its own process group so that stopping it also stops the executor JVMs
and Python workers it forked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
START_TIMEOUT = 60.0  # seconds for every worker to register with the master


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclasses.dataclass(frozen=True)
class Cluster:
    """A running local cluster: its master URL and each worker's work directory."""

    url: str
    worker_dirs: tuple[Path, ...]

    def applications(self) -> dict[int, list[str]]:
        """Worker index -> the applications it ran executors for (their work sub-folders)."""
        return {i: sorted(p.name for p in d.glob("app-*")) for i, d in enumerate(self.worker_dirs)}


@contextlib.contextmanager
def standalone(workers: int = 2, cores: int = 1, memory: str = "2g",
               root: Path | None = None) -> Iterator[Cluster]:
    """Start a master and ``workers`` workers of ``cores`` cores each; stop them all on exit."""
    if workers < 1 or cores < 1:
        raise ValueError(f"need workers >= 1 and cores >= 1, got {workers}, {cores}")
    with contextlib.ExitStack() as stack:
        if root is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="causal_lab-cluster-")))
        root.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": str(root / "logs")}
        url = f"spark://127.0.0.1:{free_port()}"
        port = url.rsplit(":", 1)[1]
        daemons = [("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", port, "--webui-port", str(free_port())], env)]
        worker_dirs = tuple(root / f"worker{i}" for i in range(workers))
        for i, work in enumerate(worker_dirs):
            daemons.append((f"worker{i}", [
                "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                "--work-dir", str(work)], env))
        procs: list[subprocess.Popen] = []
        stack.callback(_stop, procs)
        for name, args, daemon_env in daemons:
            with open(root / f"{name}.log", "w") as log:
                procs.append(subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args],
                                              env=daemon_env, stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True))
        master_log = root / "master.log"
        deadline = time.monotonic() + START_TIMEOUT
        while master_log.read_text().count("Registering worker") < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"the local Spark cluster did not start; master log:\n{master_log.read_text()}")
            time.sleep(0.2)
        yield Cluster(url, worker_dirs)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def run_on(command: list[str], workers: int = 2, cores: int = 1) -> int:
    """``causal-lab cluster``: run ``command`` with ``SPARK_MASTER`` set to a fresh local cluster;
    print which worker ran which applications; return the command's exit code."""
    if not command:
        raise ValueError("no command to run (e.g. causal-lab cluster -- make figures SCALE=smoke)")
    with standalone(workers, cores) as cluster:
        print(f"causal-lab cluster: master {cluster.url}, {workers} workers x {cores} cores", flush=True)
        code = subprocess.run(command, env={**os.environ, "SPARK_MASTER": cluster.url}).returncode
        for worker, apps in cluster.applications().items():
            print(f"causal-lab cluster: worker {worker} ran executors for {len(apps)} applications")
    return code
