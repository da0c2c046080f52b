"""Paper-versus-ours verdict rows, and the published numbers they compare against.

Published numbers live in ``data/expected/*.csv`` (each row names its source: seed file and
section) and are only ever *read* here.  A notebook turns its comparisons into rows with the
columns below and writes them to ``data/verdicts/<notebook>.csv``; ``causal-lab verdicts``
concatenates them all.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from causal_lab import paths

COLUMNS = ("seed", "artifact", "claim", "paper", "ours", "tolerance", "verdict")
PASS, DEVIATES, NOT_RUN = "PASS", "DEVIATES", "NOT_RUN"


def expected(name: str) -> pd.DataFrame:
    """A published table from ``data/expected/<name>.csv`` (must carry a ``source`` column)."""
    table = pd.read_csv(paths.expected_dir() / f"{name}.csv")
    if "source" not in table.columns:
        raise ValueError(f"data/expected/{name}.csv has no source column")
    return table


def row(seed: str, artifact: str, claim: str, paper, ours, tolerance: str, ok: bool | None) -> dict:
    """One verdict; ``ok=None`` means the check could not run at this scale (NOT_RUN)."""
    verdict = NOT_RUN if ok is None else (PASS if ok else DEVIATES)
    return dict(zip(COLUMNS, (seed, artifact, claim, str(paper), str(ours), tolerance, verdict)))


def write(name: str, rows: list[dict], scale: str) -> pd.DataFrame:
    """Write ``<verdicts dir of scale>/<name>.csv`` atomically and return the table."""
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    bad = set(table["verdict"]) - {PASS, DEVIATES, NOT_RUN}
    if bad:
        raise ValueError(f"unknown verdicts {bad}")
    directory = paths.verdicts_dir(scale)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        table.to_csv(f, index=False)
    os.replace(tmp, directory / f"{name}.csv")
    return table


def load_all(directory: Path | None = None) -> pd.DataFrame:
    directory = directory or paths.verdicts_dir("default")
    files = sorted(directory.glob("*.csv"))
    if not files:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat([pd.read_csv(f, dtype=str) for f in files], ignore_index=True)[list(COLUMNS)]
