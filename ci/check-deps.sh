#!/usr/bin/env bash
# The builder's lock, alone: the venv `make setup` made (new, --clear, requirements/builder.txt
# hash-checked and wheels only, then ngc-builder with no resolution of its own) is held by
# ci/check_deps.py against pyproject.toml, its own contents (nothing the lock lacks) and every
# import in the tree (docs/testing.md). On a fresh clone that venv is new: a second one made
# here would be the same install again (a minute of CI).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: ci/check-deps.sh VENV (the venv make setup made)}
"$venv/bin/python" -m pip check
"$venv/bin/python" ci/check_deps.py check
