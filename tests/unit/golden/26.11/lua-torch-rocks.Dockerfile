# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/lua-torch/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Torch (Lua) 7.0 on debian-trixie, with no CUDA stack.
FROM ngc-local/base:layer-<digest>

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/a5880158b8c00436f49eea08f560a5f9/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends \
        build-essential=12.12 \
        cmake=3.31.6-2 \
        luarocks=3.8.0+dfsg1-1; \
    for p in \
        binutils=2.44-3 \
        binutils-common=2.44-3 \
        binutils-x86-64-linux-gnu=2.44-3 \
        build-essential=12.12 \
        bzip2=1.0.8-6 \
        cmake=3.31.6-2 \
        cmake-data=3.31.6-2 \
        cpp=4:14.2.0-1 \
        cpp-14=14.2.0-19 \
        cpp-14-x86-64-linux-gnu=14.2.0-19 \
        cpp-x86-64-linux-gnu=4:14.2.0-1 \
        dpkg-dev=1.22.22 \
        g++=4:14.2.0-1 \
        g++-14=14.2.0-19 \
        g++-14-x86-64-linux-gnu=14.2.0-19 \
        g++-x86-64-linux-gnu=4:14.2.0-1 \
        gcc=4:14.2.0-1 \
        gcc-14=14.2.0-19 \
        gcc-14-x86-64-linux-gnu=14.2.0-19 \
        gcc-x86-64-linux-gnu=4:14.2.0-1 \
        libarchive13t64=3.7.4-4+deb13u1 \
        libasan8=14.2.0-19 \
        libatomic1=14.2.0-19 \
        libbinutils=2.44-3 \
        libbrotli1=1.1.0-2+b7 \
        libc-dev-bin=2.41-12+deb13u4 \
        libc6-dev=2.41-12+deb13u4 \
        libcc1-0=14.2.0-19 \
        libcom-err2=1.47.2-3+b12 \
        libcrypt-dev=1:4.4.38-1 \
        libctf-nobfd0=2.44-3 \
        libctf0=2.44-3 \
        libcurl4t64=8.14.1-2+deb13u5 \
        libdpkg-perl=1.22.22 \
        libgcc-14-dev=14.2.0-19 \
        libgdbm-compat4t64=1.24-2 \
        libgdbm6t64=1.24-2 \
        libgnutls30t64=3.8.9-3+deb13u4 \
        libgprofng0=2.44-3 \
        libgssapi-krb5-2=1.21.3-5+deb13u1 \
        libhwasan0=14.2.0-19 \
        libidn2-0=2.3.8-2 \
        libisl23=0.27-1 \
        libitm1=14.2.0-19 \
        libjansson4=2.14-2+b3 \
        libjsoncpp26=1.9.6-3 \
        libk5crypto3=1.21.3-5+deb13u1 \
        libkeyutils1=1.6.3-6 \
        libkrb5-3=1.21.3-5+deb13u1 \
        libkrb5support0=1.21.3-5+deb13u1 \
        libldap2=2.6.10+dfsg-1 \
        liblsan0=14.2.0-19 \
        liblua5.1-0=5.1.5-11 \
        liblua5.1-0-dev=5.1.5-11 \
        libmpc3=1.3.1-1+b3 \
        libmpfr6=4.2.2-1 \
        libncurses-dev=6.5+20250216-2 \
        libncurses6=6.5+20250216-2 \
        libnghttp2-14=1.64.0-1.1+deb13u1 \
        libnghttp3-9=1.8.0-1 \
        libp11-kit0=0.25.5-3 \
        libperl5.40=5.40.1-6+deb13u1 \
        libproc2-0=2:4.0.4-9 \
        libpsl5t64=0.21.2-1.1+b1 \
        libquadmath0=14.2.0-19 \
        libreadline-dev=8.2-6 \
        librhash1=1.4.5-1 \
        librtmp1=2.4+20151223.gitfa8646d.1-2+b5 \
        libsasl2-2=2.1.28+dfsg1-9 \
        libsasl2-modules-db=2.1.28+dfsg1-9 \
        libsframe1=2.44-3 \
        libssh2-1t64=1.11.1-1+deb13u2 \
        libstdc++-14-dev=14.2.0-19 \
        libtasn1-6=4.20.0-2+deb13u1 \
        libtsan2=14.2.0-19 \
        libubsan1=14.2.0-19 \
        libunistring5=1.3-2 \
        libuv1t64=1.50.0-2 \
        libxml2=2.12.7+dfsg+really2.9.14-2.1+deb13u3 \
        linux-libc-dev=6.12.107-1 \
        lua-any=33 \
        lua5.1=5.1.5-11 \
        luarocks=3.8.0+dfsg1-1 \
        make=4.4.1-2 \
        patch=2.8-2 \
        perl=5.40.1-6+deb13u1 \
        perl-modules-5.40=5.40.1-6+deb13u1 \
        procps=2:4.0.4-9 \
        rpcsvc-proto=1.4.3-1 \
        unzip=6.0-29+deb13u1 \
        wget=1.25.0-2 \
        xz-utils=5.8.1-1+deb13u1 \
        zip=3.0-15+deb13u1; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb

COPY requirements.txt requirements.lock /opt/ngc/frameworks/lua-torch-rocks/
RUN luarocks install torch

COPY probe/ /opt/ngc/probes/lua-torch/
COPY expect/ /opt/ngc/expect/
