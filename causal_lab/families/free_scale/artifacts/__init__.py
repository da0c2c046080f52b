"""One module per notebook of the free-scale family (``figure4`` .. ``figure9``), on two shared
ones: ``overhead`` (Figures 4-6, overhead versus N) and ``scalability`` (Figures 7-9, fixed total
rate).  Each builds the paper's figure from the sweep rows and measures every claim of
``data/expected/claims/<notebook>.csv`` (judged by ``causal_lab.claims.judge``).

These modules only read results; they are left out of the sweep's code fingerprint, so editing a
measurement never invalidates cached simulations.
"""
