"""Seed 004's artifacts, one module per notebook: the paper's table or figure from the sweep
rows, and the measurement of each published claim (``measure``).

* ``table1``  Table 1, notebook 60_ed_table1: errors without detector / left by Mostéfaoui's /
              with the hash detector;
* ``figure1`` Figure 1, notebook 61_ed_figure1: request rate vs load for M = 20, 25, 50;
* ``table2``  Table 2, notebook 62_ed_table2: request rate at 110 msg/s, N = 500 ... 5000;
* ``common``  what the three share: request rates with intervals that account for requests
              coming in clusters (Garwood intervals), the verdicts as sentences.
"""
