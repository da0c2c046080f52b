"""Shared look and saving of the figures the notebooks write."""

from __future__ import annotations

import sys

import matplotlib

if "ipykernel" not in sys.modules:  # scripts and tests draw into files; a notebook shows them inline
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from causal_lab import paths  # noqa: E402

OURS = "ours"
PAPER = "paper"
PALETTE = {OURS: "#1f77b4", PAPER: "#d62728"}


def style() -> None:
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")


def save(fig, name: str, scale: str):
    """Save ``fig`` as ``<figures dir of scale>/<name>.png`` without timestamps (diff-stable)."""
    path = paths.figures_dir(scale) / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})
    return path
