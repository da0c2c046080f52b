"""``_toy``: a tiny experiment for the sweep tests, found by the catalog as an extra module.

Spark's Python workers are separate processes, so they must be able to import this module
by name: importing it (as the tests do, before any SparkSession exists) names it in
``CAUSAL_LAB_EXTRA_EXPERIMENTS`` and puts this folder on ``PYTHONPATH``, which the
SparkSession, subprocesses and cluster executors inherit.
"""

import os
import time
from pathlib import Path

import numpy as np

from causal_lab.catalog import EXTRA_EXPERIMENTS_ENV
from causal_lab.experiment import Experiment
from causal_lab.params import Param, non_negative


def _replicate(params, seed):
    time.sleep(params["sleep"])
    rng = np.random.default_rng(seed)
    draws = rng.normal(params["mu"], 1.0, params["n"])
    return {
        "x": float(draws.mean()) + (params["variant"] == "shifted"),
        "first": float(draws[0]),  # the same in both variants: they share random numbers
        "k": int(rng.integers(0, 1000)),
        "hit": bool(draws[0] > params["mu"]),
    }


TOY = Experiment(
    name="_toy",
    description="normal draws; tests the sweep runner",
    source="tests",
    params=(
        Param("mu", float, 0.0, "mean of the draws"),
        Param("n", int, 5, "draws per replication",
              check=lambda n: 1 <= n <= 1000, allowed="1 to 1000"),
        Param("variant", str, "plain", "adds 1 to x when shifted",
              choices=("plain", "shifted")),
        Param("sleep", float, 0.0, "seconds to sleep, to interrupt a sweep midway",
              check=non_negative),
    ),
    grid={
        "smoke": {"mu": [0.0, 1.0]},
        "default": {"mu": [0.0, 1.0, 2.0], "variant": ["plain", "shifted"]},
    },
    reps={"smoke": 3, "default": 4, "paper": 10},
    replicate=_replicate,
    variant_params=("variant",),
)
EXPERIMENTS = (TOY,)

os.environ[EXTRA_EXPERIMENTS_ENV] = __name__
os.environ["PYTHONPATH"] = os.pathsep.join(
    filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
)
