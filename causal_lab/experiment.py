"""What an experiment is: named parameters, a sweep grid per scale, and a replication function.

An experiment never loops over replications itself: ``causal_lab.sweep`` expands the grid
into (parameter point, replication) tasks, gives each one its own ``SeedSequence`` and calls
``Experiment.replicate`` once per task, locally or on Spark.  A replication returns a flat
dict of metrics (one Parquet row); keeping it flat lets Spark SQL aggregate any column.

Experiments live in their family's ``experiments.py`` (``EXPERIMENTS``, a tuple); the catalog
(``causal_lab.catalog``) finds them, nothing registers itself.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from causal_lab.params import SCALES, Param, ParameterError


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A named simulation experiment.

    ``grid[scale]`` maps swept parameter names to the list of values of that scale; every other
    parameter takes its default.  It may also be a list of such mappings: the union of their
    products, for sensitivities that change one setting at a time around a main grid instead of
    crossing every setting with every other.  ``reps[scale]`` is the number of replications per point.
    ``replicate(params, seed)`` runs one replication and returns a flat dict of metrics
    (str, int, float or bool values); it must be a pure function of its arguments.
    """

    name: str
    description: str
    source: str
    params: tuple[Param, ...]
    grid: Mapping[str, Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]]
    reps: Mapping[str, int]
    replicate: Callable[[Mapping[str, Any], np.random.SeedSequence], dict]
    validate_point: Callable[[Mapping[str, Any]], None] | None = None
    # Parameters that select a protocol variant rather than a scenario.  They are left out of
    # the replication seed, so variants of one scenario see the same random numbers (common
    # random numbers: the same broadcast schedule with and without aggregation, say).
    variant_params: tuple[str, ...] = ()
    # Modules whose code ``replicate`` runs without its own module importing them (found at run
    # time, e.g. the families' adapters of the cross-family benchmark): they count in the code
    # fingerprint of the result cache and in a notebook's dependencies like static imports.
    code_modules: tuple[str, ...] = ()

    def code_files(self) -> set:
        """The ``causal_lab`` source files a replication runs: the module defining ``replicate``,
        the ``code_modules``, and everything they import, directly or not."""
        from causal_lab import codegraph

        modules = (self.replicate.__module__, *self.code_modules)
        return set().union(*(codegraph.imported_files(Path(sys.modules[m].__file__)) for m in modules))

    def scenario(self, point: Mapping[str, Any]) -> dict:
        """What the replication seed depends on: the parameters that are not variants and
        differ from their defaults.

        Leaving defaults out means that adding a parameter (a new named option, at a default
        that reproduces the old behaviour) leaves every existing seed, and so every existing
        result, unchanged."""
        return {k: v for k, v in point.items()
                if k not in self.variant_params and v != self.param(k).default}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(
            f"experiment {self.name!r} has no parameter {name!r}; "
            f"parameters: {', '.join(p.name for p in self.params)}"
        )

    def products(self, scale: str) -> list[Mapping[str, Sequence[Any]]]:
        """The grid of ``scale`` as a list of products (one, unless the grid lists several)."""
        grid = self.grid.get(scale, {})
        return [grid] if isinstance(grid, Mapping) else list(grid)

    def swept(self, scale: str) -> list[str]:
        """The parameters the grid of ``scale`` varies, in order of first appearance."""
        return list(dict.fromkeys(name for product in self.products(scale) for name in product))

    def points(self, scale: str, overrides: Mapping[str, Sequence[Any]] | None = None) -> list[dict]:
        """Expand the grid of ``scale`` (with command-line overrides, applied to every product)
        into validated points in the order of the products; a point an earlier product already
        holds is not repeated (a point listed twice in one product still is, and ``sweep.plan``
        rejects it)."""
        if scale not in SCALES:
            raise ParameterError(f"scale {scale!r} not allowed; allowed: {', '.join(SCALES)}")
        for name in overrides or {}:
            self.param(name)
        points: list[dict] = []
        for product in self.products(scale):
            earlier = {repr(sorted(p.items())) for p in points}
            axes: dict[str, Sequence[Any]] = {p.name: [p.default] for p in self.params}
            axes.update(product)
            axes.update(overrides or {})
            names = list(axes)
            for combo in itertools.product(*(axes[n] for n in names)):
                point = {n: self.param(n).validate(v) for n, v in zip(names, combo)}
                if self.validate_point is not None:
                    self.validate_point(point)
                if repr(sorted(point.items())) not in earlier:
                    points.append(point)
        return points
