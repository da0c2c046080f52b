"""``causal-lab soak``: random small configurations of every protocol, each run through ``verify``.

Unit and scenario tests pin what their authors thought of; a soak draws what nobody thought of:
sizes, delay laws (FIFO and not), windows, variants, seeds and, where a family has it, churn.
Every run goes through the family's ``Run.invariants`` (the independent oracle plus the
protocol's own invariants).  A violation fails the soak, which prints the protocol, the run's
configuration and its seed, enough to replay it with ``Protocol.run``.

Violations a published protocol commits by design (``Run.known_flaws``, e.g. the thesis's
CHECKCB with its first_rec shortcut under churn) are counted apart and do not fail: the notebook
that reproduces the paper reports them, and the protocol's safe variant is soaked beside them.

Families declare their protocols in ``soak.py`` (``PROTOCOLS``); runs are spread over processes
(``--jobs``, default: all cores), and each run's configuration and seed depend only on the
protocol's name and the run's index, so a soak is reproducible whatever the number of jobs.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

from causal_lab import catalog

BASE_SEED = 20261126
CHUNK = 50  # runs per task sent to a worker process


@dataclasses.dataclass(frozen=True)
class Protocol:
    """One protocol to soak: ``draw`` a random small configuration, ``run`` it.

    ``draw(g)`` returns a dict of plain values from the ``numpy.random.Generator`` g; ``run(config,
    seed)`` returns the family's ``Run`` (``causal_lab.engine.run``), not yet verified."""

    family: str
    name: str
    draw: Callable[[np.random.Generator], dict]
    run: Callable[[dict, np.random.SeedSequence], Any]


@dataclasses.dataclass
class Tally:
    """What the soak of one protocol found."""

    protocol: str
    runs: int = 0
    events: int = 0
    violations: int = 0  # oracle-counted deliveries out of order or duplicated
    undelivered: int = 0  # deliveries owed and never made
    failed_runs: int = 0
    flaws: dict = dataclasses.field(default_factory=dict)  # known flaw -> count (runs with it)
    examples: list = dataclasses.field(default_factory=list)  # (index, config, problems)

    def add(self, other: "Tally") -> None:
        self.runs += other.runs
        self.events += other.events
        self.violations += other.violations
        self.undelivered += other.undelivered
        self.failed_runs += other.failed_runs
        for k, v in other.flaws.items():
            self.flaws[k] = self.flaws.get(k, 0) + v
        self.examples = (self.examples + other.examples)[:3]


def seeds(protocol: Protocol, index: int) -> tuple[np.random.Generator, np.random.SeedSequence]:
    """The configuration generator and the run seed of run ``index`` of ``protocol``."""
    key = zlib.crc32(f"{protocol.family}/{protocol.name}".encode())
    seq = np.random.SeedSequence([BASE_SEED, key, index])
    config_seq, run_seq = seq.spawn(2)
    return np.random.default_rng(config_seq), run_seq


def soak_one(protocol: Protocol, index: int) -> Tally:
    """Draw, run and check run ``index`` of ``protocol``."""
    g, seed = seeds(protocol, index)
    config = protocol.draw(g)
    tally = Tally(protocol.name, runs=1)
    try:
        run = protocol.run(config, seed)
        report = run.oracle_report()
        problems = run.invariants(report)
        tally.events = int(run.events)
        tally.violations = int(run.violations(report))
        tally.undelivered = int(run.undelivered(report))
        tally.flaws = {k: 1 for k, v in run.known_flaws(report).items() if v}
    except Exception as error:  # a crash is a failure too, with its configuration
        problems = [f"{type(error).__name__}: {error}"]
    if problems:
        tally.failed_runs = 1
        tally.examples = [(index, config, problems)]
    return tally


def _chunk(family: str, name: str, start: int, stop: int) -> Tally:
    protocol = next(p for p in catalog.protocols(family) if p.name == name)
    tally = Tally(name)
    for index in range(start, stop):
        tally.add(soak_one(protocol, index))
    return tally


def soak(family: str | None = None, runs: int = 10_000, jobs: int | None = None,
         progress: bool = True) -> list[Tally]:
    """Soak every protocol of ``family`` (or of every family) for ``runs`` runs each."""
    protocols = catalog.protocols(family)
    jobs = jobs or os.cpu_count() or 1
    tasks = [(p.family, p.name, start, min(start + CHUNK, runs))
             for p in protocols for start in range(0, runs, CHUNK)]
    tallies = {p.name: Tally(p.name) for p in protocols}
    with tqdm(total=runs * len(protocols), unit="run", desc="soak", disable=not progress) as bar:
        if jobs == 1:
            results = (_chunk(*t) for t in tasks)
        else:
            pool = ProcessPoolExecutor(jobs)
            results = pool.map(_chunk, *zip(*tasks)) if tasks else iter(())
        for tally in results:
            tallies[tally.protocol].add(tally)
            bar.update(tally.runs)
        if jobs != 1:
            pool.shutdown()
    return list(tallies.values())


def report(tallies: list[Tally], seconds: float) -> int:
    """Print one line per protocol and the failures; 1 if any run failed, else 0."""
    print(f"{'protocol':32s} {'runs':>7s} {'events':>12s} {'violations':>10s} "
          f"{'undelivered':>11s} {'failed':>6s}  known flaws (runs with them)")
    for t in tallies:
        flaws = "; ".join(f"{k}: {v}" for k, v in sorted(t.flaws.items())) or "-"
        print(f"{t.protocol:32s} {t.runs:7d} {t.events:12d} {t.violations:10d} "
              f"{t.undelivered:11d} {t.failed_runs:6d}  {flaws}")
    failed = [t for t in tallies if t.failed_runs]
    for t in failed:
        for index, config, problems in t.examples:
            print(f"FAILED {t.protocol} run {index}: {config}\n    " + "\n    ".join(problems))
    runs = sum(t.runs for t in tallies)
    print(f"{runs} runs in {seconds:.1f} s wall; {sum(t.failed_runs for t in tallies)} failed")
    return 1 if failed else 0


def main(family: str | None, runs: int, jobs: int | None) -> int:
    started = time.perf_counter()
    tallies = soak(family, runs, jobs, progress=sys.stderr.isatty())
    return report(tallies, time.perf_counter() - started)
