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
systemd_runs() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null; }

ensure_engine() {
    if engine_up; then echo "setup-engine: Docker engine answers"; return; fi
    [ -n "${DOCKER_HOST:-}" ] && { echo "setup-engine: DOCKER_HOST=$DOCKER_HOST does not answer" >&2; exit 1; }
    command -v dockerd >/dev/null || apt_install docker.io
    command -v docker >/dev/null || apt_install docker.io
    if systemd_runs && systemctl cat docker.service >/dev/null 2>&1; then
        # A systemd host has the packaged docker.service: use it, never a second dockerd.
        echo "setup-engine: starting the system's docker.service (journalctl -u docker)"
        systemctl start docker.service
    else
        echo "setup-engine: starting dockerd (log: $STATE_DIR/dockerd.log)"
        setsid nohup dockerd >>"$STATE_DIR/dockerd.log" 2>&1 < /dev/null &
    fi
    wait_for 90 "dockerd" engine_up || { tail -20 "$STATE_DIR/dockerd.log" >&2 || true; exit 1; }
}

# The HTTP status of ADDR's /v2/: 200 an anonymous registry, 401 one that wants credentials,
# 000 nothing listening.
registry_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$1/v2/" 2>/dev/null || true; }
registry_up() { [ "$(registry_status "$REGISTRY_ADDR")" = 200 ]; }
ADDRESS_FILE="$STATE_DIR/registry-address"  # where `make release` and the tests look

ensure_registry() {
    if [ -f "$ADDRESS_FILE" ] && [ "$(registry_status "$(cat "$ADDRESS_FILE")")" = 200 ]; then
        echo "setup-engine: ngc-builder's registry answers on $(cat "$ADDRESS_FILE") ($ADDRESS_FILE)"
        return
    fi
    rm -f "$ADDRESS_FILE"
    case "$(registry_status "$REGISTRY_ADDR")" in
        200) echo "setup-engine: registry answers on $REGISTRY_ADDR"; return ;;
        000) start_registry "$REGISTRY_ADDR" ;;
        *) move_aside ;;
    esac
}

move_aside() {
    # Someone else's registry holds the address and wants credentials: on a systemd host,
    # installing Debian's docker-registry starts its packaged service (htpasswd, :5000, all
    # interfaces). It is left alone: ngc-builder's own registry goes on the next free port
    # and `make release` / `make test` are pointed at it.
    local host=${REGISTRY_ADDR%:*} port=${REGISTRY_ADDR##*:} next
    for next in $(seq $((port + 1)) $((port + 20))); do
        [ "$(registry_status "$host:$next")" = 000 ] || continue
        echo "setup-engine: $REGISTRY_ADDR is held by a registry that wants credentials" \
             "(HTTP $(registry_status "$REGISTRY_ADDR"), e.g. Debian's packaged docker-registry service);" \
             "left it alone and started ngc-builder's registry on $host:$next;" \
             "make release and make test publish there ($ADDRESS_FILE)"
        start_registry "$host:$next"
        echo "$host:$next" > "$ADDRESS_FILE"
        return
    done
    echo "setup-engine: $REGISTRY_ADDR and the 20 ports after it are taken" >&2
    exit 1
}

registry_is_200() { [ "$(registry_status "$1")" = 200 ]; }

start_registry() {
    local addr=$1
    if ! command -v docker-registry >/dev/null; then
        apt_install docker-registry
        # On a systemd host the package starts its own service, maybe on this very address.
        case "$(registry_status "$addr")" in
            200) echo "setup-engine: registry answers on $addr"; return ;;
            000) ;;
            *) REGISTRY_ADDR=$addr move_aside; return ;;
        esac
    fi
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
  addr: $addr
CONFIG
    echo "setup-engine: starting docker-registry on $addr (log: $STATE_DIR/registry.log)"
    setsid nohup docker-registry serve "$STATE_DIR/registry/config.yml" \
        >>"$STATE_DIR/registry.log" 2>&1 < /dev/null &
    echo $! > "$STATE_DIR/registry.pid"
    wait_for 30 "docker-registry" registry_is_200 "$addr" \
        || { tail -20 "$STATE_DIR/registry.log" >&2; exit 1; }
}

command -v curl >/dev/null || apt_install curl
ensure_engine
ensure_registry
# The test sessions start registries of their own (tests/suite_registry.py), whoever serves
# the shared one.
command -v docker-registry >/dev/null || apt_install docker-registry
