# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/theano/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Theano 1.0.5 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:26.11-py3-<digest>

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-theano build-essential libopenblas-dev python3-pygpu libgpuarray-dev \
 && rm -rf /var/lib/apt/lists/*

COPY requirements.txt /opt/ngc/frameworks/theano/requirements.txt
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /usr/lib/python3/dist-packages > "$(cat /tmp/site)/debian-dist-packages.pth" \
 && rm /tmp/site \
 && python -c "import theano; print('theano', theano.__version__, theano.__file__, theano.config.cxx)"

COPY probe/ /opt/ngc/probes/theano/
COPY expect/ /opt/ngc/expect/
