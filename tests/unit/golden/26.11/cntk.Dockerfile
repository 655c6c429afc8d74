# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/cntk/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Microsoft Cognitive Toolkit 2.7 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>

COPY requirements.txt requirements.lock /opt/ngc/frameworks/cntk/
RUN python -m ngc_runner.lockcheck /opt/ngc/frameworks/cntk/requirements.lock

COPY probe/ /opt/ngc/probes/cntk/
COPY expect/ /opt/ngc/expect/
COPY workspace/README.md /workspace/README.md
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Microsoft Cognitive Toolkit" \
    CNTK_VERSION="2.7" \
    NVIDIA_CNTK_VERSION="26.11" \
    NGC_RELEASE="26.11"
