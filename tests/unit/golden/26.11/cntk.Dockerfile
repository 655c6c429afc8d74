# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/cntk/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Microsoft Cognitive Toolkit 2.7 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/cntk/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-001.tar /
RUN python -m ngc_runner.lockcheck /opt/ngc/frameworks/cntk/requirements.lock

# COPY probe/ /opt/ngc/probes/cntk/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-004.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-005.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-006.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Microsoft Cognitive Toolkit" \
    CNTK_VERSION="2.7" \
    NVIDIA_CNTK_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
