# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/theano/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Theano 1.0.5 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/b7b0d086c31e34ee4b515122d81f0861/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends \
        build-essential=12.9 \
        libgpuarray-dev=0.7.6-5+b3 \
        libopenblas-dev=0.3.13+ds-3+deb11u1 \
        python3-pygpu=0.7.6-5+b3 \
        python3-theano=1.0.5+dfsg-2; \
    for p in \
        binutils=2.35.2-2 \
        binutils-common=2.35.2-2 \
        binutils-x86-64-linux-gnu=2.35.2-2 \
        build-essential=12.9 \
        bzip2=1.0.8-4 \
        cpp=4:10.2.1-1 \
        cpp-10=10.2.1-6 \
        dpkg-dev=1.20.13 \
        g++=4:10.2.1-1 \
        g++-10=10.2.1-6 \
        gcc=4:10.2.1-1 \
        gcc-10=10.2.1-6 \
        libasan6=10.2.1-6 \
        libatomic1=10.2.1-6 \
        libbinutils=2.35.2-2 \
        libc-dev-bin=2.31-13+deb11u11 \
        libc6-dev=2.31-13+deb11u11 \
        libcc1-0=10.2.1-6 \
        libcrypt-dev=1:4.4.18-4 \
        libctf-nobfd0=2.35.2-2 \
        libctf0=2.35.2-2 \
        libdpkg-perl=1.20.13 \
        libexpat1-dev=2.2.10-2+deb11u5 \
        libgcc-10-dev=10.2.1-6 \
        libgdbm-compat4=1.19-2 \
        libgdbm6=1.19-2 \
        libgfortran5=10.2.1-6 \
        libgpuarray-dev=0.7.6-5+b3 \
        libgpuarray3=0.7.6-5+b3 \
        libisl23=0.23-1 \
        libitm1=10.2.1-6 \
        'libjs-jquery=3.5.1+dfsg+~3.5.5-7' \
        libjs-sphinxdoc=3.4.3-2 \
        'libjs-underscore=1.9.1~dfsg-3' \
        liblbfgsb0=3.0+dfsg.3-9 \
        liblsan0=10.2.1-6 \
        libmpc3=1.2.0-1 \
        libmpfr6=4.1.0-3 \
        libnsl-dev=1.3.0-2 \
        libopenblas-dev=0.3.13+ds-3+deb11u1 \
        libopenblas-pthread-dev=0.3.13+ds-3+deb11u1 \
        libopenblas0=0.3.13+ds-3+deb11u1 \
        libopenblas0-pthread=0.3.13+ds-3+deb11u1 \
        libperl5.32=5.32.1-4+deb11u3 \
        libpython3-dev=3.9.2-3 \
        libpython3.9=3.9.2-1 \
        libpython3.9-dev=3.9.2-1 \
        libquadmath0=10.2.1-6 \
        libstdc++-10-dev=10.2.1-6 \
        libtirpc-dev=1.3.1-1+deb11u1 \
        libtsan0=10.2.1-6 \
        libubsan1=10.2.1-6 \
        linux-libc-dev=5.10.223-1 \
        make=4.3-4.1 \
        ocl-icd-libopencl1=2.2.14-2 \
        ocl-icd-opencl-dev=2.2.14-2 \
        'opencl-c-headers=3.0~2020.12.18-1' \
        'opencl-clhpp-headers=3.0~2.0.13-1' \
        patch=2.7.6-7 \
        perl=5.32.1-4+deb11u3 \
        perl-modules-5.32=5.32.1-4+deb11u3 \
        python3-decorator=4.4.2-2 \
        python3-dev=3.9.2-3 \
        python3-mako=1.1.3+ds1-2 \
        python3-markupsafe=1.1.1-1+b3 \
        python3-numpy=1:1.19.5-1 \
        python3-pkg-resources=52.0.0-4 \
        python3-pygpu=0.7.6-5+b3 \
        python3-scipy=1.6.0-2 \
        python3-six=1.16.0-2 \
        python3-theano=1.0.5+dfsg-2 \
        python3.9-dev=3.9.2-1 \
        'xz-utils=5.2.5-2.1~deb11u1' \
        zlib1g-dev=1:1.2.11.dfsg-2+deb11u2; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb

COPY requirements.txt requirements.lock /opt/ngc/frameworks/theano/
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /usr/lib/python3/dist-packages > "$(cat /tmp/site)/debian-dist-packages.pth" \
 && rm /tmp/site \
 && python -c "import theano; print('theano', theano.__version__, theano.__file__, theano.config.cxx)" \
 && rm -rf /root/.theano

COPY probe/ /opt/ngc/probes/theano/
COPY expect/ /opt/ngc/expect/
