# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/mxnet/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Apache MXNet 1.9.1 on debian-bookworm, with no CUDA stack.
FROM ngc-local/base-debian-bookworm:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/f18a017e99374a584988b274c5de86af/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        libquadmath0=12.2.0-14+deb12u1; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        3f0c9a4c730da2fdab001cae596625438598fd2996d29d888feeb4c1cdc9011f > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        libquadmath0=12.2.0-14+deb12u1; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

RUN printf '%s\n' \
    'mxnet==1.9.1 --hash=sha256:65d5dac162c87a14d138d888b54494d515036d9047ae804ff51f770bd02197a6' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/mxnet-cpu/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-026.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/mxnet-cpu/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/mxnet-cpu/requirements.lock

# COPY probe/ /opt/ngc/probes/mxnet/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-030.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-031.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-032.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Apache MXNet" \
    MXNET_VERSION="1.9.1" \
    NVIDIA_MXNET_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
