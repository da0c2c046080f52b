"""The sweep runner: seeds, validation before work, bit-identical Spark results, resume, summary."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import causal_lab.sweep as sweep
from causal_lab import catalog, spark
from causal_lab.params import Param, ParameterError
from causal_lab.sweep import STRAY_AGE_S, plan, run_sweep, summarize, task_seed
from toy_experiment import TOY

METRICS = ["x", "first", "k", "hit"]


def direct_rows(tasks, base_seed=sweep.BASE_SEED):
    """What the sweep must produce: replicate called in-process with each task's seed."""
    return pd.DataFrame(
        [TOY.replicate(t.point, task_seed(base_seed, TOY, t.point, t.rep)) for t in tasks]
    )


def state(seed):
    return tuple(seed.generate_state(4))


def test_seed_depends_on_point_and_rep_not_on_plan_order():
    forward = plan(TOY, "smoke", {"mu": [0.0, 1.0]})
    backward = plan(TOY, "smoke", {"mu": [1.0, 0.0]})
    assert {t.key: t.point_index for t in forward} != {t.key: t.point_index for t in backward}
    seeds = {t.key: state(task_seed(1, TOY, t.point, t.rep)) for t in forward}
    assert seeds == {t.key: state(task_seed(1, TOY, t.point, t.rep)) for t in backward}
    assert len(set(seeds.values())) == len(seeds)  # different reps and points differ


def test_variant_params_share_the_seed():
    plain, shifted = ({**TOY.points("smoke")[0], "variant": v} for v in ("plain", "shifted"))
    assert state(task_seed(7, TOY, plain, 2)) == state(task_seed(7, TOY, shifted, 2))
    assert state(task_seed(7, TOY, plain, 2)) != state(task_seed(7, TOY, plain, 3))
    assert state(task_seed(7, TOY, plain, 2)) != state(task_seed(8, TOY, plain, 2))


def test_a_grid_of_several_products_runs_their_union_once():
    """Sensitivities around a main grid: each product expands with the overrides, a point an
    earlier product holds is not repeated, a point listed twice in one product is an error."""
    union = dataclasses.replace(TOY, grid={"smoke": [{"mu": [0.0, 1.0]}, {"mu": [1.0, 2.0], "variant": ["shifted", "plain"]}]})
    assert [(p["mu"], p["variant"]) for p in union.points("smoke")] == \
        [(0.0, "plain"), (1.0, "plain"), (1.0, "shifted"), (2.0, "shifted"), (2.0, "plain")]
    assert union.swept("smoke") == ["mu", "variant"]
    assert {p["n"] for p in union.points("smoke", {"n": [7]})} == {7}
    assert len(plan(union, "smoke")) == 5 * TOY.reps["smoke"]
    with pytest.raises(ParameterError, match="twice"):
        plan(dataclasses.replace(TOY, grid={"smoke": [{"mu": [1.0, 1.0]}]}), "smoke")


def test_a_new_parameter_at_its_default_keeps_every_seed():
    """Adding a named option (at a default that keeps the old behaviour) reseeds nothing."""
    grown = dataclasses.replace(TOY, params=(*TOY.params, Param("option", int, 0, "new")))
    for t in plan(TOY, "default"):
        assert state(task_seed(1, TOY, t.point, t.rep)) == \
            state(task_seed(1, grown, {**t.point, "option": 0}, t.rep))
    point = {**TOY.points("smoke")[0], "option": 1}  # a non-default value is a new scenario
    assert state(task_seed(1, TOY, TOY.points("smoke")[0], 0)) != state(task_seed(1, grown, point, 0))


_FINGERPRINT = ("import sys; from causal_lab import catalog, sweep; "
                "print(sweep.code_fingerprint(catalog.get(sys.argv[1])))")


def _fingerprint(package_parent, experiment):
    env = {**os.environ, "PYTHONPATH": str(package_parent), "NUMBA_DISABLE_JIT": "1",
           "CAUSAL_LAB_EXTRA_EXPERIMENTS": ""}
    done = subprocess.run([sys.executable, "-c", _FINGERPRINT, experiment], env=env, check=True,
                          capture_output=True, text=True, cwd=package_parent)
    return done.stdout.strip()


def test_any_edit_of_the_simulation_code_gives_new_task_keys(tmp_path):
    """The cache cannot lie: result files are keyed by the code a replication runs.  Editing the
    kernel (even a comment), the engine or the oracle changes the fingerprint of the family that
    uses it; editing what only reads results (a family's artifacts) or another family does not."""
    import shutil

    shutil.copytree(Path(sweep.__file__).parent, tmp_path / "causal_lab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    package = tmp_path / "causal_lab"
    before = {e: _fingerprint(tmp_path, e) for e in ("vcube_broadcast", "ps_single")}

    def edited(path, experiment):
        with open(package / path, "a") as f:
            f.write("\n# an edit\n")
        return _fingerprint(tmp_path, experiment)

    assert edited("families/vcube_broadcast/artifacts/table1.py", "vcube_broadcast") == before["vcube_broadcast"]
    assert edited("claims.py", "vcube_broadcast") == before["vcube_broadcast"]
    after_kernel = edited("families/vcube_broadcast/kernel.py", "vcube_broadcast")
    assert after_kernel != before["vcube_broadcast"]
    assert _fingerprint(tmp_path, "ps_single") == before["ps_single"]  # another family
    assert edited("oracle.py", "ps_single") != before["ps_single"]  # shared code: both change
    assert _fingerprint(tmp_path, "vcube_broadcast") != after_kernel


def test_task_keys_follow_the_code_fingerprint(monkeypatch):
    old = plan(TOY, "smoke")
    monkeypatch.setattr(sweep, "code_fingerprint", lambda experiment: "an edited kernel")
    new = plan(TOY, "smoke")
    assert not {t.key for t in old} & {t.key for t in new}
    assert [state(task_seed(1, TOY, t.point, t.rep)) for t in old] == \
        [state(task_seed(1, TOY, t.point, t.rep)) for t in new]


@pytest.mark.parametrize(
    "overrides, reps",
    [({"bogus": [1]}, None), ({"n": ["three"]}, None), ({"n": [0]}, None),
     ({"mu": [0.0, 0.0]}, None), ({}, 0)],
    ids=["unknown", "ill-typed", "failing-check", "repeated-point", "zero-reps"],
)
def test_bad_parameters_fail_before_any_work(tmp_path, monkeypatch, overrides, reps):
    monkeypatch.setattr(sweep, "spark_session", lambda: pytest.fail("Spark started"))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ParameterError):
        run_sweep(TOY, "smoke", overrides, reps=reps, out=out, progress=False)
    assert not any(out.iterdir())


@pytest.fixture(scope="module")
def default_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("default")
    return out, run_sweep(TOY, "default", out=out, progress=False)


@pytest.mark.spark
@pytest.mark.parametrize("partitions", [None, 1, 5])
def test_spark_results_are_bit_identical_to_direct_calls(default_sweep, tmp_path, partitions):
    out, rows = default_sweep
    if partitions is not None:
        out = tmp_path
        rows = run_sweep(TOY, "default", out=out, progress=False, partitions=partitions)
    tasks = plan(TOY, "default")
    assert list(rows["task_key"]) == [t.key for t in tasks]
    assert sorted(p.name for p in out.iterdir()) == sorted(f"part-{t.key}.parquet" for t in tasks)
    pd.testing.assert_frame_equal(rows[METRICS], direct_rows(tasks), check_exact=True)
    shifted = rows["variant"] == "shifted"  # common random numbers across variants:
    assert list(rows.loc[shifted, "first"]) == list(rows.loc[~shifted, "first"])


def test_batches_deal_every_replication_once_and_spread_each_point():
    tasks = plan(TOY, "default")
    dealt = sweep.batches(tasks, 4)
    assert sorted(t.key for batch in dealt for t in batch) == sorted(t.key for t in tasks)
    assert max(map(len, dealt)) - min(map(len, dealt)) <= 1
    last = tasks[-1].point_index  # the plan's last point: contiguous slices would put it in one
    assert all(any(t.point_index == last for t in batch) for batch in dealt)
    assert len(sweep.batches(tasks[:2], 4)) == 2  # never an empty Spark task


@pytest.mark.spark
def test_finished_sweep_does_not_start_spark(default_sweep, monkeypatch):
    out, rows = default_sweep
    monkeypatch.setattr(sweep, "spark_session", lambda: pytest.fail("Spark started"))
    pd.testing.assert_frame_equal(run_sweep(TOY, "default", out=out, progress=False), rows)


@pytest.mark.spark
def test_sweep_killed_midway_resumes_without_loss_or_duplicates(tmp_path):
    out = tmp_path / "out"
    script = ("import sys, toy_experiment; from causal_lab.sweep import run_sweep; "
              "run_sweep(toy_experiment.TOY, 'smoke', {'sleep': [0.3]}, reps=8, out=sys.argv[1], "
              "progress=False)")
    env = {**os.environ, "SPARK_LOCAL_DIRS": str(tmp_path / "spark")}  # a killed JVM leaves them
    victim = subprocess.Popen([sys.executable, "-c", script, str(out)], env=env,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(list(out.glob("part-*.parquet"))) < 3:
            assert victim.poll() is None and time.monotonic() < deadline, "sweep ended or stalled"
            time.sleep(0.05)
    finally:
        os.killpg(victim.pid, signal.SIGKILL)  # the driver, its JVM and the Python workers
        victim.wait()
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    assert 3 <= len(before) < 16
    old = out / ".part-0123456789abcdef.parquet.deadbeef.tmp"
    old.write_bytes(b"half a file")
    os.utime(old, (time.time() - 2 * STRAY_AGE_S,) * 2)  # left by a sweep killed long ago

    rows = run_sweep(TOY, "smoke", {"sleep": [0.3]}, reps=8, out=out, progress=False)

    expected = plan(TOY, "smoke", {"sleep": [0.3]}, reps=8)
    assert sorted(rows["task_key"]) == sorted(t.key for t in expected)
    after = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    assert {name: after[name] for name in before} == before
    assert not old.exists()  # recent temp files may belong to a concurrent sweep: kept, ignored


@pytest.mark.spark
def test_replications_claimed_by_a_live_sweep_are_waited_for_and_a_dead_ones_taken_over(tmp_path):
    """Two notebooks sharing replications under make -j2: each is computed once, by whichever
    sweep claimed it first, unless that sweep dies."""
    tasks = plan(TOY, "smoke", {"sleep": [0.2]})
    waited, orphan = tasks[0], tasks[-1]
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    for task in (waited, orphan):
        (tmp_path / f".claim-{task.key}").write_text(f"{socket.gethostname()} {other.pid}")
    result = {}
    sweeping = threading.Thread(target=lambda: result.update(
        rows=run_sweep(TOY, "smoke", {"sleep": [0.2]}, out=tmp_path, progress=False)))
    sweeping.start()
    try:
        part = {t.key: tmp_path / f"part-{t.key}.parquet" for t in tasks}
        deadline = time.monotonic() + 120
        while not all(part[t.key].exists() for t in tasks[1:-1]):
            assert sweeping.is_alive() and time.monotonic() < deadline, "sweep ended or stalled"
            time.sleep(0.05)
        time.sleep(2 * sweep.CLAIM_POLL_S)
        assert sweeping.is_alive() and not part[waited.key].exists() and not part[orphan.key].exists()
        sweep._run_task(waited, experiment=TOY.name, base_seed=sweep.BASE_SEED, out=str(tmp_path),
                        extra_modules=os.environ[catalog.EXTRA_EXPERIMENTS_ENV])  # the other's work
        written = part[waited.key].stat().st_ino
    finally:
        other.kill()  # dies before writing the orphan's row: the sweep computes it
        other.wait()
        sweeping.join(120)
    assert not sweeping.is_alive()
    assert part[waited.key].stat().st_ino == written  # not computed again
    pd.testing.assert_frame_equal(result["rows"][METRICS], direct_rows(tasks), check_exact=True)
    assert [p.name for p in tmp_path.glob(".claim-*")] == [f".claim-{waited.key}"]  # the dead one's
    run_sweep(TOY, "smoke", {"sleep": [0.2]}, out=tmp_path, progress=False)
    assert not list(tmp_path.glob(".claim-*"))  # cleared by the next sweep


@pytest.mark.spark
def test_summarize_agrees_with_pandas(default_sweep):
    out, rows = default_sweep
    summary = summarize(TOY, out)
    params = [p.name for p in TOY.params]
    grouped = rows.assign(hit=rows["hit"].astype(float)).groupby(params)
    n = grouped.size()
    assert list(summary["reps"]) == list(n)
    assert list(summary[params].itertuples(index=False, name=None)) == list(n.index)  # sorted
    for m in METRICS:
        np.testing.assert_allclose(summary[f"{m}_mean"], grouped[m].mean(), rtol=1e-12)
        np.testing.assert_allclose(summary[f"{m}_std"], grouped[m].std(), rtol=1e-12)
        half = stats.t.ppf(0.975, n - 1) * grouped[m].std() / np.sqrt(n)
        np.testing.assert_allclose(summary[f"{m}_ci95"], half, rtol=1e-12)
    only_k = summarize(TOY, out, metrics=["k"])
    assert list(only_k.columns) == [*params, "reps", "k_mean", "k_std", "k_ci95"]


@pytest.mark.spark
def test_the_driver_maps_the_class_archive_that_make_built():
    archive = spark.class_archive()
    if not archive.is_file():
        pytest.skip("no class archive: make builds it (build/spark-classes.done)")
    jvm = spark.spark_session().sparkContext._jvm
    args = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert f"-XX:SharedArchiveFile={archive}" in " ".join(args).split()


def test_ci95_is_the_student_t_half_width():
    values = [1.0, 2.0, 4.0]
    expected = stats.t.ppf(0.975, 2) * np.std(values, ddof=1) / np.sqrt(3)
    assert sweep.ci95(values) == pytest.approx(expected)
    assert np.isnan(sweep.ci95([5.0]))
