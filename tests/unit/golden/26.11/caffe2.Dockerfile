# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/caffe2/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Caffe2 1.10.2 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN printf '%s\n' \
    'torch==1.10.2 --hash=sha256:fbaf18c1b3e0b31af194a9d853e3739464cf982d279df9d34dd18f1c2a471878' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/caffe2/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-005.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/caffe2/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/caffe2/requirements.lock

# COPY probe/ /opt/ngc/probes/caffe2/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-009.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-010.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-011.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Caffe2" \
    CAFFE2_VERSION="1.10.2" \
    NVIDIA_CAFFE2_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
