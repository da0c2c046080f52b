# causal_lab: every target installs what it needs into .venv first (Python 3.11+, Java 17 for Spark).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SCALE  ?= default

.PHONY: install figures test bench lab clean-smoke

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (causal_lab)" >/dev/null
	touch $@

install: $(STAMP)

## make figures [SCALE=smoke|default|paper]: run every notebook with papermill
figures: $(STAMP)
	$(BIN)/python -m causal_lab.figures --scale $(SCALE)

## make test: unit, scenario and Spark tests, then every notebook at smoke scale under nbval
test: $(STAMP)
	CAUSAL_LAB_SCALE=smoke $(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider tests notebooks

## make bench: engine and protocol throughput (medians of several runs)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks

clean-smoke:
	rm -rf build/smoke
