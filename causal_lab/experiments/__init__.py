"""Every registered experiment; importing this package registers them all."""

from causal_lab.experiments.base import REGISTRY, Experiment, Param, ParameterError, get  # noqa: F401
from causal_lab.experiments import vcube_broadcast  # noqa: F401
from causal_lab.experiments import vcube_ps  # noqa: F401
