"""Fan (parameter point x replication) tasks out over Spark; one Parquet file per task.

Why one file per task, written by the Spark worker that ran it: results never travel through
the driver, a finished replication is on disk the moment it ends, and resuming is a directory
listing.  Each file appears atomically (temp name in the same directory, fsync, ``os.replace``),
so after a crash, even ``kill -9``, a ``part-<key>.parquet`` file is either complete or absent;
rerunning the sweep skips the present ones and deletes stray ``.part-*.tmp`` files older than
an hour (younger ones may belong to a concurrent sweep, e.g. two notebooks sharing results)
and the claims of processes that no longer run.
Use a filesystem that the driver and every executor see at the same path.

Why sweeps claim their replications: two notebooks of a ``make -j2`` batch may run the same
experiment at once, and some of their replications are the same tasks (notebooks 10-20 share
many).  Before running a replication a sweep creates ``.claim-<key>`` in the result folder
(``O_EXCL``, holding its host and pid); a sweep that finds a replication claimed by a live
process waits for its file instead of computing it again, and takes over the claims of a dead
one (a killed sweep).  Notebooks that share no replication run side by side.

Why seeds come from the task and not from its position: ``task_seed`` derives a replication's
``SeedSequence`` from the base seed, the experiment name, the point's scenario and the
replication index only, so results are bit-identical whatever the number of tasks, partitions
or executors, and whichever replications were resumed.  The scenario
(``Experiment.scenario``) leaves out the parameters listed in ``Experiment.variant_params``, so
protocol variants see the same random numbers, and those at their default values, so a new
parameter does not reseed existing experiments.

Why the cache cannot lie: a result file is named by its task key, which hashes the experiment,
the point, the replication, the base seed *and the code the replication runs*
(``code_fingerprint``: every ``causal_lab`` module the experiment's module imports, directly or
not).  Any edit to a kernel, a workload or a metric gives new keys, so rows
computed by older code are never mistaken for current ones; they stay on disk, unused.

Workers look the experiment up by name (``causal_lab.catalog.get``) instead of unpickling
the ``Experiment`` object.  Experiments defined outside the families (the tests' toy, a user's
own) are found through ``CAUSAL_LAB_EXTRA_EXPERIMENTS`` (see ``causal_lab.catalog``): the driver
reads it when the sweep starts and every task sets it before the lookup.  The modules must be
importable by the workers, e.g. through ``PYTHONPATH``, which ``causal_lab.spark`` forwards to
executors.

Each row holds the point's parameters, ``rep``, ``base_seed``, ``seed_entropy`` (the JSON list
that rebuilds the replication's ``SeedSequence``), ``task_key`` and every metric returned by
``replicate``; a metric must keep the same type in every replication.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import socket
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.types import BooleanType, NumericType
from tqdm import tqdm

from causal_lab import catalog, codegraph, paths
from causal_lab.engine import memory
from causal_lab.experiment import Experiment
from causal_lab.params import ParameterError
from causal_lab.processes import alive
from causal_lab.spark import spark_session

BASE_SEED = 20181113
STRAY_AGE_S = 3600.0
CLAIM_POLL_S = 0.5  # how often a sweep looks for the replications another one computes
BATCHES_PER_CORE = 4  # enough to even out uneven replications, few enough to keep Spark's cost low
BOOKKEEPING = ("rep", "base_seed", "seed_entropy", "task_key")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _h(text: str) -> int:
    """A 32-bit hash that, unlike ``hash()``, is the same in every process and Python version."""
    return zlib.crc32(text.encode("utf-8"))


def task_seed(
    base_seed: int, experiment: Experiment, point: Mapping[str, Any], rep: int
) -> np.random.SeedSequence:
    """The seed of replication ``rep`` of ``point``, independent of where and when it runs."""
    scenario = experiment.scenario(point)
    return np.random.SeedSequence([base_seed, _h(experiment.name), _h(_canonical(scenario)), rep])


@functools.lru_cache(maxsize=None)
def _fingerprint_of(files: frozenset) -> str:
    return codegraph.fingerprint(files)


def code_fingerprint(experiment: Experiment) -> str:
    """A hash of the source code a replication of ``experiment`` runs: the module that defines
    its ``replicate`` (and its ``code_modules``) and every ``causal_lab`` module they import,
    directly or through others (kernel, workload, engine, topology, oracle...).  Code that only
    reads results (a family's ``artifacts``, the claims, the notebooks) is not part of it."""
    return _fingerprint_of(frozenset(experiment.code_files()))


@dataclasses.dataclass(frozen=True)
class Task:
    """One replication of one parameter point; ``key`` names its result file."""

    key: str
    point: dict
    rep: int
    point_index: int


def _task_key(name: str, point: Mapping[str, Any], rep: int, base_seed: int, code: str) -> str:
    """64 bits of SHA-256 of the experiment's name, point, replication, base seed and code
    fingerprint: stable across runs and machines for the same code, new for any change of it."""
    named = [name, point, rep, base_seed, code]
    return hashlib.sha256(_canonical(named).encode()).hexdigest()[:16]


def plan(
    experiment: Experiment,
    scale: str = "default",
    overrides: Mapping[str, Sequence[Any]] | None = None,
    reps: int | None = None,
    base_seed: int = BASE_SEED,
) -> list[Task]:
    """Expand and validate the sweep; every ``ParameterError`` is raised here, before any work."""
    points = experiment.points(scale, overrides)
    n = experiment.reps.get(scale) if reps is None else reps
    if type(n) is not int or n < 1:
        raise ParameterError(f"reps must be a positive int, got {n!r}")
    if type(base_seed) is not int or base_seed < 0:
        raise ParameterError(f"base_seed must be a non-negative int, got {base_seed!r}")
    code = code_fingerprint(experiment)  # once: it parses the imports of every module it hashes
    tasks = [
        Task(_task_key(experiment.name, p, r, base_seed, code), p, r, i)
        for i, p in enumerate(points)
        for r in range(n)
    ]
    if len({t.key for t in tasks}) < len(tasks):
        raise ParameterError("the grid lists a parameter point twice")
    return tasks


def default_out(experiment: Experiment) -> Path:
    return paths.results_dir(experiment.name)


def _part_name(key: str) -> str:
    return f"part-{key}.parquet"


def _claim_path(out: Path, task: Task) -> Path:
    return out / f".claim-{task.key}"


def _me() -> str:
    return f"{socket.gethostname()} {os.getpid()}"


def _claimed_by_other(path: Path) -> bool:
    """Whether the claim at ``path`` belongs to another process that still runs.  One from
    another host cannot be checked: it holds until it is ``STRAY_AGE_S`` old; one whose owner
    is still writing it (empty) holds too."""
    try:
        owner = path.read_text().split()
        age = time.time() - path.stat().st_mtime
    except OSError:  # released meanwhile
        return False
    if len(owner) != 2:
        return age < STRAY_AGE_S
    host, pid = owner
    if host != socket.gethostname():
        return age < STRAY_AGE_S
    return " ".join(owner) != _me() and alive(int(pid))


def _claim(out: Path, pending: Sequence[Task]) -> tuple[list[Task], list[Task]]:
    """Claim every pending replication that no live process has claimed; return (claimed here,
    claimed by another).  Two processes taking over the same stale claim both compute it: the
    same row, written atomically twice."""
    mine, theirs = [], []
    for task in pending:
        path = _claim_path(out, task)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if _claimed_by_other(path):
                theirs.append(task)
                continue
            path.write_text(_me())  # a stale claim: its owner died
        else:
            with os.fdopen(fd, "w") as f:
                f.write(_me())
        mine.append(task)
    return mine, theirs


def _release(out: Path, tasks: Sequence[Task]) -> None:
    """Remove this process's claims (not those another process took over meanwhile)."""
    for task in tasks:
        path = _claim_path(out, task)
        try:
            if path.read_text() == _me():
                path.unlink()
        except OSError:
            pass


def _run_task(
    task: Task, *, experiment: str, base_seed: int, out: str, extra_modules: str
) -> None:
    """Run one replication on a Spark worker and write its row."""
    os.environ[catalog.EXTRA_EXPERIMENTS_ENV] = extra_modules
    exp = catalog.get(experiment)
    seed = task_seed(base_seed, exp, task.point, task.rep)
    metrics = exp.replicate(dict(task.point), seed)
    row = {**task.point, "rep": task.rep, "base_seed": base_seed,
           "seed_entropy": json.dumps(seed.entropy), "task_key": task.key}
    if clash := row.keys() & metrics.keys():
        raise ValueError(f"experiment {experiment!r}: metrics {sorted(clash)} "
                         "clash with parameter or bookkeeping columns")
    row.update(metrics)
    _write_atomically(pa.Table.from_pylist([row]), Path(out) / _part_name(task.key))


def _run_batch(batch: Sequence[Task], *, out: str, **run) -> None:
    """Run a Spark task's replications in turn; on a retry, skip those already written.  A
    worker runs one replication after another: its memory is kept for the next one
    (``engine.memory.keep_freed_memory``)."""
    memory.keep_freed_memory()
    for task in batch:
        if not (Path(out) / _part_name(task.key)).exists():
            _run_task(task, out=out, **run)


def batches(tasks: Sequence[Task], n: int) -> list[list[Task]]:
    """Deal ``tasks`` round-robin into ``n`` batches.

    Why round-robin: a plan lists a point's replications together and the costly points (the
    largest N) together, so contiguous slices would give one Spark task all the heavy work
    while the others idle; dealt out, every batch gets a share of every point."""
    return [list(tasks[i::n]) for i in range(min(n, len(tasks)))]


def _write_atomically(table: pa.Table, path: Path) -> None:
    """A crash leaves either the whole file or a hidden temp file that the next run deletes."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _watch(out: Path, names: set[str], bar: tqdm, stop: threading.Event) -> None:
    """Advance ``bar`` as part files appear: workers write them, so the driver has to look."""
    done = 0
    while True:
        stopped = stop.wait(0.5)
        now = len(names.intersection(os.listdir(out)))
        bar.update(now - done)
        done = now
        if stopped:
            return


def run_sweep(
    experiment: Experiment,
    scale: str = "default",
    overrides: Mapping[str, Sequence[Any]] | None = None,
    reps: int | None = None,
    out: str | os.PathLike | None = None,
    base_seed: int = BASE_SEED,
    progress: bool = True,
    partitions: int | None = None,
) -> pd.DataFrame:
    """Run every task of the plan that has no result file yet; return all the plan's rows.

    ``out`` defaults to ``data/results/<experiment.name>/`` in the checkout.  Replications go
    to Spark in ``partitions`` batches (default: ``BATCHES_PER_CORE`` per core of the cluster),
    dealt round-robin (``batches``); a batch is one Spark task, scheduled and retried on its
    own.  Batching changes scheduling only, never results.  Why not one Spark task per
    replication: a default sweep has hundreds of replications of a fraction of a second each,
    and Spark's per-task cost then rivalled the simulations' (notebook 31, 400 replications of
    44 CPU-s in all on 2 cores: 78 s one per task, 65 s in batches, both with the 29 s of
    planning since removed).
    Spark is not started when every task is already done or claimed by another live sweep
    (whose results this one waits for).  Rows come in plan order.
    ``experiment`` must be in the catalog: workers look it up by its name.
    """
    tasks = plan(experiment, scale, overrides, reps, base_seed)
    out = Path(out) if out is not None else default_out(experiment)
    out.mkdir(parents=True, exist_ok=True)
    for stray in out.glob(".part-*.tmp"):
        # left by a killed sweep; a recent one may belong to a sweep running right now
        if time.time() - stray.stat().st_mtime > STRAY_AGE_S:
            stray.unlink(missing_ok=True)
    for stray in out.glob(".claim-*"):  # left by a killed sweep
        if not _claimed_by_other(stray):
            stray.unlink(missing_ok=True)
    pending = _missing(out, tasks)
    if pending:
        run = functools.partial(
            _run_batch,
            experiment=experiment.name,
            base_seed=base_seed,
            out=str(out.resolve()),
            extra_modules=os.environ.get(catalog.EXTRA_EXPERIMENTS_ENV, ""),
        )
        with tqdm(total=len(tasks), initial=len(tasks) - len(pending), desc=experiment.name,
                  unit="rep", disable=not progress) as bar:
            stop = threading.Event()
            names = {_part_name(t.key) for t in pending}
            watcher = threading.Thread(target=_watch, args=(out, names, bar, stop))
            watcher.start()
            try:
                while pending:  # claimed by another sweep: wait, or take over if it died
                    mine, theirs = _claim(out, pending)
                    try:
                        if mine:
                            sc = spark_session().sparkContext
                            work = batches(mine, partitions or BATCHES_PER_CORE * sc.defaultParallelism)
                            sc.parallelize(work, numSlices=len(work)).foreach(run)
                        else:
                            time.sleep(CLAIM_POLL_S)
                    finally:
                        _release(out, mine)
                    pending = _missing(out, theirs)
            finally:
                stop.set()
                watcher.join()
    return _read_rows([out / _part_name(t.key) for t in tasks]).to_pandas()


def _missing(out: Path, tasks: Sequence[Task]) -> list[Task]:
    """The tasks with no result file in ``out``."""
    existing = set(os.listdir(out))
    return [t for t in tasks if _part_name(t.key) not in existing]


def _read_rows(files: Sequence[Path]) -> pa.Table:
    """The rows of result files, in their order; a metric missing from some gets nulls there."""
    return pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")


def ci95_half_width(std, reps):
    """Half-width of the 95 % Student-t interval of a mean over ``reps`` replications.

    t(0.975, reps - 1) * std / sqrt(reps): replication counts are small (3-30), where 1.96 would
    be too narrow.  NaN for a single replication.  The one definition used by ``summarize``
    (Spark SQL) and ``ci95`` (pandas).
    """
    # imported here: every Spark worker imports this module to run replications, and
    # scipy.stats alone took 0.9 s of a worker's 1.9 s of imports, in every notebook
    from scipy import stats

    reps = np.asarray(reps, float)
    safe = np.maximum(reps - 1, 1)
    return np.where(reps > 1, stats.t.ppf(0.975, safe) * np.asarray(std, float) / np.sqrt(reps), np.nan)


def ci95(values) -> float:
    """``ci95_half_width`` of a sample of per-replication values (usable with ``groupby.agg``)."""
    values = np.asarray(values, float)
    std = values.std(ddof=1) if len(values) > 1 else np.nan
    return float(ci95_half_width(std, len(values)))


def summarize(
    experiment: Experiment,
    out: str | os.PathLike | None = None,
    metrics: Sequence[str] | None = None,
    tasks: Sequence[Task] | None = None,
) -> pd.DataFrame:
    """Per parameter point: ``reps`` and each metric's ``_mean``, ``_std`` and ``_ci95``.

    Spark SQL does the aggregation.  The driver reads the rows (one per replication: a few
    thousand at most) and hands them to Spark as one Arrow table: letting Spark scan the
    one-row Parquet files and merge their schemas cost several seconds of JVM time per call,
    more than the aggregation.  ``_ci95`` is the half-width of the 95 % Student-t interval of the mean,
    t(0.975, reps - 1) * std / sqrt(reps), with the t quantile from scipy: replication
    counts are often small (10-30), where 1.96 would be too narrow.  It is NaN for a single
    replication.  Metrics default to every numeric or boolean column (booleans give rates);
    all rows of ``out`` count, whichever sweep (scale, base seed) wrote them, unless ``tasks``
    (a plan) restricts them to that plan's replications.
    """
    out = Path(out) if out is not None else default_out(experiment)
    if tasks is None:
        files = sorted(out.glob("part-*.parquet"))
        if not files:
            raise FileNotFoundError(f"no results in {out}")
    else:  # read only the plan's files: a shared result folder may hold many other sweeps
        files = [out / _part_name(t.key) for t in tasks if (out / _part_name(t.key)).exists()]
        if not files:
            raise FileNotFoundError(f"none of the plan's {len(tasks)} results is in {out}")
    spark = spark_session()
    df = spark.createDataFrame(_read_rows(files))
    params = [p.name for p in experiment.params if p.name in df.columns]
    if metrics is None:
        metrics = [f.name for f in df.schema.fields
                   if f.name not in params and f.name not in BOOKKEEPING
                   and isinstance(f.dataType, (NumericType, BooleanType))]
    elif missing := [m for m in metrics if m not in df.columns]:
        raise ParameterError(f"no metric {missing} in {out}; columns: {', '.join(df.columns)}")
    df.createOrReplaceTempView("causal_lab_results")
    keys = ", ".join(f"`{p}`" for p in params)
    aggregates = "".join(
        f", avg(CAST(`{m}` AS DOUBLE)) AS `{m}_mean`"
        f", stddev_samp(CAST(`{m}` AS DOUBLE)) AS `{m}_std`"
        for m in metrics
    )
    table = spark.sql(
        f"SELECT {keys}, count(*) AS reps{aggregates} FROM causal_lab_results"
        f" GROUP BY {keys} ORDER BY {keys}"
    ).toArrow().to_pandas()  # not toPandas(): pyspark warns that it is untested with pandas 3
    for m in metrics:
        table[f"{m}_ci95"] = ci95_half_width(table[f"{m}_std"], table["reps"])
    stats_columns = [f"{m}_{s}" for m in metrics for s in ("mean", "std", "ci95")]
    return table[[*params, "reps", *stats_columns]]
