"""Causal broadcast over VCube spanning trees, with and without aggregation (seed 000, thesis
ch. 4): Tables 1-3 and Figures 1 and 6-11 of seed 000, thesis Figure 3.1.

* ``kernel``           the compiled protocol (vector clocks, Birman compression, Algorithm 2);
                       start here to follow a message from broadcast to delivery;
* ``reference_simpy``  the same network and protocol written plainly in SimPy (differential tests);
* ``experiments``      the sweeps ``vcube_broadcast`` and ``vcube_pairs``;
* ``soak``             random small configurations for ``causal-lab soak``;
* ``cross``            VCube with and without aggregation on the cross-family workload (notebook 90);
* ``artifacts``        one module per notebook: the paper's table or figure from the sweep rows,
                       and the measurement of each published claim.
"""
