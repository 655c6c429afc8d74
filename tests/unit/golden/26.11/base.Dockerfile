# Rendered by ngc-builder from templates/base.Dockerfile.j2: do not edit.
# Layer 1: debian-trixie with its Python 3.13 in a venv and the validation
# runner; everything above inherits these. Debian packages are the lock's, from the build's
# package cache; the image keeps its distro's own trust store and apt sources.
FROM ngc-local/os-debian-trixie:13-c7035b9cca40

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/4e802802965bcb88319d25f668dfcfb3/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends \
        ca-certificates=20250419 \
        libgomp1=14.2.0-19 \
        python3=3.13.5-1 \
        python3-venv=3.13.5-1; \
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
