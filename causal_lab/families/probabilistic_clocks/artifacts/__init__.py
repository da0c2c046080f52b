"""One module per notebook of this family (Figures 5-10 of seed 002): the paper's figure built
from the sweep rows (``table``, ``plot``) and the measurement of every claim of
``data/expected/claims/<notebook>.csv`` (``measure``, judged by ``causal_lab.claims.judge``).
``common`` holds what several of them share: the statistics of spec §7 and the load and
DCS-vs-PC figures, which seed 002 draws twice (bell and random patterns).

These modules only read results; they are left out of the sweep's code fingerprint, so editing a
measurement never invalidates cached simulations.
"""
