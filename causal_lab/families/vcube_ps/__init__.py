"""VCube-PS topic-based publish/subscribe with causal barriers, and its baselines SRPT-S and
SRPT-B (thesis ch. 5): Figures 5.1 and 5.6-5.12, Table 5.1.

* ``kernel``       VCube-PS and SRPT-S on one compiled event loop (Algorithms 3-4); its
                   docstring follows one publication from PUBLISH to delivery;
* ``srpt_broker``  the broker-based SRPT-B;
* ``workload``     the publish/subscribe workloads E1-E8 (publishers, topics, churn);
* ``experiments``  the sweeps ``ps_single`` .. ``ps_brokers``;
* ``soak``         random small configurations for ``causal-lab soak``;
* ``cross``        VCube-PS (one topic, everyone subscribed) on the cross-family workload (notebook 90);
* ``artifacts``    one module per notebook: the thesis's table or figure from the sweep rows,
                   and the measurement of each published claim.
"""
