# Rendered by ngc-builder from templates/base.Dockerfile.j2: do not edit.
# Layer 1: debian-bookworm with its Python 3.11 in a venv and the validation
# runner; everything above inherits these. Debian packages are the lock's, from the build's
# package cache; the image keeps its distro's own trust store and apt sources.
FROM ngc-local/os-debian-bookworm:12-1119c8fb5e49
ARG SOURCE_DATE_EPOCH=1795392000
ADD ngc-build-shell.tar /
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/3e38c82212084a9c390503cd42a673e4/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        ca-certificates=20230311+deb12u1 \
        libgomp1=12.2.0-14+deb12u1 \
        python3=3.11.2-1+b1 \
        python3-venv=3.11.2-1+b1; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        0d5f444f594e48c1e16a41d8fc628a09b24c658916a1274025c2330f2a802bed \
        0eb54da9f3d47e42a1be5dd8285def8bbc6e2556131b9c4ce3bd781dfc4b425a \
        1391d405ac12a1bbdd75d36a738ec410e5b01f9e065cc38974d9976a37b59c99 \
        2255e62fc22a86d2c544b8a3f516da9aee19383ad5742722ab4ce7f66a30dbc8 \
        2a46d5a5e9486da11ffeff5740931740d6deae4f92cd6098df060dc5dff1e1c7 \
        30f9618670e686d781afbfc713eb0830c29d2819e9cb2a0488800dad6bb99faa \
        33f6dafbd1a6902d9063172ec7dbd4b2225e12009e0d7ec5c933a72c2f5f3b74 \
        3e3ef129b4bf61513144236e15e1b4ec57fa5ae3dc8a72137abdbefb7a63af85 \
        48fec46bda7f5b1638b9e959889bfbc20491247d402d120bb152687eb48143d7 \
        4aba533f7cc5e7b93b7ff24482840e96813f5bcde9cce028395b65a0d799ccee \
        4d218561dc838de081de97f54584c4a29e77e26c7ed9fe3440d776d8e6071bf9 \
        4e58891d5c951a1e360ed9eaa814413cb5e84deadce3f08e801ac680434c786e \
        4e7f5e01e49a0622d10db3d0995666a6ead6a369cd127a996e9a4f9e91696a51 \
        69317523fe56429aa361545416ad339d138c1500e5a604856a80dd9074b4e35c \
        7b6e47d15c5c9cdcd456137533d8308aeba608a54cec73b28bd59bfc4b54cf06 \
        890b3540dad8a1ccc0deeca025db735bcc82629a76adacbe3b50fcc06ed528ca \
        89be24b41bff568ee6e7caf5680a3d808e80315ed92e407056ce0fa7a5bda025 \
        8b9c05f2d8d461a10d657b118f572af5bf8fd6c8f93dcef81e852c5ab0f428ab \
        98fa7a53dc565a38b65fb70422ad08001bf5361d8fbc74255280c329996a6bec \
        a620b555f301860a08e30534c7e6f7d79818e5e1977bfec39a612e7003074318 \
        a8d78b40e9b4e422224aeebfe0e4dfc243f6acf3532490b0c05480d4283d41e2 \
        aaa46dcb3b39948ae2e0fdb72cfcb2f48c0b59f19785a3da8045c05eb19955dd \
        bc6c8b8c15ae53abfac54877fd2c830336112568f40ee57c75d5c78ebcf7f44a \
        c0d83437fdb016cb289436f49f28a36be44b3e8f1f2498c7e3a095f709c0d6f8 \
        c90801be09701af221b54dd502a59cb378b7284ff31e480738baca317d2f7653 \
        cc373690a1cb469fb301b9fe0125048e3102f2e365d1b2d27cab091ec89fccdc \
        cd7b10c24281416a6acb22cd23ed7391c7dddd4a3d4d4a63d37faa786639b5de \
        cfac89e6a7a54ff3c6a4f843310e25efeddaa771baeae470bd98bd588c373563 \
        d8b87aea91b956b416c01a28c44ff6228315ae3b73de40acddac3dc5043607d2 \
        e02ebbd3701cf468dbf98d6d917fbe0325e881f07fe8b316150c8d2a64486e66 \
        f3beaa03994ffedacf73c43a0843d53b062d347115d8af65bee2034552a4e6f9 > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        ca-certificates=20230311+deb12u1 \
        libexpat1=2.5.0-1+deb12u2 \
        libgomp1=12.2.0-14+deb12u1 \
        libgssapi-krb5-2=1.20.1-2+deb12u5 \
        libk5crypto3=1.20.1-2+deb12u5 \
        libkeyutils1=1.6.3-2 \
        libkrb5-3=1.20.1-2+deb12u5 \
        libkrb5support0=1.20.1-2+deb12u5 \
        libncursesw6=6.4-4 \
        libnsl2=1.3.0-2 \
        libpython3-stdlib=3.11.2-1+b1 \
        libpython3.11-minimal=3.11.2-6+deb12u8 \
        libpython3.11-stdlib=3.11.2-6+deb12u8 \
        libreadline8=8.2-1.3 \
        libsqlite3-0=3.40.1-2+deb12u2 \
        'libssl3=3.0.20-1~deb12u2' \
        libtirpc-common=1.3.3+ds-1 \
        libtirpc3=1.3.3+ds-1 \
        media-types=10.0.0 \
        'openssl=3.0.20-1~deb12u2' \
        python3=3.11.2-1+b1 \
        python3-distutils=3.11.2-3 \
        python3-lib2to3=3.11.2-3 \
        python3-minimal=3.11.2-1+b1 \
        python3-pip-whl=23.0.1+dfsg-1 \
        python3-setuptools-whl=66.1.1-1+deb12u2 \
        python3-venv=3.11.2-1+b1 \
        python3.11=3.11.2-6+deb12u8 \
        python3.11-minimal=3.11.2-6+deb12u8 \
        python3.11-venv=3.11.2-6+deb12u8 \
        readline-common=8.2-1.3; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

RUN python3 -m venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

# The stdlib-only validation runner: `python -m ngc_runner` prints one JSON report. The .pth
# puts it on the path and, at every interpreter start, gives an unwritable HOME (an arbitrary
# UID's "/", a read-only root's /root) a private one under /tmp (ngc_runner/home.py says why).
# Compiled here, so a read-only root filesystem never needs a __pycache__ written.
# COPY ngc_runner /opt/ngc/lib/ngc_runner: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-099.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-100.tar /
RUN cp /opt/ngc/lib/ngc_runner/home.py /opt/ngc/lib/ngc_home.py \
 && python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && printf '/opt/ngc/lib\nimport ngc_home\n' > "$(cat /tmp/site)/ngc-runner.pth" \
 && rm /tmp/site \
 && python -m compileall -q /opt/ngc/lib \
 && python -m ngc_runner --help > /dev/null \
 && mkdir -m 1777 /workspace

# Researchers' work goes in /workspace (mount a volume there); the entrypoint prints the
# banner on stderr, then runs the command as a minimal init (ngc_runner/entry.py).
WORKDIR /workspace
ENTRYPOINT ["python", "-I", "-m", "ngc_runner.entry"]
CMD ["/bin/bash"]

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
