"""Protocol families, one folder each (see ``causal_lab.catalog`` for what a folder provides).

* ``vcube_broadcast``  causal broadcast over VCube trees, with and without aggregation
                       (seed 000, thesis ch. 4);
* ``vcube_ps``         VCube-PS publish/subscribe and its baselines SRPT-S and SRPT-B (thesis ch. 5).
"""
