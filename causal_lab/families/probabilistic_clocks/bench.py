"""``make bench`` for seed 002: throughput in receptions per CPU-second, oracle included (a
reception is one network copy reaching a process; each becomes one delivery).

* the probabilistic-clock broadcast at 1000 processes, 200 msg/s, 260 entries (the issue's
  target: >= 10^6 receptions per CPU-second with the oracle);
* the DCS broadcast on the first bell of Figure 7 (N = 1000, the spec's policy with rounds);
* Figure 5's evaluator at N = 2000, 200 msg/s, all 15 clock sizes;
* from those rates, the CPU time of this family's paper-scale grids (``experiments``, paper
  scale) and the wall time on 2 cores, against the issue's 60 minutes (shared with seed 004);
* the wall time of the last default-scale run of notebooks 50-55 (``causal_lab.figures``
  records it per notebook), against the issue's 2 minutes together: meaningful after a run
  that computed its sweeps (a re-run that finds every result in ``data/results`` only
  re-draws the figures).

CPU time (``time.process_time``) makes the rates independent of other jobs on the machine;
every configuration is run once untimed first (compilation, caches)."""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

from causal_lab import figures
from causal_lab.engine import network
from causal_lab.families.probabilistic_clocks import experiments, kernel, shadow, workload

NET = network.Network(t_pc=0.0, t_t=0.0, tpp="normal", tpp_mean=0.1, tpp_sigma=0.02, tpp_negative="clip")
TARGET = 1e6  # receptions per CPU-second, oracle included
CORES = 2
NOTEBOOKS = "5*_dcs_*.ipynb"
DEFAULT_BUDGET_S = 120.0  # the six default-scale notebooks together (issue 12)


def _timed(fn, repeats: int) -> tuple[float, float, object]:
    """Median CPU seconds of the simulation and of the oracle check, and the last result."""
    warm = fn(np.random.SeedSequence(0), small=True)
    warm()
    sims, checks, out = [], [], None
    for rep in range(repeats):
        t0 = time.process_time()
        out = fn(np.random.SeedSequence([2023, rep]), small=False)
        t1 = time.process_time()
        out = out() if callable(out) else out
        checks.append(time.process_time() - t1)
        sims.append(t1 - t0)
    return statistics.median(sims), statistics.median(checks), out


def _pc(seed, small):
    n, seconds = (50, 1.0) if small else (1000, 20.0)
    w = workload.Workload.from_pattern(workload.pattern("constant", 200.0, seconds), n, "poisson_rr", seed)
    run = kernel.simulate(w, net=NET, seed=seed, config=kernel.Config.pc(260))
    return lambda: (run.verify(per_delivery=True), run.counters["receptions"])


def _dcs(seed, small):
    n, seconds = (50, 5.0) if small else (1000, 120.0)
    w = workload.Workload.from_pattern(workload.pattern("bell"), n, "poisson_rr", seed)
    keep = w.times < seconds
    w = workload.Workload.broadcasts(n, w.times[keep], w.nodes[keep], seconds)
    run = kernel.simulate(w, net=NET, seed=seed, config=kernel.Config())
    return lambda: (run.verify(per_delivery=True), run.counters["receptions"])


def _evaluator(seed, small):
    n, broadcasts = (100, 50) if small else (2000, 1000)
    w = workload.Workload.from_pattern(workload.pattern("constant", 200.0, 5.0 + broadcasts / 200.0), n,
                                       "poisson_rr", seed)
    t0 = time.process_time()
    ev = shadow.evaluate(w, experiments.SIZES, net=NET, seed=seed)
    return ev, time.process_time() - t0, (len(w.times)) * (n - 1)


# what notebooks 52 and 54 run of ``dcs_vs_pc``: both patterns with every variant of the scale,
# the authors' random pattern with the two policies (amendment 3)
NOTEBOOK_PATTERNS = [{"pattern": ["bell", "random"]},
                     {"pattern": ["random_authors"], "variant": ["spec", "authors_policy"]}]


def paper_receptions() -> dict[str, float]:
    """Receptions of the paper-scale grids of this family (workloads only, nothing simulated)."""
    out: dict[str, float] = {}
    seed = np.random.SeedSequence(0)
    for name, exp, overrides in (("dcs_vs_pc", experiments.DCS_VS_PC, NOTEBOOK_PATTERNS),
                                 ("dcs_balancing", experiments.DCS_BALANCING, [None])):
        total = 0.0
        for point in (pt for o in overrides for pt in exp.points("paper", o)):
            policy_name, model, reference = experiments.VARIANTS.get(point.get("variant", "spec"), (0, "poisson_rr", False))
            if name == "dcs_vs_pc":
                b = len(workload.schedule(workload.pattern(point["pattern"]), 10, model, seed)[0])
                runs = 3 if reference else 2
            else:
                b, runs = point["load"] * point["duration"], 1
            total += b * (point["n_nodes"] - 1) * runs * exp.reps["paper"]
        out[name] = total
    exp = experiments.PC_CLOCK_SIZE
    points = exp.points("paper")
    out["pc_clock_size"] = sum((p["broadcasts"] + p["load"] * experiments.T_WARM) * (p["n_nodes"] - 1)
                               * (1 + (p["load"] in experiments.DIRECT_SIZE)) for p in points) * exp.reps["paper"]
    return out


def default_notebooks() -> dict:
    """Wall seconds of the last default-scale run of each notebook (wall, not CPU: it includes
    whatever else the machine was doing then)."""
    seconds = {}
    for nb in figures.notebooks(NOTEBOOKS):
        record = figures.status_file("default", nb.name)
        if record.exists():
            seconds[nb.stem] = json.loads(record.read_text())["seconds"]
    total = sum(seconds.values())
    ran = len(seconds) == len(figures.notebooks(NOTEBOOKS))
    return {"name": "default-scale notebooks 50-55, last run of causal_lab.figures (wall)",
            **{f"{k}_s": v for k, v in seconds.items()}, "total_s": total,
            "target": f"<= {DEFAULT_BUDGET_S:.0f} s together", "ok": ran and total <= DEFAULT_BUDGET_S}


def run(repeats: int) -> list[dict]:
    repeats = max(1, repeats)
    rows = []
    sim, check, (_, receptions) = _timed(_pc, repeats)
    rate = receptions / (sim + check)
    rows.append({"name": "probabilistic-clock broadcast, N=1000, 200 msg/s, M=260 (incl. oracle)",
                 "receptions": receptions, "simulation_cpu_s": sim, "oracle_cpu_s": check,
                 "receptions_per_cpu_second": rate, "kernel_only_per_cpu_second": receptions / sim,
                 "target": ">= 1e6 receptions per CPU-second", "ok": rate >= TARGET})
    pc_cost = 1.0 / rate
    sim, check, (_, receptions) = _timed(_dcs, repeats)
    dcs_rate = receptions / (sim + check)
    rows.append({"name": "DCS broadcast, N=1000, first 120 s of the bell (spec policy, rounds; incl. oracle)",
                 "receptions": receptions, "simulation_cpu_s": sim, "oracle_cpu_s": check,
                 "receptions_per_cpu_second": dcs_rate, "target": ">= 1e6 receptions per CPU-second",
                 "ok": dcs_rate >= TARGET})
    _evaluator(np.random.SeedSequence(0), small=True)
    ev, seconds, receptions = _evaluator(np.random.SeedSequence(1), small=False)
    ev_rate = receptions / seconds
    rows.append({"name": "Figure 5 evaluator, N=2000, 200 msg/s, 15 clock sizes (incl. oracle)",
                 "receptions": receptions, "cpu_seconds": seconds, "receptions_per_cpu_second": ev_rate,
                 "target": ">= 1e6 receptions per CPU-second", "ok": ev_rate >= TARGET})
    grids = paper_receptions()
    cost = (grids["dcs_vs_pc"] + grids["dcs_balancing"]) / min(dcs_rate, 1.0 / pc_cost) + grids["pc_clock_size"] / ev_rate
    rows.append({"name": "seed 002 paper-scale grids (Figures 5-10), estimated from the rates above",
                 **{f"receptions_{k}": v for k, v in grids.items()}, "cpu_minutes": cost / 60,
                 "wall_minutes_on_2_cores": cost / 60 / CORES,
                 "target": "<= 60 min wall together with seed 004's grids", "ok": cost / 60 / CORES <= 60})
    rows.append(default_notebooks())
    return rows


BENCHMARKS = (run,)
