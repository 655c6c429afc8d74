# Rendered by ngc-builder from templates/base.Dockerfile.j2: do not edit.
# Layer 1: debian-bullseye with its Python 3.9 in a venv and the validation
# runner; everything above inherits these. Debian packages are the lock's, from the build's
# package cache; the image keeps its distro's own trust store and apt sources.
FROM ngc-local/os-debian-bullseye:11-80fe025b1212

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/31f2a2f4528d5c99706a20a4a66b97ea/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends \
        ca-certificates=20210119 \
        libgomp1=10.2.1-6 \
        python3=3.9.2-3 \
        python3-venv=3.9.2-3; \
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
