"""One module per notebook of this family: the paper's table or figure built from the sweep
rows (``table``, plotted and shown by the notebook) and the measurement of every claim of
``data/expected/claims/<notebook>.csv`` (``measure``, judged by ``causal_lab.claims.judge``),
and the explanation of the verdicts from the run's own numbers (``reading``, helpers in
``reading.py``).

These modules only read results; they are left out of the sweep's code fingerprint, so editing a
measurement never invalidates cached simulations.
"""
