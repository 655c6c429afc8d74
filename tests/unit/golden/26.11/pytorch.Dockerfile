# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/pytorch/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 3: PyTorch 2.15.0 on CUDA stack cu13.
FROM ngc-local/cuda-cu13:26.11-py3-<digest>

RUN apt-get update \
 && apt-get install -y --no-install-recommends libquadmath0 \
 && rm -rf /var/lib/apt/lists/*

COPY requirements.txt /opt/ngc/frameworks/pytorch/requirements.txt
RUN pip install --no-cache-dir -r /opt/ngc/frameworks/pytorch/requirements.txt

COPY probe/ /opt/ngc/probes/pytorch/
COPY expect/ /opt/ngc/expect/
