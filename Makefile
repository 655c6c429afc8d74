# ngc-builder: `make release` builds, validates and pushes the current release to the local
# registry; `make test` runs the tests. Both set up what they need on a fresh Debian machine.
PYTHON  ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
RELEASE ?= releases/26.11.yaml
PYTEST_ARGS ?=

.PHONY: all setup engine slurm test unit integration test-faults lint lock fetch release test-frameworks test-gpu gpu-node bench \
	report help

all: test

$(BIN)/ngc-builder: pyproject.toml
	bash ci/setup-host.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/ngc-builder ## Python venv with ngc-builder and the dev tools

engine: ## a Docker engine and a registry on 127.0.0.1:5000 (installed and started if needed)
	bash ci/setup-engine.sh

slurm: ## a Slurm cluster (a one-node one on this machine installed and started if none answers)
	bash ci/setup-slurm.sh

test: setup engine slurm ## unit + integration tests (real engine, real registry)
	$(BIN)/python -m pytest -m "unit or integration" $(PYTEST_ARGS)

unit: setup ## fast tests, no engine
	$(BIN)/python -m pytest -m unit $(PYTEST_ARGS)

integration: setup engine slurm ## tests against the real engine and registry
	$(BIN)/python -m pytest -m integration $(PYTEST_ARGS)

test-faults: setup engine ## faults on the real engine and registry: signals, full disks, services stopped (root; docs/reliability.md)
	$(BIN)/python -m pytest -m faults tests/faults $(PYTEST_ARGS)

lint: setup ## ruff + mypy
	$(BIN)/ruff check ngc_builder tests frameworks bench
	$(BIN)/mypy ngc_builder tests

lock: setup engine ## re-resolve $(RELEASE)'s lock (review its diff and commit it with the manifest)
	$(BIN)/ngc-builder lock $(RELEASE)

fetch: setup ## download every file of $(RELEASE)'s lock into the package cache (once)
	$(BIN)/ngc-builder fetch $(RELEASE)

release: setup engine ## build, validate and push $(RELEASE) to the local registry
	$(BIN)/ngc-builder release $(RELEASE) $$(bash ci/registry-option.sh)

bench: setup engine ## release speed and registry bytes against a naive script (long; docs/performance.md)
	$(BIN)/python bench/release_vs_naive.py

# GPU nodes: the node's own Python, nothing installed, no venv, no root, no network.
test-gpu: ## T1-T3 tests on this machine's NVIDIA GPU with $(PYTHON) (skipped without a GPU)
	$(PYTHON) -m pytest -p no:cacheprovider -m gpu tests/gpu $(PYTEST_ARGS)

gpu-node: ## T1-T3 figures for PyTorch, JAX and TensorFlow with $(PYTHON) -> build/gpu/
	$(PYTHON) -m ngc_builder.commands.gpunode --out build/gpu

test-frameworks: setup engine ## every row of $(RELEASE) built and validated, nothing pushed (long)
	$(BIN)/ngc-builder release $(RELEASE) --no-push --build-dir build/test-frameworks \
		$$(bash ci/registry-option.sh)
	$(BIN)/ngc-builder report $(RELEASE) --build-dir build/test-frameworks \
		--out build/test-frameworks/support-matrix.md
	$(BIN)/python -m pytest -m frameworks $(PYTEST_ARGS)

report: setup ## docs/support-matrix.md from the last `make release`
	$(BIN)/ngc-builder report $(RELEASE)

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'
