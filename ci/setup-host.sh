#!/usr/bin/env bash
# Host tools ngc-builder needs on a fresh Debian/Ubuntu machine: Python with venv,
# debootstrap and mmdebstrap (to bootstrap OS bases, the latter from a lock), tar, curl and
# git, a headless browser for the catalog's tests and screenshots (chromium and its
# chromium-driver), shellcheck (actionlint reads the generated workflows' scripts with it),
# cosign (the tests verify what the builder signs with it), and QEMU's user-mode emulation
# registered with binfmt_misc (arm64 images run their maintainer scripts, bytecode compiling
# and validation emulated on an amd64 host: docs/multiarch.md), and Charliecloud with pigz
# (`validate --runtime charliecloud` runs images as HPC sites do: no entrypoint, an
# unprivileged UID, a read-only image; docs/researchers.md). Does nothing when all are there.
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
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)  # arm64 on amd64
command -v update-binfmts >/dev/null || missing+=(binfmt-support)
command -v arch-test >/dev/null || missing+=(arch-test)  # mmdebstrap asks it what runs here
# ch-convert (builders) exports from the engine, ch-run (runtime) runs unprivileged
command -v ch-run >/dev/null && command -v ch-convert >/dev/null || missing+=(charliecloud)
command -v pigz >/dev/null || missing+=(pigz)  # ch-convert gzips a whole image: on every core

# cosign: Debian packages it from trixie on; on older releases trixie's .deb (a static Go
# binary, glibc >= 2.34) is fetched from the Debian archive, checked against this hash, and
# only its binary kept.
COSIGN_DEB=pool/main/c/cosign/cosign_2.5.0-2+b5_amd64.deb
COSIGN_SHA256=3b6eadd27f3c4c00bfa7eab5c2397a6a15a763630c7a1d40d06ff60d24799eef
install_cosign() {
    if apt-cache policy cosign 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends cosign
        return
    fi
    local scratch mirror
    scratch=$(mktemp -d)
    mirror="${NGC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    curl -fsSL --retry 3 -o "$scratch/cosign.deb" "${mirror%/}/$COSIGN_DEB"
    echo "$COSIGN_SHA256  $scratch/cosign.deb" | sha256sum -c --quiet -
    dpkg-deb -x "$scratch/cosign.deb" "$scratch/root"
    install -m 0755 "$scratch/root/usr/bin/cosign" /usr/local/bin/cosign
    rm -rf "$scratch"
}
# arm64 binaries run through QEMU's user-mode emulator once binfmt_misc knows it (a container
# has no mount of its own: the kernel's registration, with the F flag, serves every container).
# QEMU 7.2 (Debian 12's) crashes or hangs in JAX's compiled CPU code (XLA's JIT), so the
# arm64 validation could not run there; 8 and newer run it. Where the host's QEMU is older,
# trixie's qemu-user .deb (static binaries) is fetched, checked against this hash, and only
# its qemu-aarch64 kept and registered in place of the host's (docs/multiarch.md).
QEMU_DEB=pool/main/q/qemu/qemu-user_10.0.13+ds-0+deb13u1_amd64.deb
QEMU_SHA256=ca6ede739327a20ae5a3498230c8a3a9a072c586e131bc6bcc1201eb1725e336
QEMU_OURS=/usr/local/lib/ngc-builder/qemu-aarch64
QEMU_MIN=8
BINFMT=/proc/sys/fs/binfmt_misc
# What QEMU registers for aarch64 ELF executables (its scripts/qemu-binfmt-conf.sh).
AARCH64_MAGIC='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
AARCH64_MASK='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
qemu_major() {
    "$1" --version 2>/dev/null | sed -n 's/^qemu-aarch64 version \([0-9]*\).*/\1/p' | head -n1
}
# The emulator to register: the host's when new enough, else ours (fetched once).
pick_emulator() {
    local host=/usr/bin/qemu-aarch64-static
    if [ "$(qemu_major "$host")" -ge "$QEMU_MIN" ] 2>/dev/null; then echo "$host"; return; fi
    [ -x "$QEMU_OURS" ] || install_qemu
    echo "$QEMU_OURS"
}
install_qemu() {
    local scratch mirror
    scratch=$(mktemp -d)
    mirror="${NGC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    curl -fsSL --retry 3 -o "$scratch/qemu.deb" "${mirror%/}/$QEMU_DEB"
    echo "$QEMU_SHA256  $scratch/qemu.deb" | sha256sum -c --quiet - >&2
    dpkg-deb -x "$scratch/qemu.deb" "$scratch/root"
    install -D -m 0755 "$scratch/root/usr/bin/qemu-aarch64" "$QEMU_OURS"
    rm -rf "$scratch"
}
registered_emulator() {
    local entry="$BINFMT/qemu-aarch64" path
    [ -e "$entry" ] && grep -qx enabled "$entry" || return 0
    path=$(sed -n 's/^interpreter //p' "$entry")
    readlink -f "$path"
}
ensure_emulation() {
    [ "$(uname -m)" = aarch64 ] && return 0  # an arm64 host runs arm64 natively
    local emulator registered
    registered=$(registered_emulator)
    if [ -n "$registered" ] && [ "$(qemu_major "$registered")" -ge "$QEMU_MIN" ] 2>/dev/null
    then return 0; fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup-host: arm64 emulation needs QEMU >= $QEMU_MIN registered with binfmt_misc" \
            "(found: ${registered:-none}); run this script as root" >&2
        return 1
    fi
    [ -e "$BINFMT/register" ] || mount -t binfmt_misc binfmt_misc "$BINFMT"
    emulator=$(pick_emulator)
    [ -e "$BINFMT/qemu-aarch64" ] && echo -1 >"$BINFMT/qemu-aarch64"
    # F: the kernel opens the emulator now, so containers need no copy of it; P: argv[0] kept.
    printf ':qemu-aarch64:M::%s:%s:%s:PF' "$AARCH64_MAGIC" "$AARCH64_MASK" "$emulator" \
        >"$BINFMT/register"
    echo "setup-host: arm64 emulation: $emulator ($("$emulator" --version | head -n1))"
}
command -v cosign >/dev/null || need_cosign=1
if [ ${#missing[@]} -eq 0 ] && [ -z "${need_cosign:-}" ]; then ensure_emulation; exit 0; fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup-host: please install: ${missing[*]} ${need_cosign:+cosign} (needs root on" \
        "Debian/Ubuntu)" >&2
    exit 1
fi
echo "setup-host: installing ${missing[*]} ${need_cosign:+cosign}"
apt-get update -q
if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ -n "${need_cosign:-}" ]; then install_cosign; fi
ensure_emulation
