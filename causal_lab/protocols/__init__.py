"""One module per protocol family; each runs on ``events`` + ``network`` and is checked by ``oracle``."""
