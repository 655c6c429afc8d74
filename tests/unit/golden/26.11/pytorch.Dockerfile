# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/pytorch/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 3: PyTorch 2.15.0 on CUDA stack cu13.
FROM ngc-local/cuda-cu13:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/791bae042cf2e33da1d9b47939eaf67b/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        libquadmath0=14.2.0-19; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        f5b51cf0ece3ec3bb7494d0cdbff3ce715ae00cfb2b6ed787f7db91319d64a7b > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        libquadmath0=14.2.0-19; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

RUN printf '%s\n' \
    'torch==2.15.0 --hash=sha256:241fea2bac4ed8351307cd13eca5020fbe231f990891be299cf683897caebfbc' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/pytorch/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-026.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/pytorch/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/pytorch/requirements.lock

# COPY probe/ /opt/ngc/probes/pytorch/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-030.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-031.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-032.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="PyTorch" \
    PYTORCH_VERSION="2.15.0" \
    NVIDIA_PYTORCH_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
