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

# The suite runs on every core (pytest-xdist): about 7 minutes on 2 cores in all (venv, ruff
# and pytest), up to 9:21 at a shared machine's slow hours. On one 2-core machine on 7 December,
# 16 clean clones of the last commits took 6:48 to 7:58 in all, and three more 8:03 to 9:21
# while the machine ran slow (the tests that had not changed took 1.2-1.8x as long). CI ran
# the last four landings in 429 to 468 s. The run is CPU-bound (95% of both cores); about 140
# of its 700-830 CPU seconds are cold caches (numba's compiles, bytecode), which a second run
# finds in build/: about 5:45 of pytest warm.
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
