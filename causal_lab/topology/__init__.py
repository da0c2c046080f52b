"""Overlay topologies, one module each: ``vcube`` (hypercube clusters and the spanning trees
built on them, seed 000 and thesis ch. 2, 4, 5).  A family that needs another overlay adds its
module here."""
