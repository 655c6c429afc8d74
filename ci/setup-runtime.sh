#!/usr/bin/env bash
# What starting an image from its SquashFS needs (docs/squashfs.md): squashfs-tools
# (mksquashfs, at release) and a /dev/fuse every user may open, since `ch-run` mounts the file
# with libsquashfuse inside the caller's own user namespace. Debian's udev rule gives
# /dev/fuse mode 0666; a machine without udev (a VM image, a container) leaves it 0600 and
# root's alone, so this sets what Debian would. Does nothing when both are there.
set -euo pipefail

if ! command -v mksquashfs >/dev/null; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
        echo "setup-runtime: please install squashfs-tools (needs root on Debian/Ubuntu)" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends squashfs-tools
fi
if [ ! -c /dev/fuse ]; then
    echo "setup-runtime: no /dev/fuse: ch-run cannot start a SquashFS here (modprobe fuse)" >&2
    exit 1
fi
mode=$(stat -c %a /dev/fuse)
if [ "$mode" != 666 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup-runtime: /dev/fuse is mode $mode: unprivileged ch-run cannot mount a" \
            "SquashFS; as root: chmod 0666 /dev/fuse (Debian's udev default)" >&2
        exit 1
    fi
    chmod 0666 /dev/fuse
    echo "setup-runtime: /dev/fuse was mode $mode, now 0666 (Debian's udev default)"
fi
