# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/jax/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 3: JAX 0.12.0 on CUDA stack cu13.
FROM ngc-local/cuda-cu13:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN printf '%s\n' \
    'jax==0.12.0 --hash=sha256:758dd93b8c0682572fc9211da0e9441f73a9522ab315a4c9dbdd14673416f809' \
    'jax-cuda13-pjrt==0.12.0 --hash=sha256:72dc5cf1b4daa651cb98e8eb005a82c20301b418c2691964e884280ee2f9a6b4' \
    'jax-cuda13-plugin==0.12.0 --hash=sha256:9d5813b87159053b5c663c6e4aba45a14524f5be5aec0865f5860afc8c7090e4' \
    'jaxlib==0.12.0 --hash=sha256:595e642efe8277a1cb0dacdd0b152354a32dc54688b1446daa1d4b42e4b8a8f0' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/jax/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-008.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/jax/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/jax/requirements.lock

# COPY probe/ /opt/ngc/probes/jax/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-012.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-013.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-014.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="JAX" \
    JAX_VERSION="0.12.0" \
    NVIDIA_JAX_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
