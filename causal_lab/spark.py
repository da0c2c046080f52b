"""The one SparkSession of a process, configured for quiet, reproducible sweeps.

Local mode (``local[*]``) is the default so a laptop needs nothing but Java; setting the
environment variable ``SPARK_MASTER`` (e.g. ``spark://host:7077``) sends the same sweep to a
standalone cluster.  Python workers run ``sys.executable`` so they see the same virtualenv, and
thus the same numpy and the same ``causal_lab``, as the driver: that is what makes results
bit-identical across local and cluster runs.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path

from pyspark.sql import SparkSession

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


def _log4j2_file() -> Path:
    """Write the log configuration to a temp file (atomically: other processes may read it)."""
    path = Path(tempfile.gettempdir()) / "causal_lab-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".causal_lab-log4j2.")
        with os.fdopen(fd, "w") as f:
            f.write(_LOG4J2)
        os.replace(tmp, path)
    return path


def spark_session(app_name: str = "causal_lab") -> SparkSession:
    """Return the process's SparkSession, creating it on first use.

    The environment is fixed before the JVM starts because the JVM, and in local mode every
    Python worker it forks, inherits it then and never again: ``SPARK_LOCAL_IP`` defaults to
    127.0.0.1 (no reverse-DNS warnings, nothing listening on public interfaces; set it to a
    reachable address for a multi-host cluster), and ``PYTHONPATH`` is also forwarded to cluster
    executors so modules named in ``CAUSAL_LAB_EXTRA_EXPERIMENTS`` import there too.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master(os.environ.get("SPARK_MASTER", "local[*]"))
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.extraJavaOptions",
                f"-Dlog4j2.configurationFile={_log4j2_file().as_uri()} {_QUICK_JVM}")
    )
    if os.environ.get("PYTHONPATH"):
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    with warnings.catch_warnings():  # pyspark's notice that it was not tested with pandas 3
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
