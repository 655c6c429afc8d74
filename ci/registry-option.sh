#!/usr/bin/env bash
# Prints `--registry ADDR` when ci/setup-engine.sh had to put ngc-builder's registry on another
# address (its default was held by a registry that wants credentials); nothing otherwise.
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then default_state=/var/lib/ngc-builder
else default_state="${XDG_STATE_HOME:-$HOME/.local/state}/ngc-builder"; fi
file="${NGC_STATE_DIR:-$default_state}/registry-address"
if [ -s "$file" ]; then echo "--registry $(cat "$file")"; fi
