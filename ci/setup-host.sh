#!/usr/bin/env bash
# Host tools ngc-builder needs on a fresh Debian/Ubuntu machine: Python with venv,
# debootstrap and mmdebstrap (to bootstrap OS bases, the latter from a lock), tar, curl and
# git, a headless browser for the catalog's tests and screenshots (chromium and its
# chromium-driver), and shellcheck (actionlint reads the generated workflows' scripts with
# it). Does nothing when all are there.
set -euo pipefail

missing=()
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3 python3-venv)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)  # reproducible OS bases from a lock
command -v curl >/dev/null || missing+=(curl)
command -v git >/dev/null || missing+=(git)
command -v tar >/dev/null || missing+=(tar)
command -v chromium >/dev/null || missing+=(chromium)  # the catalog in a real browser
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v shellcheck >/dev/null || missing+=(shellcheck)  # actionlint checks run: scripts with it
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup-host: please install: ${missing[*]} (needs root on Debian/Ubuntu)" >&2
    exit 1
fi
echo "setup-host: installing ${missing[*]}"
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
