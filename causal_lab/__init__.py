"""causal_lab: reproducibility package for research on causal broadcast.

Modules, from the bottom up:

* ``topology``   VCube clusters and the spanning trees built on them.
* ``rng``        reproducible random streams (SeedSequence keys, counter-based draws).
* ``events``     the discrete-event queue shared by every protocol.
* ``network``    the packet-switched delay model (sending queues, t_pc, t_t, t_pp, MTU).
* ``oracle``     the independent causality checker every run passes through.
* ``protocols``  one module per protocol family.
* ``experiments`` named, parameterised experiments (one per paper artifact group).
* ``sweep``      fan-out of (parameter point x replication) over Spark, Parquet results.
* ``verdicts``   paper-versus-ours comparison rows.
"""

__version__ = "0.1.0"
