# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/caffe/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Caffe 1.0.0 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:26.11-py3-<digest>

RUN apt-get update \
 && apt-get install -y --no-install-recommends caffe python3-caffe \
 && rm -rf /var/lib/apt/lists/*

COPY requirements.txt /opt/ngc/frameworks/caffe/requirements.txt
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /usr/lib/python3/dist-packages > "$(cat /tmp/site)/debian-dist-packages.pth" \
 && rm /tmp/site \
 && python -c "import caffe; print('caffe', caffe.__version__, caffe.__file__)"

COPY probe/ /opt/ngc/probes/caffe/
COPY expect/ /opt/ngc/expect/
