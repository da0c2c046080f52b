"""Where things live in the checkout.

Results of the committed scales (``default``, and ``paper`` when a reviewer runs it) go to the
tracked folders ``figures/`` and ``data/verdicts/``.  Smoke runs (CI, nbval) write to the
ignored ``build/smoke/`` so that running the tests never changes committed outputs.
"""

from __future__ import annotations

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


def figures_dir(scale: str) -> Path:
    path = scale_root(scale) / "figures"
    path.mkdir(parents=True, exist_ok=True)
    return path


def verdicts_dir(scale: str) -> Path:
    path = scale_root(scale) / "data" / "verdicts"
    path.mkdir(parents=True, exist_ok=True)
    return path


def expected_dir() -> Path:
    return repo_root() / "data" / "expected"


def results_dir(experiment_name: str) -> Path:
    return repo_root() / "data" / "results" / experiment_name
