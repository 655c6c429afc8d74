# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/digits/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: DIGITS 6.1.1 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>

COPY requirements.txt requirements.lock /opt/ngc/frameworks/digits/
RUN python -m ngc_runner.lockcheck /opt/ngc/frameworks/digits/requirements.lock

COPY probe/ /opt/ngc/probes/digits/
COPY expect/ /opt/ngc/expect/
