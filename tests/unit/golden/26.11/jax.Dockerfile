# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/jax/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 3: JAX 0.12.0 on CUDA stack cu13.
FROM ngc-local/cuda-cu13:layer-<digest>

COPY requirements.txt requirements.lock /opt/ngc/frameworks/jax/
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/jax/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/jax/requirements.lock

COPY probe/ /opt/ngc/probes/jax/
COPY expect/ /opt/ngc/expect/
COPY workspace/README.md /workspace/README.md
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="JAX" \
    JAX_VERSION="0.12.0" \
    NVIDIA_JAX_VERSION="26.11" \
    NGC_RELEASE="26.11"
