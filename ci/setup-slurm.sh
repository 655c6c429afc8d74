#!/usr/bin/env bash
# Make sure a Slurm cluster answers (`sinfo`), for `validate --slurm` and its tests. When none
# does, as root on Debian/Ubuntu: install Debian's slurm-wlm and munge if missing and start a
# one-node cluster on this machine without systemd (containers have none): munged, then
# slurmctld and slurmd with a slurm.conf of our own, state, spool and logs under the state dir.
# Safe to run again: a cluster that already answers is kept as it is.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "$(id -u)" -eq 0 ]; then default_state=/var/lib/ngc-builder
else default_state="${XDG_STATE_HOME:-$HOME/.local/state}/ngc-builder"; fi
STATE_DIR="${NGC_STATE_DIR:-$default_state}"
SLURM_DIR="$STATE_DIR/slurm"
SLURM_CONF_FILE=/etc/slurm/slurm.conf
OURS="# written by ngc-builder ci/setup-slurm.sh"
PARTITION="${NGC_SLURM_PARTITION:-ngc}"

say() { echo "setup-slurm: $*"; }
die() { echo "setup-slurm: $*" >&2; exit 1; }

cluster_up() { sinfo -h -o %T >/dev/null 2>&1 && [ -n "$(sinfo -h -o %T 2>/dev/null | grep -Ev 'down|drain|fail' || true)" ]; }
munge_up() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local seconds=$1 what=$2; shift 2
    for _ in $(seq "$seconds"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
    echo "setup-slurm: $what did not answer within ${seconds}s" >&2
    return 1
}

apt_install() {
    [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null \
        || die "need root on Debian/Ubuntu to install $*"
    mkdir -p "$STATE_DIR"
    if [ ! -f "$STATE_DIR/.apt-updated" ]; then apt-get update -q && touch "$STATE_DIR/.apt-updated"; fi
    # policy-rc.d 101: the packages' own services must not start (no systemd here, and the
    # daemons below run with our configuration).
    local policy=/usr/sbin/policy-rc.d had_policy=yes
    [ -e "$policy" ] || { had_policy=no; printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
    [ "$had_policy" = yes ] || rm -f "$policy"
}

ensure_packages() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    # The two-node test cluster (tests/cluster/two_nodes.py) puts each node in a network
    # namespace of its own: `ip` (iproute2), which a minimal Debian lacks.
    command -v ip >/dev/null || missing+=(iproute2)
    [ ${#missing[@]} -eq 0 ] || apt_install slurm-wlm munge iproute2
}

ensure_munge() {
    if munge_up; then say "munged answers"; return; fi
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    fi
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    chmod 755 /run/munge
    say "starting munged as the munge user (log: /var/log/munge/munged.log)"
    runuser -u munge -- munged --force
    wait_for 30 "munged" munge_up
}

write_config() {
    if [ -f "$SLURM_CONF_FILE" ] && ! grep -qF "$OURS" "$SLURM_CONF_FILE"; then
        die "$SLURM_CONF_FILE exists and is not ours, but no cluster answers: start that cluster" \
            "or move the file aside"
    fi
    local node
    # `slurmd -C`: this machine's NodeName line (CPUs, sockets, cores, RealMemory).
    node=$(slurmd -C | head -1)
    mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" /etc/slurm
    cat > "$SLURM_CONF_FILE" <<CONF
$OURS
ClusterName=ngc
SlurmctldHost=$(hostname -s)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
$(cat "$HERE/slurm-plugins.conf")
# The completion log keeps every final state for good.
JobCompType=jobcomp/filetxt
JobCompLoc=$SLURM_DIR/jobcomp.log
OverTimeLimit=0
$node State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    # A previous cluster's saved state may name another node or configuration.
    rm -rf "${SLURM_DIR:?}/state/"*
}

# Ours by its pid file: another cluster's daemons on this machine (a test's two-node one) are
# not ours, and must not stop ours from starting.
ours_running() {  # ours_running PIDFILE NAME
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

start_daemons() {
    say "starting slurmctld (log: $SLURM_DIR/slurmctld.log)"
    ours_running "$SLURM_DIR/slurmctld.pid" slurmctld || slurmctld -i
    wait_for 30 "slurmctld" scontrol ping
    say "starting slurmd (log: $SLURM_DIR/slurmd.log)"
    ours_running "$SLURM_DIR/slurmd.pid" slurmd || slurmd
    wait_for 60 "slurmd (node idle)" cluster_up || {
        tail -20 "$SLURM_DIR/slurmctld.log" "$SLURM_DIR/slurmd.log" >&2 || true; exit 1; }
    scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
}

if command -v sinfo >/dev/null && cluster_up; then
    say "a Slurm cluster answers: $(sinfo -h -o '%P %D %T' | tr '\n' ' ')"
    exit 0
fi
ensure_packages
ensure_munge
write_config
start_daemons
say "one-node cluster up: partition $PARTITION on $(hostname -s); config $SLURM_CONF_FILE," \
    "logs $SLURM_DIR/slurmctld.log, $SLURM_DIR/slurmd.log, job completions $SLURM_DIR/jobcomp.log"
