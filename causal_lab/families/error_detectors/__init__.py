"""Error detectors for probabilistic causal broadcast (seed 004, "Improving accuracy of
probabilistic-based causal broadcast"; spec ``probabilistic_clocks.md`` §3-§8 and its amendments):
the Mostéfaoui-Weiss detector, the hash detector of Algorithm 3 with dependency requests
(Algorithm 2), and the paper's Table 1, Figure 1 and Table 2.

Modules:

* ``workload``      who broadcasts when: every process periodically with jitter (the authors'
                    send model, amendment 4), drawn before the run so every variant of a
                    replication sees the same instants;
* ``kernel``        the compiled event loop: Algorithm 1 (probabilistic clocks, counting
                    semantics), the detectors (Mostéfaoui-Weiss in both polarities, the hash
                    detector in the authors' mode and in our residual-guided mode), REQ / RSP as
                    real messages through the delay model, serial or parallel recovery, shadow
                    evaluation, hash collisions counted; the ``Run`` with its observables;
* ``ground_truth``  the oracle's verdicts on a run (``causal_lab.oracle`` with per-delivery
                    flags): errors, what each detector caught, and each REQ needed or a false alarm;
* ``experiments``   ``ed_table1``, ``ed_figure1``, ``ed_table2`` (parameters, grids per scale);
* ``artifacts``     one module per notebook (60_ed_table1, 61_ed_figure1, 62_ed_table2): tables,
                    plots and the measurement of every claim;
* ``soak``          random small configurations of every protocol variant;
* ``cross``         the plain clock with each detector on the cross-family workload (notebook 90);
* ``bench``         the Table 1 configuration with and without the hash detector, and the cost of
                    a hash test against a plain delivery check.

The entry map, the hashing primitives and the delay constants come from
``causal_lab.families.probabilistic_clocks.clocks`` (shared with the DCS family).
"""
