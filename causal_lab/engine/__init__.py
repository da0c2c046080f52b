"""The shared simulation engine every protocol family runs on.

* ``jit``       ``njit``, numba's compiler as every kernel uses it (cached, one version per
                function for its ordinary argument types);
* ``events``    the discrete-event queue (a 4-ary heap of numeric rows, inside compiled code);
* ``network``   the packet-switched delay model (sending queues, t_pc, t_t, t_pp, MTU) and the
                one set of network parameter names every family uses;
* ``state``     kernel state structs with named fields, growable tables, free lists, the log;
* ``rng``       SeedSequence-derived named streams and counter-based draws for kernels;
* ``workload``  generic workloads (one-shot broadcast schedules, Zipf topic choice);
* ``run``       the kernel contract: ``simulate(workload, *, net, seed, **options) -> Run``
                and the ``Run`` base with ``verify()``.
"""
