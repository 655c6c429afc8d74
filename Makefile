# ngc-builder: `make release` builds, validates and pushes the current release to the local
# registry; `make test` runs the tests. Both set up what they need on a fresh Debian machine.
PYTHON  ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
RELEASE ?= releases/26.12.yaml
PYTEST_ARGS ?=

.PHONY: all setup engine runtime slurm gitlab-ci-local test test-extended unit integration clean-test-leftovers test-faults lint lock fetch release test-frameworks test-gpu gpu-node bench \
	report help deps-update deps-check bench-squashfs

all: test

# The builder's own environment is locked like the images' (docs/testing.md): a new venv
# (--clear: nothing left from an older lock) gets exactly requirements/builder.txt, every file
# hash-checked and only wheels (an sdist's build would fetch unhashed build dependencies),
# then ngc-builder itself with no dependency resolution of its own. A host's pip constraint
# file (a machine-wide torch cap, say) is for its own installs: the lock is the same everywhere.
LOCK := requirements/builder.txt
LOCK_PIP := PIP_CONSTRAINT= $(BIN)/python -m pip install --quiet --disable-pip-version-check

$(BIN)/ngc-builder: pyproject.toml $(LOCK)
	bash ci/setup-host.sh
	$(PYTHON) -m venv --clear $(VENV)
	$(LOCK_PIP) --require-hashes --only-binary=:all: -r $(LOCK)
	$(LOCK_PIP) --no-deps --no-build-isolation -e .
	touch $@

setup: $(BIN)/ngc-builder ## Python venv with exactly requirements/builder.txt and ngc-builder

deps-update: setup ## re-resolve requirements/builder.txt from pyproject.toml (newest allowed) and show what moved
	cp $(LOCK) $(VENV)/builder.txt.before
	PIP_CONSTRAINT= CUSTOM_COMPILE_COMMAND="make deps-update" $(BIN)/pip-compile --quiet --upgrade \
		--extra dev --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
		--no-emit-find-links --output-file $(LOCK) pyproject.toml
	$(BIN)/python ci/check_deps.py diff $(VENV)/builder.txt.before $(LOCK)

deps-check: setup ## the venv holds the lock alone, which matches pyproject.toml and covers every import
	bash ci/check-deps.sh $(VENV)

engine: ## a Docker engine and a registry on 127.0.0.1:5000 (installed and started if needed)
	bash ci/setup-engine.sh

runtime: ## squashfs-tools and a /dev/fuse every user may open: ch-run starts images from a SquashFS (docs/squashfs.md)
	bash ci/setup-runtime.sh

slurm: ## a Slurm cluster (a one-node one on this machine installed and started if none answers)
	bash ci/setup-slurm.sh

# The unit suite runs on every core (pytest-xdist); the integration suite in one process, as
# its tests share the engine, the registry and the package cache.
gitlab-ci-local: ## gitlab-ci-local of ci/gitlab-ci-local/package-lock.json (Node.js, npm, rsync installed if needed): runs the generated GitLab pipeline in the tests
	bash ci/setup-gitlab-ci-local.sh

test: setup engine runtime slurm gitlab-ci-local ## unit + integration tests (real engine, real registry), not the extended ones
	$(BIN)/python -m pytest -m "unit and not extended" -n auto $(PYTEST_ARGS)
	$(BIN)/python -m pytest -m "integration and not extended" $(PYTEST_ARGS)

test-extended: setup engine runtime slurm gitlab-ci-local ## the extended integration tests (docs/testing.md): on demand and before a release
	$(BIN)/python -m pytest -m extended --session-timeout=7200 $(PYTEST_ARGS)

unit: setup ## fast tests, no engine (on every core)
	$(BIN)/python -m pytest -m unit -n auto $(PYTEST_ARGS)

integration: setup engine runtime slurm gitlab-ci-local ## tests against the real engine and registry
	$(BIN)/python -m pytest -m "integration and not extended" $(PYTEST_ARGS)

clean-test-leftovers: setup engine ## throwaway tags and images, and the registries, of test sessions that were killed
	$(BIN)/python -m tests.leftovers

test-faults: setup engine ## faults on the real engine and registry, one path per fault class (root; docs/reliability.md); the rest are in test-extended
	$(BIN)/python -m pytest -m "faults and not extended" tests/faults $(PYTEST_ARGS)

# mypy's cache lives outside the checkout, so a fresh clone (CI) starts from the last run's:
# mypy checks each cached module against its file's content, so an edit is always read again
# (30 s of CI on these 2 cores). One cache per framework folder: each has its own `probe`.
MYPY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ngc-builder/mypy
# mypy reads the probes one framework folder at a time, as the runner loads them: each folder
# has its own top-level `probe` module, so one run over frameworks/ would see it twice.
lint: setup ## ruff + mypy
	$(BIN)/ruff check ngc_builder tests frameworks bench ci
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)/tree ngc_builder tests
	status=0; for dir in $(sort $(dir $(wildcard frameworks/*/probe*.py))); do \
		$(BIN)/mypy --cache-dir $(MYPY_CACHE)/$$(basename $$dir) $$dir || status=1; done; \
		exit $$status

lock: setup engine ## re-resolve $(RELEASE)'s lock (review its diff and commit it with the manifest)
	$(BIN)/ngc-builder lock $(RELEASE)

fetch: setup ## download every file of $(RELEASE)'s lock into the package cache (once)
	$(BIN)/ngc-builder fetch $(RELEASE)

release: setup engine runtime ## build, validate and push $(RELEASE) to the local registry
	$(BIN)/ngc-builder release $(RELEASE) $$(bash ci/registry-option.sh)

bench: setup engine ## release speed and registry bytes against a naive script (long; docs/performance.md)
	$(BIN)/python bench/release_vs_naive.py

bench-squashfs: setup engine runtime ## pytorch's cold and warm start on a node: pull and unpack against its SquashFS (after a release left the image; docs/performance.md)
	$(BIN)/python bench/squashfs_start.py

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
