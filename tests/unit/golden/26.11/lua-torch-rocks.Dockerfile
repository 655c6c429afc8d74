# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/lua-torch/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Torch (Lua) 7.0 on debian-trixie, with no CUDA stack.
FROM ngc-local/base:26.11-py3-<digest>

COPY requirements.txt /opt/ngc/frameworks/lua-torch-rocks/requirements.txt
RUN apt-get update \
 && apt-get install -y --no-install-recommends luarocks build-essential cmake \
 && luarocks install torch \
 && rm -rf /var/lib/apt/lists/*

COPY probe/ /opt/ngc/probes/lua-torch/
COPY expect/ /opt/ngc/expect/
