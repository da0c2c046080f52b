"""causal_lab: reproducibility package for research on causal broadcast.

Packages and modules, from the bottom up:

* ``params``, ``experiment``  named checked parameters; what an experiment is.
* ``engine``      the shared simulation engine: event queue, delay model, kernel state, random
                  streams, generic workloads, and the kernel contract (``engine.run``).
* ``topology``    overlays (``topology.vcube``: VCube clusters and spanning trees).
* ``oracle``      the independent causality checker every run passes through.
* ``families``    one folder per protocol family (kernel, workloads, experiments, soak, artifacts).
* ``catalog``     finds every family's experiments and soak protocols.
* ``sweep``       fan-out of (parameter point x replication) over Spark, Parquet results keyed by
                  the code they come from.
* ``claims``      published claims in, verdict rows out.
* ``soak``, ``figures``, ``cli``  the ``causal-lab soak`` / ``make figures`` / ``causal-lab`` tools.
"""

__version__ = "0.1.0"
