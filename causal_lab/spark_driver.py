"""One Spark driver shared by the notebooks of a batch (``make figures`` sets ``SHARED_ENV``).

Why: every notebook is its own Python process, and each used to start its own driver JVM, its
own Python worker daemon and workers that import ``causal_lab`` and load the numba kernels
again.  Measured on this 2-core machine (notebook 62's sweep, busy CPU of the whole machine):
starting Spark took 3.8 CPU-s, the first job (the daemon and two workers) 2.7, the workers'
imports and kernel loads about 3 more; a second process attaching to a running driver, running a
job and an SQL query took 1.5 CPU-s in all.  Results do not change: replications are the same
pure functions of their seeds, whichever worker runs them.

How: the first process that needs Spark starts ``python -m causal_lab.spark_driver DIR``
(detached, its own session: ``serve``), which creates the usual session
(``causal_lab.spark.spark_session``) and writes its py4j gateway's port and secret to
``DIR/driver.json`` (``DIR``: a folder per ``SPARK_MASTER`` inside the one named by
``SHARED_ENV``).  Every process then attaches to that JVM (``attach``): a Python
``SparkContext`` around the JVM's one, and a ``SparkSession`` of its own (``newSession``: temp
views and SQL settings stay per notebook, so two notebooks aggregating at once under
``make -j2`` cannot see each other's tables).  Notebooks never stop the shared context.

Lifetime without a supervisor: each attached process holds a shared ``flock`` on
``DIR/lease`` until it exits (the kernel releases it, even on ``kill -9``).  The driver exits
once it has run no job and nobody has held the lease for ``IDLE_S`` seconds: the gap between
two notebooks of a batch is a few seconds, so a batch keeps one driver, and an interrupted
batch leaves nothing running for long.  ``DIR/start.lock`` orders starting, attaching and
exiting, so a process never attaches to a driver that is leaving.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from causal_lab.processes import alive

SHARED_ENV = "CAUSAL_LAB_SHARED_SPARK"  # a directory; unset: every process starts its own driver
IDLE_ENV = "CAUSAL_LAB_SHARED_SPARK_IDLE"
IDLE_S = 60.0
START_TIMEOUT_S = 180.0
POLL_S = 1.0

_held = []  # this process's lease (an open file holding the shared lock) once attached


def _lock(path: Path, mode: int):
    f = open(path, "a+")
    fcntl.flock(f, mode)
    return f


def _read_driver(folder: Path) -> dict | None:
    try:
        info = json.loads((folder / "driver.json").read_text())
    except (OSError, ValueError):
        return None
    return info if alive(int(info["pid"])) else None


def _start(folder: Path) -> dict:
    """Start the driver process and wait for its ``driver.json``."""
    (folder / "driver.json").unlink(missing_ok=True)
    with open(folder / "driver.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "causal_lab.spark_driver", str(folder)],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        info = _read_driver(folder)
        if info is not None:
            return info
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError(f"the shared Spark driver did not start; see {folder / 'driver.log'}")


def attach(folder: str | os.PathLike):
    """A SparkSession on the batch's driver in ``folder``, started if none is running."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    from causal_lab.spark import quiet_pandas_notice

    # one driver per master: a batch on a cluster never attaches to a local batch's driver
    master = os.environ.get("SPARK_MASTER", "local[*]")
    folder = Path(folder) / hashlib.sha256(master.encode()).hexdigest()[:12]
    folder.mkdir(parents=True, exist_ok=True)
    lease = _lock(folder / "lease", fcntl.LOCK_SH)
    with _lock(folder / "start.lock", fcntl.LOCK_EX):
        info = _read_driver(folder) or _start(folder)
    os.environ["PYSPARK_GATEWAY_PORT"] = str(info["port"])
    os.environ["PYSPARK_GATEWAY_SECRET"] = info["secret"]
    try:
        gateway = launch_gateway()  # connects to the running JVM (the two variables above)
    finally:
        del os.environ["PYSPARK_GATEWAY_PORT"], os.environ["PYSPARK_GATEWAY_SECRET"]
    jvm = gateway.jvm
    jsc = jvm.org.apache.spark.api.java.JavaSparkContext.fromSparkContext(
        jvm.org.apache.spark.SparkContext.getOrCreate())
    with quiet_pandas_notice():
        sc = SparkContext(gateway=gateway, jsc=jsc)
    _held.append(lease)
    return SparkSession(sc, jvm.org.apache.spark.sql.SparkSession.builder().getOrCreate().newSession())


def _idle(folder: Path, sc) -> bool:
    """No job running and no process holding the lease (checked under ``start.lock``)."""
    if sc.statusTracker().getActiveJobsIds():
        return False
    with open(folder / "lease", "a+") as lease:
        try:
            fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def serve(folder: Path) -> None:
    """The driver process: a session, its gateway's address in ``driver.json``, then wait until
    idle for ``IDLE_S`` (``IDLE_ENV`` overrides it) and leave."""
    from causal_lab.spark import spark_session

    os.environ.pop(SHARED_ENV, None)  # this process starts the driver, it does not attach
    spark = spark_session()
    gateway = spark.sparkContext._gateway
    tmp = folder / f".driver.{os.getpid()}.json"
    tmp.write_text(json.dumps({"pid": os.getpid(), "port": gateway.gateway_parameters.port,
                               "secret": gateway.gateway_parameters.auth_token}))
    os.replace(tmp, folder / "driver.json")
    idle_s = float(os.environ.get(IDLE_ENV, IDLE_S))
    idle_since = None
    while True:
        time.sleep(POLL_S)
        with _lock(folder / "start.lock", fcntl.LOCK_EX):
            if not _idle(folder, spark.sparkContext):
                idle_since = None
                continue
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= idle_s:
                (folder / "driver.json").unlink(missing_ok=True)
                break
    spark.stop()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
