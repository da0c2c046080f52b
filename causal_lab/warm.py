"""``python -m causal_lab.warm``: compile every family's kernels once, before a batch uses them.

The kernels are numba functions cached on disk (``cache=True``).  On a fresh checkout the cache
is empty, and a batch of notebooks run two at a time (``make -j2 figures``), each fanning its
replications out to Spark workers, compiles the same kernel in up to four processes at once:
measured on 2 cores, 1369 s for the default batch against 893 s with the kernels cached.  Here
each family compiles in one process, two families at a time, by running the first smoke point
of each protocol variant of each of its experiments and one soak run of each of its protocols;
what a batch then uses loads from the cache.  Anything not reached here still compiles when
first called, as before: this is only about doing the shared work once.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from causal_lab import catalog, soak

SEED = 0


def _variants(experiment) -> list[dict]:
    """The first smoke point of each combination of the experiment's variant parameters."""
    seen, first = set(), []
    for point in experiment.points("smoke"):
        key = tuple(point.get(name) for name in experiment.variant_params)
        if key not in seen:
            seen.add(key)
            first.append(point)
    return first


def warm_family(family: str) -> tuple[str, float]:
    """Run what compiles ``family``'s kernels; return (family, seconds)."""
    started = time.perf_counter()
    module = catalog.family_module(family, "experiments")
    for experiment in getattr(module, "EXPERIMENTS", ()) if module else ():
        for point in _variants(experiment):
            experiment.replicate(point, np.random.SeedSequence(SEED))
    for protocol in catalog.protocols(family):
        soak.soak_one(protocol, 0)
    return family, time.perf_counter() - started


def main(jobs: int | None = None) -> int:
    jobs = jobs or min(2, os.cpu_count() or 1)
    started = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        for family, seconds in pool.map(warm_family, catalog.families()):
            print(f"warm {family:22s} {seconds:6.1f} s", flush=True)
    cross = catalog.get("cross_family")
    for point in _variants(cross):
        cross.replicate(point, np.random.SeedSequence(SEED))
    print(f"kernels compiled or loaded from the cache in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else None))
