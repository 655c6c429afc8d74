#!/usr/bin/env bash
# Make sure a Docker engine and a local registry answer. On Debian/Ubuntu as root, install
# Debian's docker.io and docker-registry when missing and start them in the background,
# logging under the state dir. Safe to run again: whatever already answers is kept.
set -euo pipefail

if [ "$(id -u)" -eq 0 ]; then default_state=/var/lib/ngc-builder
else default_state="${XDG_STATE_HOME:-$HOME/.local/state}/ngc-builder"; fi
STATE_DIR="${NGC_STATE_DIR:-$default_state}"
REGISTRY_ADDR="${NGC_REGISTRY_ADDR:-127.0.0.1:5000}"
mkdir -p "$STATE_DIR"

can_install() { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; }

apt_install() {
    can_install || { echo "setup-engine: need root on Debian/Ubuntu to install $*" >&2; exit 1; }
    if [ ! -f "$STATE_DIR/.apt-updated" ]; then apt-get update -q && touch "$STATE_DIR/.apt-updated"; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local seconds=$1 what=$2; shift 2
    for _ in $(seq "$seconds"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
    echo "setup-engine: $what did not answer within ${seconds}s" >&2
    return 1
}

engine_up() { docker info >/dev/null 2>&1; }

ensure_engine() {
    if engine_up; then echo "setup-engine: Docker engine answers"; return; fi
    [ -n "${DOCKER_HOST:-}" ] && { echo "setup-engine: DOCKER_HOST=$DOCKER_HOST does not answer" >&2; exit 1; }
    command -v dockerd >/dev/null || apt_install docker.io
    command -v docker >/dev/null || apt_install docker.io
    echo "setup-engine: starting dockerd (log: $STATE_DIR/dockerd.log)"
    setsid nohup dockerd >>"$STATE_DIR/dockerd.log" 2>&1 < /dev/null &
    wait_for 90 "dockerd" engine_up || { tail -20 "$STATE_DIR/dockerd.log" >&2; exit 1; }
}

registry_up() { curl -fsS "http://$REGISTRY_ADDR/v2/" >/dev/null 2>&1; }

ensure_registry() {
    if registry_up; then echo "setup-engine: registry answers on $REGISTRY_ADDR"; return; fi
    command -v docker-registry >/dev/null || apt_install docker-registry
    mkdir -p "$STATE_DIR/registry/data"
    cat > "$STATE_DIR/registry/config.yml" <<CONFIG
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $STATE_DIR/registry/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
CONFIG
    echo "setup-engine: starting docker-registry on $REGISTRY_ADDR (log: $STATE_DIR/registry.log)"
    setsid nohup docker-registry serve "$STATE_DIR/registry/config.yml" \
        >>"$STATE_DIR/registry.log" 2>&1 < /dev/null &
    wait_for 30 "docker-registry" registry_up || { tail -20 "$STATE_DIR/registry.log" >&2; exit 1; }
}

command -v curl >/dev/null || apt_install curl
ensure_engine
ensure_registry
