"""Protocol families, one folder each; ``causal_lab.catalog`` finds them by looking here, so a
new family is a new folder and nothing in this file or any other shared module changes.  Each
folder's ``__init__`` says which papers it reproduces and what its modules hold."""
