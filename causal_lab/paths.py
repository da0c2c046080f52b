"""Where things live in the checkout.

Results of the committed scales go to tracked folders: the default scale to ``figures/``,
``papermill_runs/`` and ``data/verdicts/``; the paper scale to a ``paper/`` folder inside each,
so that both are committed side by side.  Smoke runs (CI, nbval) write to the ignored
``build/smoke/`` so that running the tests never changes committed outputs.
"""

from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    """The checkout holding this package (the folder with pyproject.toml), else the cwd."""
    for folder in Path(__file__).resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    return Path.cwd()


def scale_root(scale: str) -> Path:
    """Where a scale's outputs go: the checkout, or the ignored build/smoke/ for smoke runs."""
    return repo_root() / "build" / "smoke" if scale == "smoke" else repo_root()


def output_folder(scale: str, name: str) -> Path:
    """The folder ``name`` (figures, papermill_runs, data/verdicts) of ``scale``'s outputs."""
    path = scale_root(scale) / name
    if scale == "paper":
        path = path / "paper"
    path.mkdir(parents=True, exist_ok=True)
    return path


def figures_dir(scale: str) -> Path:
    return output_folder(scale, "figures")


def verdicts_dir(scale: str) -> Path:
    return output_folder(scale, "data/verdicts")


def timings_file() -> Path:
    """Measured wall time of every notebook at each scale (``figures --timings`` writes it)."""
    return repo_root() / "data" / "timings.csv"


def expected_dir() -> Path:
    return repo_root() / "data" / "expected"


def results_dir(experiment_name: str) -> Path:
    """The result cache of an experiment: ``data/results/``, or ``$CAUSAL_LAB_RESULTS`` (``make
    timings`` measures a batch from an empty cache without throwing the user's away)."""
    root = os.environ.get("CAUSAL_LAB_RESULTS")
    return (Path(root) if root else repo_root() / "data" / "results") / experiment_name
