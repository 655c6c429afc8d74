# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/mxnet/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Apache MXNet 1.9.1 on debian-bookworm, with no CUDA stack.
FROM ngc-local/base-debian-bookworm:26.11-py3-<digest>

RUN apt-get update \
 && apt-get install -y --no-install-recommends libquadmath0 \
 && rm -rf /var/lib/apt/lists/*

COPY requirements.txt /opt/ngc/frameworks/mxnet-cpu/requirements.txt
RUN pip install --no-cache-dir -r /opt/ngc/frameworks/mxnet-cpu/requirements.txt

COPY probe/ /opt/ngc/probes/mxnet/
COPY expect/ /opt/ngc/expect/
