# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/digits/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: DIGITS 6.1.1 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/digits-debian/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-001.tar /

# COPY probe/ /opt/ngc/probes/digits/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-003.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-004.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-005.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="DIGITS" \
    DIGITS_VERSION="6.1.1" \
    NVIDIA_DIGITS_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
