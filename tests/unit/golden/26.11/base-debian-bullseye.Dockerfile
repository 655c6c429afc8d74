# Rendered by ngc-builder from templates/base.Dockerfile.j2: do not edit.
# Layer 1: debian-bullseye with its Python 3.9 in a venv and the validation
# runner; everything above inherits these. Debian packages are the lock's, from the build's
# package cache; the image keeps its distro's own trust store and apt sources.
FROM ngc-local/os-debian-bullseye:11-80fe025b1212
ARG SOURCE_DATE_EPOCH=1795392000
ADD ngc-build-shell.tar /
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/31f2a2f4528d5c99706a20a4a66b97ea/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        ca-certificates=20210119 \
        libgomp1=10.2.1-6 \
        python3=3.9.2-3 \
        python3-venv=3.9.2-3; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        04873d74cbe86bad3a9901f6e57f1150040eba9891b443c5c975a72a97238e35 \
        05ec4080e0f05ba6b1c339d89c97f6343919be450b66cf4cfb215f54dcb85e58 \
        12f8b47632cc26b986bfc4c882fc98e7036d406143ae8bb1dbfff6b61d7c8993 \
        159320ef8a2d740dcc2245c7f0ac0e678b2796354044c90760fe2a4c6ef117b4 \
        162ba9fdcde81b5502953ed4d84b24e8ad4e380bbd02990ab1a0e3edffca3c22 \
        32ac64d959ac2dbc5bb289532fc9834dab8f671b5455695a3a9315aad973c65b \
        3f947176ef949f93e4ad5d76c067d33fa97cf90b62ee0748acb4f5f64790edc8 \
        4530c95aefa48e33fd8cf4acbe5c4b559dbe7bdf4c56469986c83a203982cef1 \
        4f489177a9ece2ea78c04a25115991a7a11f5adb75404888c5a84ac2a7f33ac4 \
        5744040c4735bcdd51238aebfa3e402b857244897f1007f61154982ebe5abbd7 \
        594283526d67e03e3c4e96534f6bfe5da1bf41da5d49360553c9b79fbf08c4ab \
        5d6003c5c20223a2547ac4976e09a9ec778dbe351507a6292bef3b60df5f4aa7 \
        6d9375916c5c0d670df708bed3e8c033ce4b197a580d536ce39d1170c67a4c95 \
        70ed9c6f35a9de73a01b042d740d92c46bbc0392ca4e63ee984417bd8a4eca3a \
        802c198e5dd0b5af85a6937e426a85d616680785e8d18148fac451281a83a9a9 \
        816404866f754d5662d69db50072018dccb78cf372fc38e0be961fab0f57d741 \
        a0b8d3acf4a0483048637637d269be93af48d5c16f6f139f53edd13384ad4686 \
        ab7e405ffed7762771edcfae843c53d8ec5960c1a04135fcfece5a6631560f19 \
        b2d488ad4d8d8adb3ba319fc9cb2cf9909fc42cb82ad239a26c570a2e749c389 \
        d8e2ffa60a34e9e5adf667646fd5e09a7465d81807255604e51df7345d9a7d5d \
        f903a5e24fd155cf09f25823a75c95a7de03a408ab699fe05c2c2930cbe018e3 \
        f9835dcf3cdbaf163104d4e511c9c4e0f41a56822e147e57f28f749fcbf7d44c > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        ca-certificates=20210119 \
        libexpat1=2.2.10-2+deb11u5 \
        libgomp1=10.2.1-6 \
        libmpdec3=2.5.1-1 \
        libncursesw6=6.2+20201114-2+deb11u2 \
        libpython3-stdlib=3.9.2-3 \
        libpython3.9-minimal=3.9.2-1 \
        libpython3.9-stdlib=3.9.2-1 \
        libreadline8=8.1-1 \
        libsqlite3-0=3.34.1-3 \
        media-types=4.0.0 \
        openssl=1.1.1w-0+deb11u1 \
        python-pip-whl=20.3.4-4+deb11u1 \
        python3=3.9.2-3 \
        python3-distutils=3.9.2-1 \
        python3-lib2to3=3.9.2-1 \
        python3-minimal=3.9.2-3 \
        python3-venv=3.9.2-3 \
        python3.9=3.9.2-1 \
        python3.9-minimal=3.9.2-1 \
        python3.9-venv=3.9.2-1 \
        readline-common=8.1-1; do \
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
ADD copy-081.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-082.tar /
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
