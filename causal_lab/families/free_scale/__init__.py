"""The free-scale P2P causal protocol with the IDR and Dependency Sequences baselines (seed 001:
Evropeytsev, López Domínguez, Pomares Hernández, Perez Cruz, "An Efficient Causal Group
Communication Protocol for Free Scale Peer-to-Peer Networks", Applied Sciences 2016; spec
``free_scale_p2p.md``): the worked scenario of Figure 3 (a test) and Figures 4-9 (notebooks 40-45).

* ``kernel``      the protocol (Listings 1-15): internal peers, super peer, external peers, the
                  translation table and its garbage collection, the DS8 model; start here to
                  follow a message from send to delivery;
* ``idr``         the IDR baseline as a protocol of its own (the super peer transparent);
* ``pairs``       (process, SN) dependencies: the external group's integer entries and IDR;
* ``bitvec``      bit vectors with the paper's compaction and the byte sizes of spec §5.4;
* ``buffers``     buffered messages on wake-up lists (spec §3.5), never rescanned;
* ``broadcasts``  a broadcast's copies as one sorted stream of arrivals in the event queue;
* ``channel``     the clamped-Normal delay law with the engine's network parameter names;
* ``workload``    who sends when (70-90 ms gaps, or a fixed total rate) and the windows;
* ``accounting``  byte accountings A and B (amendment 2) and the window sums;
* ``experiments`` the sweeps ``p2p_overhead_<delays>`` and ``p2p_scalability_<delays>``;
* ``soak``, ``bench``  random small configurations for ``causal-lab soak``; ``make bench``;
* ``cross``       the protocol and IDR on the cross-family workload (notebook 90);
* ``artifacts``   one module per notebook (``figure4`` .. ``figure9``) on ``overhead`` and
                  ``scalability``: the paper's figures from the sweep rows, and every claim.
"""
