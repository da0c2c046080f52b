"""Mostéfaoui-Weiss probabilistic clocks and the Dynamic Clock Set (seed 002): clocks, causal
broadcast, DCS rounds and load balancing (Figures 5-10).

* ``clocks``  the entry map f, its hashing and the closed-form error model (spec §1, Appendix A).
"""
