# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/pytensor/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: PyTensor 3.3.7 on debian-trixie, with no CUDA stack.
FROM ngc-local/base:26.11-py3-<digest>

COPY requirements.txt /opt/ngc/frameworks/pytensor/requirements.txt
RUN pip install --no-cache-dir -r /opt/ngc/frameworks/pytensor/requirements.txt \
 && echo /opt/venv/lib > /etc/ld.so.conf.d/10-ngc-venv-lib.conf \
 && ldconfig

COPY probe/ /opt/ngc/probes/pytensor/
COPY expect/ /opt/ngc/expect/
