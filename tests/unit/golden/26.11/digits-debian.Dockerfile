# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/digits/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: DIGITS 6.1.1 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>

COPY requirements.txt requirements.lock /opt/ngc/frameworks/digits-debian/

COPY probe/ /opt/ngc/probes/digits/
COPY expect/ /opt/ngc/expect/
COPY workspace/README.md /workspace/README.md
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="DIGITS" \
    DIGITS_VERSION="6.1.1" \
    NVIDIA_DIGITS_VERSION="26.11" \
    NGC_RELEASE="26.11"
