"""Every protocol family, its experiments and its soak protocols, found by looking, not by a list.

A *family* is a folder under ``causal_lab/families/`` (a subpackage).  It plugs in by convention,
touching no shared module:

* ``experiments.py`` defines ``EXPERIMENTS``, a tuple of ``causal_lab.experiment.Experiment``;
* ``soak.py`` (optional) defines ``PROTOCOLS``, a tuple of ``causal_lab.soak.Protocol``;
* ``bench.py`` (optional) defines ``BENCHMARKS``, functions of the repeat count that return
  ``make bench`` result rows (``benchmarks/bench.py``);
* ``cross.py`` (optional) defines ``PROTOCOLS``, a tuple of ``causal_lab.cross_family.Protocol``:
  the family's protocols on the common workload of the cross-family benchmark, whose experiment
  ``cross_family`` is built here from every family's contribution (``cross_protocols``);
* ``artifacts/`` (optional) holds one module per paper artifact group, used by its notebook.

Modules named in the environment variable ``CAUSAL_LAB_EXTRA_EXPERIMENTS`` (comma-separated,
importable, e.g. through ``PYTHONPATH``) are searched too: each defines ``EXPERIMENTS``.  That is
how the tests' toy experiment, or a user's own, runs through the same sweep machinery; Spark
workers read the variable from their environment, which ``causal_lab.spark`` forwards.

Nothing here is imported by a family, and a family imports nothing from here: the import graph
has no cycle, hidden or not.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from types import ModuleType

from causal_lab import cross_family
from causal_lab import families as _families_package
from causal_lab.experiment import Experiment
from causal_lab.params import ParameterError

EXTRA_EXPERIMENTS_ENV = "CAUSAL_LAB_EXTRA_EXPERIMENTS"


def families() -> list[str]:
    """Names of the family folders, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(_families_package.__path__) if m.ispkg)


def family_module(family: str, module: str) -> ModuleType | None:
    """``causal_lab.families.<family>.<module>``, or None if the family has no such module."""
    if family not in families():
        raise ParameterError(f"unknown family {family!r}; families: {', '.join(families())}")
    name = f"{_families_package.__name__}.{family}.{module}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:
            return None
        raise


def extra_modules() -> list[str]:
    return [m.strip() for m in os.environ.get(EXTRA_EXPERIMENTS_ENV, "").split(",") if m.strip()]


def experiments() -> dict[str, Experiment]:
    """Every experiment of every family (and of the extra modules), and the cross-family
    benchmark built from the families' ``cross.py``, by name."""
    modules = [family_module(f, "experiments") for f in families()]
    modules += [importlib.import_module(m) for m in extra_modules()]
    every = [e for module in modules for e in (getattr(module, "EXPERIMENTS", ()) if module else ())]
    found: dict[str, Experiment] = {}
    for experiment in every + [cross_family.experiment(tuple(cross_protocols()))]:
        if experiment.name in found:
            raise ValueError(f"experiment {experiment.name!r} defined twice")
        found[experiment.name] = experiment
    return found


def get(name: str) -> Experiment:
    """The experiment called ``name``; a ``ParameterError`` listing the others if none is."""
    found = experiments()
    try:
        return found[name]
    except KeyError:
        raise ParameterError(
            f"unknown experiment {name!r}; available: {', '.join(sorted(found))}"
        ) from None


def protocols(family: str | None = None) -> list:
    """The soak protocols of one family, or of every family."""
    names = [family] if family else families()
    return [p for f in names for p in getattr(family_module(f, "soak"), "PROTOCOLS", ())]


def cross_protocols() -> list:
    """Every family's protocols of the cross-family benchmark, in family order."""
    return [p for f in families() for p in getattr(family_module(f, "cross"), "PROTOCOLS", ())]
