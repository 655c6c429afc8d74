#!/usr/bin/env bash
# The builder's lock, alone: a new venv gets requirements/builder.txt (hash-checked, wheels
# only) and ngc-builder with no resolution of its own, then ci/check_deps.py holds it against
# pyproject.toml, the venv's contents and every import in the tree (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export PIP_CONSTRAINT=  # a host-wide constraint file is not the lock's (Makefile)
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --require-hashes --only-binary=:all: -r requirements/builder.txt
# setuptools warns about any editable install: shown only when the install fails
"$scratch/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --no-build-isolation --no-cache-dir -e . >"$scratch/install.log" 2>&1 ||
    { cat "$scratch/install.log"; exit 1; }
"$scratch/venv/bin/python" -m pip check
"$scratch/venv/bin/python" ci/check_deps.py check
