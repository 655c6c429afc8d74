# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/tensorflow/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 3: TensorFlow 2.21.0 on CUDA stack cu12.
FROM ngc-local/cuda-cu12:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN printf '%s\n' \
    'tensorflow==2.21.0 --hash=sha256:e9d8da8dcab9650efb45f032ba70af2f016f907e6e0c6bda29dd101bba945406' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/tensorflow/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-005.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/tensorflow/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/tensorflow/requirements.lock

# COPY probe/ /opt/ngc/probes/tensorflow/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-009.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-010.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-011.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="TensorFlow" \
    TENSORFLOW_VERSION="2.21.0" \
    NVIDIA_TENSORFLOW_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
