# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv with the Python named in .python-version (once) and
# install the package in editable mode with its test tools. The install is
# uv's (pip-installed into the venv first): it resolves the same versions as
# pip in about a seventh of the time, its cache in the build tree.

PYTHON_VERSION := $(shell cat .python-version)
PYTHON ?= python$(PYTHON_VERSION)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
BUILD := build

# Caches and outputs stay in the build tree, never in the home directory.
export PYTENSOR_FLAGS := base_compiledir=$(CURDIR)/$(BUILD)/pytensor
export MPLBACKEND := Agg
export MPLCONFIGDIR := $(CURDIR)/$(BUILD)/matplotlib
export XDG_CACHE_HOME := $(CURDIR)/$(BUILD)/cache
export NUMBA_CACHE_DIR := $(CURDIR)/$(BUILD)/numba
export IPYTHONDIR := $(CURDIR)/$(BUILD)/ipython
export JUPYTER_RUNTIME_DIR := $(CURDIR)/$(BUILD)/jupyter/runtime
export JUPYTER_DATA_DIR := $(CURDIR)/$(BUILD)/jupyter/data
export JUPYTER_CONFIG_DIR := $(CURDIR)/$(BUILD)/jupyter/config
# Compiled bytecode is cached in the build tree too. An environment that forbids writing it
# (PYTHONDONTWRITEBYTECODE, set on some CI machines) makes every process - each test's
# subprocess, notebook kernel and docs page - compile all it imports from source: pandas,
# xarray and scipy.special took 3.0 s to import that way here against 0.9 s from the cache.
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(CURDIR)/$(BUILD)/pycache
# One OpenBLAS thread per process: the suite runs a process per core, and a BLAS call that
# hands work to a thread whose core is busy waits for it - a dot product of 33 000 floats
# took 6.6 ms instead of 7 us on this 2-core machine under load.
export OPENBLAS_NUM_THREADS := 1

.PHONY: venv demo test lint clean docs

venv: $(INSTALLED)

$(INSTALLED): pyproject.toml .python-version
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python $(PYTHON_VERSION)" >&2; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/python -m uv pip install --quiet --python $(BIN)/python --upgrade pip -e '.[dev]'
	@touch $@

demo: $(INSTALLED)
	$(BIN)/adversary demo --out $(BUILD)/demo

# The suite runs on every core (pytest-xdist): 7 to 10 minutes on 2 cores, by machine and by
# hour. On one 2-core machine on 7 December, clean clones of be4da07 took 7:01, 7:10 and 9:06
# of pytest (7:18 to 9:21 in all), run in turn with a6d549d, which took 9:40 and 10:15; the
# tests that changed least took up to 1.8x as long in the slow runs as in the fast ones. CI
# ran be4da07 in 429 s in all. Earlier: 8036669 6:49 on one machine and 10:17 on one whose CPU
# seconds were 1.35x as long (benchmarks/exact_generic.py); 7:57 before one OpenBLAS thread per
# process and the compiled grid sums, 9:53 before the compiled exact sampler, 14:22 before
# bytecode was cached. About 150 to 300 CPU seconds of a fresh clone's run are cold caches
# (numba's compiles about 110 s, the tiered kernels' Python VM, bytecode), which a second run
# finds in build/: be4da07 took 5:44 of pytest warm.
test: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto

# The documentation site (docs/) into build/docs; warnings are errors.
docs: $(INSTALLED)
	$(BIN)/sphinx-build -W --keep-going -j auto -b html docs $(BUILD)/docs

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(BUILD) .pytest_cache .hypothesis
