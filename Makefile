# causal_lab: every target installs what it needs into .venv first (Python 3.11+, Java 17 for Spark).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SCALE  ?= default
SOAK_RUNS ?= 10000
SHARED_SPARK ?= $(CURDIR)/build/spark-driver

# one rule per notebook: build/stamps/<scale>/<notebook>.done, remade when the notebook's cells
# (not its outputs), its claims or a module it uses change (build/deps.mk lists them; see
# causal_lab/figures.py)
# longest first: under -j2 the notebooks that took longest at this scale (data/timings.csv) start
# first, so that no long one starts last and runs alone at the end; one with no recorded time
# starts before them all, as it may be the longest
ALL_NOTEBOOKS := $(wildcard notebooks/*.ipynb)
BY_TIME   := $(shell awk -F, '$$1 == "$(SCALE)" && $$3 != "" {print $$3, "notebooks/" $$2 ".ipynb"}' \
                 data/timings.csv 2>/dev/null | sort -rn | cut -d' ' -f2)
NOTEBOOKS := $(filter-out $(BY_TIME),$(ALL_NOTEBOOKS)) $(filter $(ALL_NOTEBOOKS),$(BY_TIME))
STAMPS    := build/stamps/$(SCALE)
DONE      := $(patsubst notebooks/%.ipynb,$(STAMPS)/%.done,$(NOTEBOOKS))
SOURCES   := $(shell find causal_lab -name '*.py') $(wildcard data/expected/*.csv data/expected/claims/*.csv)

.PHONY: install figures timings test bench soak lab notebooks report clean-smoke

# Debian's Chromium and its driver, for the browser tests (no browser download)
BROWSER := /usr/bin/chromium /usr/bin/chromedriver
SUDO    := $(if $(filter 0,$(shell id -u)),,sudo)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (causal_lab)" >/dev/null
	touch $@

install: $(STAMP)

$(BROWSER) &:
	$(SUDO) apt-get update -q
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends chromium chromium-driver

## make figures [SCALE=smoke|default|paper] [-j2]: run every stale notebook with papermill, then
## print every notebook's last run; fails if one failed (the others still run)
figures: $(DONE)
	@$(BIN)/python -m causal_lab.figures --summary --scale $(SCALE)

# the notebooks of a batch share one Spark driver (causal_lab/spark_driver.py): the first starts
# it, the others attach, and it leaves a minute after the last; SHARED_SPARK= gives each its own
$(STAMPS)/%.done: | $(STAMP) build/kernels.done build/spark-classes.done
	@mkdir -p $(@D)
	CAUSAL_LAB_SHARED_SPARK=$(SHARED_SPARK) \
		$(BIN)/python -m causal_lab.figures --scale $(SCALE) --only $*.ipynb && touch $@ || true

# every family's numba kernels compiled once, two families at a time, before notebooks or tests
# load them from the cache (causal_lab/warm.py); if it fails, kernels compile on first use as before
build/kernels.done: $(SOURCES) | $(STAMP)
	@mkdir -p $(@D)
	$(BIN)/python -m causal_lab.warm && touch $@ || echo "kernel warm-up failed: kernels compile on first use"

# the Spark driver's class archive (causal_lab/spark.py: every Spark start maps it instead of
# loading Spark's classes anew); made again with the environment; if it fails, Spark starts without
build/spark-classes.done: $(STAMP)
	@mkdir -p $(@D)
	$(BIN)/python -m causal_lab.spark && touch $@ || echo "no Spark class archive: Spark starts without it"

build/deps.mk: $(NOTEBOOKS) $(SOURCES) | $(STAMP)
	$(BIN)/python -m causal_lab.figures --deps $@

ifneq ($(filter figures $(STAMPS)/%,$(MAKECMDGOALS)),)
-include build/deps.mk
endif

## make timings [SCALE=default]: every notebook again from an empty result cache (make -j2), then
## their wall times and the batch's into data/timings.csv
timings: $(STAMP)
	rm -rf $(STAMPS)
	cache=$$(mktemp -d); CAUSAL_LAB_RESULTS=$$cache $(MAKE) -j2 figures SCALE=$(SCALE); status=$$?; \
		rm -rf $$cache; $(BIN)/python -m causal_lab.figures --timings --scale $(SCALE); exit $$status

## make test: unit, scenario and Spark tests, a short soak of every protocol, then every notebook
## at smoke scale under nbval, comparing the outputs of the cells marked NBVAL_CHECK_OUTPUT; two
## pytest workers (TEST_JOBS), each test file or notebook kept whole on one (--dist loadscope: a
## notebook's cells run in order in one kernel)
TEST_JOBS ?= 2
test: $(STAMP) $(BROWSER) build/kernels.done build/spark-classes.done
	CAUSAL_LAB_SCALE=smoke $(BIN)/python -m pytest --nbval-lax --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider \
		-n $(TEST_JOBS) --dist loadscope tests notebooks

## make notebooks: re-execute notebooks/ in place at the smoke scale (the outputs nbval compares)
notebooks: $(STAMP)
	$(BIN)/python -m causal_lab.figures --smoke-outputs

## make bench: engine and protocol throughput (medians of several runs)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

## make soak [SOAK_RUNS=10000]: random small configurations of every protocol through verify()
soak: $(STAMP)
	$(BIN)/causal-lab soak --runs $(SOAK_RUNS)

## make report: the reproduction report under report/ (index.html), from the committed outputs
report: $(STAMP)
	$(BIN)/python -m causal_lab.report

## make lab: JupyterLab on notebooks/ (also as root, as in most reviewers' containers)
lab: $(STAMP) build/spark-classes.done
	$(BIN)/jupyter lab notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

clean-smoke:
	rm -rf build/smoke build/stamps/smoke build/status/smoke
