# Edgewise: every command is defined here; CI and humans call the same targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.install-stamp
PACKAGES := $(wildcard packages/*/pyproject.toml)

.PHONY: help install run test lint format typecheck deps check-wheels bench clean

help: ## Show this help
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml $(PACKAGES)
	$(PY) -m pip install --quiet --upgrade 'pip>=25.1'
	$(PY) -m pip install --quiet $(addprefix -e ,$(dir $(PACKAGES))) --group dev
	touch $(STAMP)

install: $(STAMP) ## Create .venv if missing; install both packages (editable) and the dev tools

run: install ## Run the flagship example end to end (SQLite persistence, no server, no API key)
	$(PY) -m examples.graph.flagship

test: install ## Run the whole test suite with branch coverage and the coverage gate
	rm -f .coverage .coverage.*
	$(PY) -m pytest --cov --cov-report=term-missing $(PYTEST_ARGS)

lint: install ## Lint and check formatting with ruff
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install ## Format and auto-fix with ruff
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: install ## Strict type checking of src, tests and examples (mypy)
	$(VENV)/bin/mypy $(wildcard packages/*/src) tests examples benchmarks tools

deps: install ## Check each package's declared dependencies against its imports (deptry)
	set -e; for package in $(dir $(PACKAGES)); do $(VENV)/bin/deptry $$package --config $${package}pyproject.toml; done

check-wheels: install ## Build the wheels, install each (and each extra) in a bare venv, import every public module
	$(PY) tools/check_wheels.py

# Benchmarks run in their own environment: the packages and the anchors, without the dev tools (logfire
# among them, which would turn on tracing for every library measured).
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.install-stamp

$(BENCH_STAMP): pyproject.toml $(PACKAGES)
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BENCH_VENV)/bin/python -m pip install --quiet $(addprefix -e ,$(dir $(PACKAGES))) --group bench
	touch $(BENCH_STAMP)

# The 2.x anchors (pydantic-graph 2.x, pydantic-ai 2.x) cannot share a venv with the 1.x ones: `bench2_*` modules
# run in this second venv, started by `python -m benchmarks` as a subprocess.
BENCH2_VENV := .venv-bench2
BENCH2_STAMP := $(BENCH2_VENV)/.install-stamp

$(BENCH2_STAMP): pyproject.toml $(PACKAGES)
	test -x $(BENCH2_VENV)/bin/python || $(PYTHON) -m venv $(BENCH2_VENV)
	$(BENCH2_VENV)/bin/python -m pip install --quiet --upgrade 'pip>=25.1'
	$(BENCH2_VENV)/bin/python -m pip install --quiet $(addprefix -e ,$(dir $(PACKAGES))) --group bench2
	touch $(BENCH2_STAMP)

bench: $(BENCH_STAMP) $(BENCH2_STAMP) ## Benchmarks against the anchors (bench-only deps), ratios from one run; BENCH=name to pick
	BENCH2_PYTHON=$(BENCH2_VENV)/bin/python $(BENCH_VENV)/bin/python -m benchmarks $(BENCH)

clean: ## Remove the virtual environment and caches
	rm -rf $(VENV) $(BENCH_VENV) $(BENCH2_VENV) .mypy_cache .ruff_cache .pytest_cache .coverage .coverage.*
