#!/usr/bin/env bash
# gitlab-ci-local, which runs the generated GitLab pipeline in the tests (docs/ci.md): Node.js,
# npm and rsync (it copies the checkout with rsync, shell jobs too) from Debian's packages when
# missing, then the exact versions of ci/gitlab-ci-local/package-lock.json, each package
# checked against the lock's integrity hash (`npm ci`), no install scripts run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tool="$here/gitlab-ci-local/node_modules/.bin/gitlab-ci-local"

missing=()
for command in node npm rsync; do
    command -v "$command" >/dev/null || missing+=("$command")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
        echo "setup-gitlab-ci-local: need root on Debian/Ubuntu to install ${missing[*]}" >&2
        exit 1
    fi
    packages=(rsync)
    command -v node >/dev/null || packages+=(nodejs)
    command -v npm >/dev/null || packages+=(npm)
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
fi
# gitlab-ci-local 4.64 needs Node 18 or later (Debian 12 ships 18).
major="$(node --version | sed 's/^v\([0-9]*\).*/\1/')"
if [ "$major" -lt 18 ]; then
    echo "setup-gitlab-ci-local: Node $(node --version) is older than 18" >&2
    exit 1
fi
if [ ! -x "$tool" ] || [ "$here/gitlab-ci-local/package-lock.json" -nt "$tool" ]; then
    npm ci --prefix "$here/gitlab-ci-local" --ignore-scripts --no-audit --no-fund --loglevel=error
    touch "$tool"
fi
"$tool" --version
