# Rendered by ngc-builder from templates/base.Dockerfile.j2: do not edit.
# Layer 1: debian-bookworm with its Python 3.11 in a venv and the validation
# runner; everything above inherits these. Debian packages are the lock's, from the build's
# package cache; the image keeps its distro's own trust store and apt sources.
FROM ngc-local/os-debian-bookworm:12-1119c8fb5e49

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/3e38c82212084a9c390503cd42a673e4/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends \
        ca-certificates=20230311+deb12u1 \
        libgomp1=12.2.0-14+deb12u1 \
        python3=3.11.2-1+b1 \
        python3-venv=3.11.2-1+b1; \
    for p in \
        ca-certificates=20230311+deb12u1 \
        libexpat1=2.5.0-1+deb12u2 \
        libgomp1=12.2.0-14+deb12u1 \
        libgssapi-krb5-2=1.20.1-2+deb12u5 \
        libk5crypto3=1.20.1-2+deb12u5 \
        libkeyutils1=1.6.3-2 \
        libkrb5-3=1.20.1-2+deb12u5 \
        libkrb5support0=1.20.1-2+deb12u5 \
        libncursesw6=6.4-4 \
        libnsl2=1.3.0-2 \
        libpython3-stdlib=3.11.2-1+b1 \
        libpython3.11-minimal=3.11.2-6+deb12u8 \
        libpython3.11-stdlib=3.11.2-6+deb12u8 \
        libreadline8=8.2-1.3 \
        libsqlite3-0=3.40.1-2+deb12u2 \
        'libssl3=3.0.20-1~deb12u2' \
        libtirpc-common=1.3.3+ds-1 \
        libtirpc3=1.3.3+ds-1 \
        media-types=10.0.0 \
        'openssl=3.0.20-1~deb12u2' \
        python3=3.11.2-1+b1 \
        python3-distutils=3.11.2-3 \
        python3-lib2to3=3.11.2-3 \
        python3-minimal=3.11.2-1+b1 \
        python3-pip-whl=23.0.1+dfsg-1 \
        python3-setuptools-whl=66.1.1-1+deb12u2 \
        python3-venv=3.11.2-1+b1 \
        python3.11=3.11.2-6+deb12u8 \
        python3.11-minimal=3.11.2-6+deb12u8 \
        python3.11-venv=3.11.2-6+deb12u8 \
        readline-common=8.2-1.3; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb

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
COPY ngc_runner /opt/ngc/lib/ngc_runner
COPY expect/ /opt/ngc/expect/
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
