"""The one SparkSession of a process, configured for quiet, reproducible sweeps.

Local mode (``local[*]``) is the default so a laptop needs nothing but Java; setting the
environment variable ``SPARK_MASTER`` (e.g. ``spark://host:7077``) sends the same sweep to a
standalone cluster.  Python workers run ``sys.executable`` so they see the same virtualenv, and
thus the same numpy and the same ``causal_lab``, as the driver: that is what makes results
bit-identical across local and cluster runs.  Under ``make figures`` the notebooks of a batch
attach to one shared driver instead of starting one each (``causal_lab.spark_driver``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pyarrow as pa
import pyspark
from pyspark.sql import SparkSession

from causal_lab import paths, spark_driver

# Spark's default log4j2 profile prints INFO/WARN lines (native-hadoop, hostname, ...) before
# ``setLogLevel`` can run; this configuration, given to the driver JVM at start-up, keeps stderr
# for errors and the progress bar.  The gateway logger needs its own entry: without one, Spark
# treats a PySpark driver as a shell and announces it is "Setting default log level to WARN".
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


# The driver JVM schedules tasks and aggregates a few thousand rows: the simulations run in the
# Python workers.  Its optimising JIT compiler (C2) and parallel collector only cost start-up CPU
# then: measured on 2 cores, starting Spark and running one job took 11-12 CPU-s with the
# defaults and 7 with the quick JIT (C1) alone and the serial collector, paid by every notebook.
_QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Class data sharing (AppCDS): the rest of the driver's start-up is loading and verifying the
# thousands of classes of Spark's jars.  An archive of the classes a sweep loads, written once by
# ``python -m causal_lab.spark`` (``make`` does it), is mapped instead: measured on 2 cores
# shared with a sweep, starting Spark and running its first job took 13.6-14.1 s without and
# 8.2-9.6 s with it, in every notebook, test and Spark session.  A missing archive just means the
# slower start; one the JVM rejects (another JDK, another class path) is ignored, silently:
# its warnings would land in notebook outputs.
_QUIET_CDS = "-Xlog:cds=off -Xlog:cds+dynamic=off"


_attached = None  # this process's session on a shared driver, once attached


def class_archive() -> Path:
    """Where this checkout keeps the driver's class archive (one per pyspark version)."""
    return paths.repo_root() / "build" / f"spark-classes-{pyspark.__version__}.jsa"


def _log4j2_file() -> Path:
    """Write the log configuration to a temp file (atomically: other processes may read it)."""
    path = Path(tempfile.gettempdir()) / "causal_lab-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".causal_lab-log4j2.")
        with os.fdopen(fd, "w") as f:
            f.write(_LOG4J2)
        os.replace(tmp, path)
    return path


@contextlib.contextmanager
def quiet_pandas_notice():
    """Silence pyspark's notice that it was not tested with pandas 3, which creating a
    SparkContext prints (it would land in notebook outputs)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        yield


def spark_session(app_name: str = "causal_lab", *, java_options: str | None = None) -> SparkSession:
    """Return the process's SparkSession, creating it on first use.

    The environment is fixed before the JVM starts because the JVM, and in local mode every
    Python worker it forks, inherits it then and never again: ``SPARK_LOCAL_IP`` defaults to
    127.0.0.1 (no reverse-DNS warnings, nothing listening on public interfaces; set it to a
    reachable address for a multi-host cluster), and ``PYTHONPATH`` is also forwarded to cluster
    executors so modules named in ``CAUSAL_LAB_EXTRA_EXPERIMENTS`` import there too.
    ``java_options`` replaces the class-archive options of the driver JVM (``make_class_archive``).
    With ``CAUSAL_LAB_SHARED_SPARK`` set (``make figures`` does), the session is one on the
    batch's shared driver instead (``causal_lab.spark_driver``).
    """
    global _attached
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    folder = os.environ.get(spark_driver.SHARED_ENV)
    if folder and java_options is None:
        if _attached is None:
            _attached = spark_driver.attach(folder)
        return _attached
    if java_options is None:
        archive = class_archive()
        java_options = f"-XX:SharedArchiveFile={archive} {_QUIET_CDS}" if archive.is_file() else ""
    builder = (
        SparkSession.builder.master(os.environ.get("SPARK_MASTER", "local[*]"))
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.extraJavaOptions",
                f"-Dlog4j2.configurationFile={_log4j2_file().as_uri()} {_QUICK_JVM} {java_options}")
    )
    if os.environ.get("PYTHONPATH"):
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    with quiet_pandas_notice():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _typical_job(java_options: str) -> None:
    """What a sweep and its summary ask of Spark: Python tasks, a DataFrame from Arrow, an
    aggregating SQL query read back as Arrow; in a driver JVM with ``java_options``."""
    spark = spark_session(java_options=java_options)
    spark.sparkContext.parallelize(range(4), numSlices=4).foreach(lambda _: None)
    rows = pa.table({"n": [1, 1, 2], "x": [1.0, 2.0, 3.0], "ok": [True, False, True]})
    spark.createDataFrame(rows).createOrReplaceTempView("causal_lab_results")
    spark.sql("SELECT n, count(*) AS reps, avg(CAST(x AS DOUBLE)) AS m, stddev_samp(x) AS s "
              "FROM causal_lab_results GROUP BY n ORDER BY n").toArrow()
    spark.stop()


def _in_child(java_options: str) -> None:
    """``_typical_job`` in a child process, waiting for its JVM too: the JVM inherited the
    child's stdout, so reading that pipe to its end waits until the JVM has exited."""
    code = f"from causal_lab import spark; spark._typical_job({java_options!r})"
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE)


def make_class_archive() -> Path:
    """Write ``class_archive()``: a JVM running the typical job writes the classes it loaded when
    it exits, to a temporary name; a second one must start with that archive mapped
    (``-Xshare:on`` fails otherwise: a truncated archive would crash every later start) before
    it is moved into place."""
    target = class_archive()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        _in_child(f"-XX:ArchiveClassesAtExit={tmp} {_QUIET_CDS}")
        if not tmp.is_file():
            raise RuntimeError(f"the JVM wrote no class archive to {tmp}")
        _in_child(f"-XX:SharedArchiveFile={tmp} -Xshare:on")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


if __name__ == "__main__":
    print(f"Spark driver class archive: {make_class_archive()}")
