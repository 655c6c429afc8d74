# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/tensorrt/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 3: TensorRT 11.4.0.106 on CUDA stack cu13.
FROM ngc-local/cuda-cu13:layer-<digest>

COPY requirements.txt requirements.lock /opt/ngc/frameworks/tensorrt-split/
RUN python -m ngc_runner.lockcheck /opt/ngc/frameworks/tensorrt-split/requirements.lock

COPY probe/ /opt/ngc/probes/tensorrt/
COPY expect/ /opt/ngc/expect/
COPY workspace/README.md /workspace/README.md
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="TensorRT" \
    TENSORRT_VERSION="11.4.0.106" \
    NVIDIA_TENSORRT_VERSION="26.11" \
    NGC_RELEASE="26.11"
