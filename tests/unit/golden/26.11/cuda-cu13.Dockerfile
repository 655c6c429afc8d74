# Rendered by ngc-builder from templates/cuda.Dockerfile.j2: do not edit.
# Layer 2: CUDA stack cu13 (CUDA 13.2) from NVIDIA's PyPI wheels, installed
# once here and shared by every framework image built on it.
FROM ngc-local/base:layer-<digest>

COPY stack/ /opt/ngc/stack/
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/stack/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/stack/requirements.lock \
 && find /opt/venv -path '*/nvidia/*' -name 'lib*.so*' -printf '%h\n' | sort -u \
      > /etc/ld.so.conf.d/00-ngc-cuda.conf \
 && ldconfig

# NVIDIA_REQUIRE_CUDA lets the NVIDIA container runtime refuse a host whose driver cannot run
# this CUDA (the same table as the org.ngc-builder.min-driver label).
# Every later pip install (framework layers, and users of the image) must keep these exact
# CUDA wheels: a framework that wants other versions fails instead of shipping a second copy.
ENV PIP_CONSTRAINT=/opt/ngc/stack/requirements.txt \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NVIDIA_REQUIRE_CUDA="cuda>=13.2 driver>=580"

COPY expect/ /opt/ngc/expect/
