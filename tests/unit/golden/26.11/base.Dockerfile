# Rendered by ngc-builder from templates/base.Dockerfile.j2: do not edit.
# Layer 1: debian-trixie with its Python 3.13 in a venv and the validation
# runner; everything above inherits these. Debian packages are the lock's, from the build's
# package cache; the image keeps its distro's own trust store and apt sources.
FROM ngc-local/os-debian-trixie:13-c7035b9cca40
ARG SOURCE_DATE_EPOCH=1795392000
ADD ngc-build-shell.tar /
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/4e802802965bcb88319d25f668dfcfb3/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        ca-certificates=20250419 \
        libgomp1=14.2.0-19 \
        python3=3.13.5-1 \
        python3-venv=3.13.5-1; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        0788e4b0b72db1bcf74a19cb24c3511e7770ad0b341f0f30e361701c3072f53e \
        0caf134e73ab90ffeaa5ce2529d73ea7d48078b2a9251ed9d1b7b514a61e9483 \
        0ebdc340de33333639c3c63874cd4b15ac2e83dfa1ef3053b7eefaf4919f4f68 \
        38abe0e710a07688e9c149d74536e67cfee0364bdb64dd6d644c32a1cfad389f \
        460c1fd72845516ac3ce9d1686916f3ab2e4c86f8a9746e14d26243a47e2b98d \
        47baa2e11579583654583a066b69bd5a5d2f22423081f707ed6c0c3ba6d538b7 \
        4ff006f431d8c2e69fa736885a3b6e779f2448535f69dbde821d9f0ff87ad8ea \
        72b7a1a33c48f3195efeb044111b34ae684b1e640bb6495c832443b798601cd5 \
        744ea5038e645ed22299e1bca47f76169b5665dd640df3492bdd1e21eba6cb76 \
        76bafa92947ebd37b0a6f9ec6570412041f56edebc1c66d323731216d318471e \
        7e142ed64a81ccdd39714f213467bd365736ef341adb2be11be981f638b9175f \
        a4aa6a9a8c77f87bfe545e1d14ec42c001d189ace90e3aa75deec882b39dee49 \
        a5d2371bebf3689f676e3f3bae800371bcc4392a8a51269e23d528249b399615 \
        b079db533ff9d9d11585d06c3b2a5c034d01453a1e915502ffece42fb0ce4a3f \
        c1388174dc7140e6c19a6dd39f8a0dcb38a835cd66c65644e0dded43d5223cb0 \
        c1fda9e7b1bf15b2fa75a238d8a8710e142fe14c722fc650c5fc614f078c9073 \
        db161322a3481d2c0c3b9a3b9a03c3ab0e2b1718f54b88755fb4a3f939165b84 \
        e65351935aa4af2b10ae2abb5744f5059e9abad51aea6cd0cb825702010763f7 \
        eeadf2b5e755c9f183883feea2d9b5b28560284275d5f54d3e55d0923b1d0967 \
        ef590f89563aa4b46c8260d49d1cea0fc1b181d19e8df3782694706adf05c184 \
        f77e8aa0bf0de618f11cb0b21658a4ed60f177d63b3cf26d7fc3706b6d0eaaa9 > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        ca-certificates=20250419 \
        'libexpat1=2.8.3-1~deb13u1' \
        libffi8=3.4.8-2 \
        libgomp1=14.2.0-19 \
        libncursesw6=6.5+20250216-2 \
        libpython3-stdlib=3.13.5-1 \
        libpython3.13-minimal=3.13.5-2+deb13u5 \
        libpython3.13-stdlib=3.13.5-2+deb13u5 \
        libreadline8t64=8.2-6 \
        media-types=13.0.0 \
        netbase=6.5 \
        'openssl=3.5.7-1~deb13u2' \
        python3=3.13.5-1 \
        python3-minimal=3.13.5-1 \
        python3-pip-whl=25.1.1+dfsg-1 \
        python3-setuptools-whl=78.1.1-0.1 \
        python3-venv=3.13.5-1 \
        python3.13=3.13.5-2+deb13u5 \
        python3.13-minimal=3.13.5-2+deb13u5 \
        python3.13-venv=3.13.5-2+deb13u5 \
        readline-common=8.2-6; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

RUN python3 -m venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

# The stdlib-only validation runner: `python -m ngc_runner` prints one JSON report. The .pth
# puts it on the path and, at every interpreter start, gives an unwritable HOME (an arbitrary
# UID's "/", a read-only root's /root) a private one under /tmp (ngc_runner/home.py says why).
# Compiled here, so a read-only root filesystem never needs a __pycache__ written.
# COPY ngc_runner /opt/ngc/lib/ngc_runner: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-079.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-080.tar /
RUN cp /opt/ngc/lib/ngc_runner/home.py /opt/ngc/lib/ngc_home.py \
 && python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && printf '/opt/ngc/lib\nimport ngc_home\n' > "$(cat /tmp/site)/ngc-runner.pth" \
 && rm /tmp/site \
 && python -m compileall -q /opt/ngc/lib \
 && python -m ngc_runner --help > /dev/null \
 && mkdir -m 1777 /workspace

# Researchers' work goes in /workspace (mount a volume there); the entrypoint prints the
# banner on stderr, then runs the command as a minimal init (ngc_runner/entry.py).
WORKDIR /workspace
ENTRYPOINT ["python", "-I", "-m", "ngc_runner.entry"]
CMD ["/bin/bash"]

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
