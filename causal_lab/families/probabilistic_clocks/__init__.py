"""Mostéfaoui-Weiss probabilistic clocks and the Dynamic Clock Set (seed 002): clocks, causal
broadcast, DCS rounds and load balancing (Figures 5-10).

* ``clocks``       the entry map f, its hashing, the closed-form error model (spec §1, Appendix
                   A) and the reference comparison and update rules of PC and DCS clocks;
* ``workload``     the load patterns (the spec's bell and random reconstructions, the authors'
                   generators) and the send models that turn a load into broadcasts;
* ``policy``       the DCS size policies (the spec's model-based one, formula_only, the
                   authors' threshold table) as tables the kernel reads;
* ``copies``       the network copies of a broadcast: delays, sorting, the arrival heap;
* ``kernel``       the compiled protocol: DCS causal broadcast (Algorithm 2) with check_expand,
                   spontaneous expansion, deactivation and remove rounds exchanged as messages,
                   load balancing; a probabilistic clock (Algorithm 1) is its one-component
                   case.  Start here to follow a message from broadcast to delivery;
* ``shadow``       Figure 5's evaluator: one exact causal execution judging every clock size's
                   delivery test at once (spec §8.4), checked against direct runs;
* ``experiments``  the sweeps ``load_pattern``, ``pc_clock_size``, ``dcs_vs_pc``, ``dcs_balancing``;
* ``soak``         random small configurations of both protocols for ``causal-lab soak``;
* ``bench``        receptions per CPU-second and the paper-scale estimate for ``make bench``;
* ``cross``        PC and DCS on the cross-family workload (notebook 90);
* ``artifacts``    one module per notebook (50-55): the figure from the sweep rows and the
                   measurement of each published claim.

Errors are always the oracle's count (``causal_lab.oracle``, spec §4.2 error_strict), never the
protocol's own opinion.
"""
