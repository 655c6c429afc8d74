#!/usr/bin/env bash
# Host tools ngc-builder needs on a fresh Debian/Ubuntu machine: Python with venv,
# debootstrap and mmdebstrap (to bootstrap OS bases, the latter from a lock), tar, curl and
# git, a headless browser for the catalog's tests and screenshots (chromium and its
# chromium-driver), shellcheck (actionlint reads the generated workflows' scripts with it),
# and cosign (the tests verify what the builder signs with it). Does nothing when all are
# there.
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
command -v cosign >/dev/null || need_cosign=1
[ ${#missing[@]} -eq 0 ] && [ -z "${need_cosign:-}" ] && exit 0

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
