"""Named, typed, checked parameters: what every experiment and the network model declare.

A ``Param`` knows its type, default, allowed values and a one-line doc; parsing and validating
happen before any work starts, so a bad value is a ``ParameterError`` naming the parameter and
what it allows (the command line turns it into exit code 2).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

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
