# Rendered by ngc-builder from templates/base.Dockerfile.j2 (release 26.11): do not edit.
# Layer 1: debian-bullseye with its Python 3.9 in a venv, the CA bundle and the
# validation runner. Everything above it inherits these.
FROM ngc-local/os-debian-bullseye:11

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates libgomp1 \
 && rm -rf /var/lib/apt/lists/*

RUN python3 -m venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

# The stdlib-only validation runner: `python -m ngc_runner` prints one JSON report.
COPY ngc_runner /opt/ngc/lib/ngc_runner
COPY expect/ /opt/ngc/expect/
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /opt/ngc/lib > "$(cat /tmp/site)/ngc-runner.pth" \
 && rm /tmp/site \
 && python -m ngc_runner --help > /dev/null

CMD ["/bin/bash"]
