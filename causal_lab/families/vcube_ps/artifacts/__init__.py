"""One module per notebook of this family: the thesis's figure or table built from the sweep
rows (``table``/``series``, plotted and shown by the notebook) and the measurement of every claim
of ``data/expected/claims/<notebook>.csv`` (``measure``, judged by ``causal_lab.claims.judge``).

These modules only read results; they are left out of the sweep's code fingerprint, so editing a
measurement never invalidates cached simulations.
"""
