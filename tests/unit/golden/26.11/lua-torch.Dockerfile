# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/lua-torch/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Torch (Lua) 7.0 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>

COPY requirements.txt requirements.lock /opt/ngc/frameworks/lua-torch/

COPY probe/ /opt/ngc/probes/lua-torch/
COPY expect/ /opt/ngc/expect/
COPY workspace/README.md /workspace/README.md
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Torch (Lua)" \
    LUA_TORCH_VERSION="7.0" \
    NVIDIA_LUA_TORCH_VERSION="26.11" \
    NGC_RELEASE="26.11"
