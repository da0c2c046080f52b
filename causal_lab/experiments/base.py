"""What an experiment is: named parameters, a sweep grid per scale, and a replication function.

An experiment never loops over replications itself: ``causal_lab.sweep`` expands the grid
into (parameter point, replication) tasks, gives each one its own ``SeedSequence`` and calls
``Experiment.replicate`` once per task, locally or on Spark.  A replication returns a flat
dict of metrics (one Parquet row); keeping it flat lets Spark SQL aggregate any column.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

SCALES = ("smoke", "default", "paper")


class ParameterError(ValueError):
    """A bad experiment name, parameter name, type or value; raised before any work starts."""


@dataclasses.dataclass(frozen=True)
class Param:
    """One named parameter with its type, default and the rule its values must satisfy."""

    name: str
    type: type
    default: Any
    doc: str
    choices: tuple | None = None
    check: Callable[[Any], bool] | None = None
    allowed: str = ""  # human-readable description of what ``check`` accepts

    def parse(self, text: str) -> Any:
        """Parse a command-line string into this parameter's type."""
        try:
            if self.type is bool:
                low = text.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    value: Any = True
                elif low in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError(text)
            else:
                value = self.type(text)
        except ValueError:
            raise ParameterError(
                f"parameter {self.name!r}: {text!r} is not a valid {self.type.__name__}"
                f"{'; allowed: ' + self.describe_allowed() if self.describe_allowed() else ''}"
            ) from None
        return self.validate(value)

    def validate(self, value: Any) -> Any:
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            raise ParameterError(
                f"parameter {self.name!r}: {value!r} is not a {self.type.__name__}"
            )
        if self.choices is not None and value not in self.choices:
            raise ParameterError(
                f"parameter {self.name!r}: {value!r} not allowed; allowed: {self.describe_allowed()}"
            )
        if self.check is not None and not self.check(value):
            raise ParameterError(
                f"parameter {self.name!r}: {value!r} not allowed; allowed: {self.describe_allowed()}"
            )
        return value

    def describe_allowed(self) -> str:
        if self.choices is not None:
            return ", ".join(map(str, self.choices))
        return self.allowed


def power_of_two(lo: int = 2, hi: int = 1 << 16) -> tuple[Callable[[int], bool], str]:
    """A check and its description for VCube sizes."""
    return (lambda n: lo <= n <= hi and n & (n - 1) == 0), f"powers of two from {lo} to {hi}"


def positive(x: float) -> bool:
    return x > 0 and math.isfinite(x)


def non_negative(x: float) -> bool:
    return x >= 0 and math.isfinite(x)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A named simulation experiment.

    ``grid[scale]`` maps swept parameter names to the list of values of that scale; every other
    parameter takes its default.  ``reps[scale]`` is the number of replications per point.
    ``replicate(params, seed)`` runs one replication and returns a flat dict of metrics
    (str, int, float or bool values); it must be a pure function of its arguments.
    """

    name: str
    description: str
    source: str
    params: tuple[Param, ...]
    grid: Mapping[str, Mapping[str, Sequence[Any]]]
    reps: Mapping[str, int]
    replicate: Callable[[Mapping[str, Any], np.random.SeedSequence], dict]
    validate_point: Callable[[Mapping[str, Any]], None] | None = None
    # Parameters that select a protocol variant rather than a scenario.  They are left out of
    # the replication seed, so variants of one scenario see the same random numbers (common
    # random numbers: the same broadcast schedule with and without aggregation, say).
    variant_params: tuple[str, ...] = ()
    # Bumped when ``replicate`` changes what it returns (a new metric, a fixed bug): the
    # revision is part of every task key, so cached rows of the older code are not reused.
    revision: int = 0

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(
            f"experiment {self.name!r} has no parameter {name!r}; "
            f"parameters: {', '.join(p.name for p in self.params)}"
        )

    def points(self, scale: str, overrides: Mapping[str, Sequence[Any]] | None = None) -> list[dict]:
        """Expand the grid of ``scale`` (with command-line overrides) into validated points."""
        if scale not in SCALES:
            raise ParameterError(f"scale {scale!r} not allowed; allowed: {', '.join(SCALES)}")
        axes: dict[str, Sequence[Any]] = {p.name: [p.default] for p in self.params}
        axes.update(self.grid.get(scale, {}))
        for name, values in (overrides or {}).items():
            self.param(name)
            axes[name] = values
        names = list(axes)
        points = []
        for combo in itertools.product(*(axes[n] for n in names)):
            point = {n: self.param(n).validate(v) for n, v in zip(names, combo)}
            if self.validate_point is not None:
                self.validate_point(point)
            points.append(point)
        return points


REGISTRY: dict[str, Experiment] = {}


def register(experiment: Experiment) -> Experiment:
    if experiment.name in REGISTRY:
        raise ValueError(f"experiment {experiment.name!r} registered twice")
    REGISTRY[experiment.name] = experiment
    return experiment


def get(name: str) -> Experiment:
    from causal_lab import experiments  # noqa: F401  (registers every experiment)

    try:
        return REGISTRY[name]
    except KeyError:
        raise ParameterError(
            f"unknown experiment {name!r}; available: {', '.join(sorted(REGISTRY))}"
        ) from None
