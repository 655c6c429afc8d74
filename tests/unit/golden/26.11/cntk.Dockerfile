# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/cntk/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Microsoft Cognitive Toolkit 2.7 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:26.11-py3-<digest>

COPY requirements.txt /opt/ngc/frameworks/cntk/requirements.txt
RUN apt-get update \
 && apt-get install -y --no-install-recommends libopenmpi3 \
 && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir -r /opt/ngc/frameworks/cntk/requirements.txt

COPY probe/ /opt/ngc/probes/cntk/
COPY expect/ /opt/ngc/expect/
