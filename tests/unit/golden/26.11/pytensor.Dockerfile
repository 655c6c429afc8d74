# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/pytensor/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: PyTensor 3.3.7 on debian-trixie, with no CUDA stack.
FROM ngc-local/base:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN printf '%s\n' \
    'pytensor==3.3.7 --hash=sha256:f827a19d3ee7adc20e7c51ce4edd4ca70bf69dfdc306405e1c96cce79419c383' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/pytensor/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-005.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/frameworks/pytensor/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/frameworks/pytensor/requirements.lock \
 && echo /opt/venv/lib > /etc/ld.so.conf.d/10-ngc-venv-lib.conf \
 && ldconfig

# COPY probe/ /opt/ngc/probes/pytensor/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-011.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-012.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-013.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="PyTensor" \
    PYTENSOR_VERSION="3.3.7" \
    NVIDIA_PYTENSOR_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
