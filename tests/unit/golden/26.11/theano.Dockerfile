# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/theano/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Theano 1.0.5 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/b7b0d086c31e34ee4b515122d81f0861/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        build-essential=12.9 \
        libgpuarray-dev=0.7.6-5+b3 \
        libopenblas-dev=0.3.13+ds-3+deb11u1 \
        python3-pygpu=0.7.6-5+b3 \
        python3-theano=1.0.5+dfsg-2; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        038b337a9f2b9bb39c6b03b3bdd79b85dec6dd360e0b93711659b91433b4d754 \
        078487a45916167e3e4ee2e584c50306c84368dd06dae276604861ca0426c34e \
        07af57b8d276f330830cf67ef144e461817e0ad99ac12c1e9e7e6b6882a4b42a \
        0acbaecfed36349945b5747da794b504ed803a98c6e48ea542b90b61361d939e \
        0b5c5b871029601a85131285d58e2f872e699d164ab157d9de8d2e081c234321 \
        192c1631903259e6770b2f09dcab982f55497b770fe76d6c4febadfbb0be1318 \
        1b11dda85ade6466e375e393370e6777fbc1bef45b4d2b8bcc49a05bf4cbd563 \
        1f4a1d8ba79df93415bf86cdfe4a8e0d99b9b745bae18683ce0934524b927021 \
        206ac9e4e5765dc6d3ccb3d577d85d325457c285490d633db386b22e2e394cab \
        20b1f56863dcc5f187d6cb53b2aa6149bd013be4ec67e10c2c31a22fda619a01 \
        289800bcbc9e3f2718c2e13e4f2c90f15843ffcf46b26d95a15b276fe2f9ac87 \
        3a2172f6d926cf2e98a1a2e24f5aecdc3bcd56fa7c6d9f7a3fc4892f67377d5f \
        3b711374092b84e732c4e73cf33e02cff02e34a5f105eb6467de8d9038e4cd9d \
        3f7c5bdaeab9446c8e3e282a61e160a78c426b69c5203f2d8a19037c5bf3b4eb \
        40d45cf1d877a306f71d0eff6c0b79469364b52215a1d23cf9a6d8698a1890b4 \
        41eeaf9557571044f75b31730c05c22df3039d3152afd27b9fd33206f2fd5f7e \
        4380695a2758ac7370218ebc27dbfe63b3c5d4fa1323bcd45cef5d8c84295fd2 \
        43bf075f7da8d2a30ab0799452ec49c2ae4fb47260f406f5470e2b63593f795b \
        47cd7cb9bf37f657993a6ef2f24d4943ded5ef616d866f2d43bdf5e5b3abb6ea \
        4d5835752fb8f424759e477d22811f3a55dd4eca4c1bf9e1b6c1d83004614bd0 \
        4de41aa0e1ebb5f0d4506f31d0ca6654ca12fb6271ae7ecaae025133c9c20f6c \
        4ea9ce5df578309538e684fcbca0c4403c6d7ca01b3f44868829e98a55548e2a \
        572bf4571970c35bbebb6d3fdb7f2a5fbb02f3f07e86d791c7a211d84df999e5 \
        5d26306d12a45a8a03dca473490d56a765b58d61b53146c1c7784903cf59c45d \
        5e4dfec5d88a11cd84c7ecfa7176ebace0114fdbb3119e016f2e96da6e665253 \
        6983131dbb8568e55d80ba68fe2dbf60ed60c5e7cf99421374d7055932eba411 \
        6b5853688bb6d6bb9050d79ab732c751aa3ac7a5ed2404f7a6b53e7d4499bddc \
        6fe41d04ea9ef8c5c684b14585caa7a4a7e04ad6805d59cdd29016960b737123 \
        74bbaddb02d19e6ccb331819087aa02e94ded72e93294c51e3ba3c29dbcd9a2b \
        762808789cccba7d6bc5baa369b0e230ca716c623d51a7ebde4ad06938ce81f6 \
        7e93f240abe1c78c10d69ccec41ec5769763d99cebfd4e91407348520b18d908 \
        7f0b45193e58c59c2dcf10104cd516c1dc5245343ce9f3bb7f49092f1d4260fd \
        85fb8fd215bc742f1a17285b3bf38a2a0d0aa5b2c2188f8d7dec2323d2ab945d \
        8b04bf00b8c43360d9ba3adec209db290168ba3526d4aef3175fb84372b1bebf \
        8ba77ec6878d3f5e9ebec240e9a2a867325ae47c0d728cfcc4c90830f903a3bc \
        8c6d49b771530dbe26d7bd060582dc7d2b4eeb603a20789debc1ef4bbbc4ef67 \
        8e81c69eb7f17cd2fc7935d76e97882d1532ff8cdf45db731ee2c7f217155a37 \
        8f46ff26b1e6de1fa64626de2464d5743f9630e16a2b3b2b4d555abc2525c76a \
        9435da9b51aba0f9b128ccf3e80cc1e8233aa6b816d7bddd5688ca6c4afb6e4d \
        97647869e7e9db643a7eeab949b7d140f9a175814fcc94289be70d426aa5fd1a \
        9a5cb99d0f33cb11c7f535aaebfb569c6b6f97a75d748a9a52ea3afed5bd3960 \
        9b92287eaf221cd89267c47139954ba514f86ff1cd3f0c38f0b81cf73e8f06a5 \
        9dd070d482251d91b365703e120d66b75bea067fd5e0f82ec578ec376ee9c986 \
        9dd6de9d4764ceec696e89c0b015c2e2beb04f1423bd6dc2fc12bb2bc5277ce2 \
        a1a83af8cbd854af887b72ad196b1f4af58387815e21ced1000253a116a46e2a \
        a9a5e1f53b7e27a3f2b8388929bb622d3c6c35a4e42ac166697444e5ed662fd5 \
        acd4271ba56e42298b9fab0fcdad8f319970b50d1026f8469eed968a20f28761 \
        ad255447cc1b46f378c6dd483148f59c73ca8d7201df4a0681323f71e910d823 \
        ad81bca4874bd0a622422b7f007c411c1fb416acff21dbc1613bf2df563f0dc4 \
        b57b83ab5a3b1f055860bdf86f9316124f1da3c75fbba5dabbcb3cd3707c95ed \
        b71ad0ec4328fd5da01fbd060714dafb1471d68dbfd2f897ad890b2ecf50b204 \
        b7bfa24c9b03e825ed3a970b3fa2b8f5369be1bba42abef2e338e4328fddb455 \
        bb81a188c119cd7fdebae723cbc95887b6c549b2fe4fb7e268a9c8846444da99 \
        bbfd38de41898a06326f2a6ce4cc43e8e399f5566381231065b01d70499d5ba5 \
        c27ccec571658ae24e4aaa8f49203f4e9e95e9f13a324c9f42486ec3668691b2 \
        d25a7566c15c63c56eb34fa98e0663805ceb7cfd8054c2b6ae3f09be6982671c \
        d378f376dd8443b35198326cc875fa93d541b61ef4ae29354c65ac6fe05da485 \
        d5f710c7db9fcd6d9d6f119cd0dea64a4f765867447dd97b24ab44be1de7c60f \
        e3be603bd12377bb90fcfb0f2048ca3a81c886e49d6f09945b82159d1c54f7b2 \
        e54cfe4d8b8f209bb7df31a404ce040f7c2f9b1045114a927a7e1061cdf90727 \
        e62caed68b0ffaa03b5fa539d6fdc08c4151f66236d5878949bead0b71b7bb09 \
        e7f16054e81c1f4a3da321b2a6e5f280b0225bb15ceef6f10370220b977b4312 \
        e7f7b45d9c5cfcf37609f0b6efd3c645272c812144703af89dfd32218fcb0fd3 \
        e81cb1b4a3aa739fa5bcfceb043c3bd47233b4f5a36f88ad2de1f05a83d6ec2b \
        e8f1d04653698ab185c1144f35f905a1de87571c12ea630b65be669a2823d8c7 \
        ec82eb630c2c357ba99cc4a1480ff382b46bc5f2e867e36d186314d1f2081255 \
        ed2018b8c7ab7006826ccfcc6d306c3a5e1c6dc12595022e4e02913302fdc10e \
        f303178585349a056ae4d8e8bf46e492e7c83502653548170e9a95b5408de40f \
        f49fc849870c4e64fed2794722841ee950c1788f7fe90b3a091e6a098a46cd33 \
        f55fd466bbc9e04128de62a32d49bd0e6cd4975168441229f0b888b94a40b5c8 \
        f789debe1bc0164064d502d0230c98f9c5857331e43e02e9487fc42c4068bea9 \
        fa1596ec64610463b0f805fe5aa7e2537682c1c77f1e08335456bfc36766c259 \
        fb5624009f0f8015eef1d28c4f88046abc72f093a4a508894f5c043b3e16bcef \
        fe8c8955be71be9f744729b73c73cc6bc01184daf253604f1d3ee16a8d64d30d > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
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
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/theano/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-172.tar /
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /usr/lib/python3/dist-packages > "$(cat /tmp/site)/debian-dist-packages.pth" \
 && rm /tmp/site \
 && python -c "import theano; print('theano', theano.__version__, theano.__file__, theano.config.cxx)" \
 && rm -rf /root/.theano

# COPY probe/ /opt/ngc/probes/theano/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-179.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-180.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-181.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Theano" \
    THEANO_VERSION="1.0.5" \
    NVIDIA_THEANO_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
