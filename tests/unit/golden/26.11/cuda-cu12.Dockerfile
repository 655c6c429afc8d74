# Rendered by ngc-builder from templates/cuda.Dockerfile.j2: do not edit.
# Layer 2: CUDA stack cu12 (CUDA 12.9) from NVIDIA's PyPI wheels, installed
# once here and shared by every framework image built on it.
FROM ngc-local/base:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

# The multi-node userspace (rdma-core, UCX, Open MPI): the lock's .debs, as every layer's.
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/969f5d9653c05c7f896c9b0db988973d/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        ibverbs-providers=56.1-1 \
        ibverbs-utils=56.1-1 \
        libibverbs1=56.1-1 \
        openmpi-bin=5.0.7-1 \
        rdmacm-utils=56.1-1 \
        ucx-utils=1.18.1+ds-2+b1; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        0740dc760916b2008b45417a42a8fd7dd5de370fb57d31373f15034cda8acf0b \
        094fc0fe20c652be848ab2a8b3793eb03bc4327140ebd232145356352004e6c0 \
        0b11ad17be0300b63ad4eeb4c6450fed24d34b7b740f23e5363dcb29ee6d5eba \
        0f53cff5c3d0395635bcabd626ac85f6a74d2dac21963c4955396f24bfc73db8 \
        1841358ff8589d3a1b5e58a8f06c9c88c71d2154ee67cd1aa42d22cdb78a6121 \
        1c8c95542688996cff8e954583642b10a3bd78b69954f565fda62144c2bc3897 \
        1fd49134be5a29e0b978d230ffda6b419421e1237dac77e86131dba9f2037147 \
        2457686e375dcb7567ba01da6638a0711e2a55725d084d65de44dd11bb1f52e2 \
        260ad6438658e55b37dff4ceb1891bf6bb816cedd14b815ddc3f4dffea55e855 \
        2bb6169ff5322490d66e431bf2e1e93c05a97e2787828e49ea11d66dddd38590 \
        2cab4f5fda610ccebc8c9da61f81cf6a49f99f103ef44b3f22828400565c8639 \
        30847c1fde4240567d7ed3aeab4f655dd591203758b857e85e824045aae70299 \
        3a0acd8b37955c0e102c756b52c97df2a31f67b96453c35dab70df218d309117 \
        47d71d6a7f2e59b9bae5f89602397594805113b95889ad18fa703cd53abafc97 \
        4a0281229c2d391a5504de4b15e4fb3e0894b49c8f0153e00b5e4f813b73fd50 \
        4ae7a507fd2667d245c9c06091517ff1acbb2008fd39c8257445badd701b503a \
        4c3b889607586e6328964a5f98e01ef01daa415be24334d743d6654aab4c47a4 \
        5633b84b2f6527b19d70db064cfbbaf37b426f3a1a826316de115c8acb8c196d \
        58967d9d98cd88484d665ae963b4657a8a55b7c04b1c054faef6062d09c44771 \
        5b56911725905b8e2a8389c99416ca078395c4ca8ce0d516bc758d5be0134687 \
        5c222a72d11b866447da31693254f738430726e3e065a384e82687b2fd2f978b \
        689a9f0e0ba3e2c65431f864871e303ee904de69dd28abfc462663fae030227f \
        71383373523ef62d47eccf660cf6535c3febcbb3f88e54cb7a43124014b57359 \
        7a17e701bac905cc71df20abc674b4ee1b08af99b43d4c153628f23c907b8ee2 \
        7da07ee674b47f1f0be7cc89317c25310086a1f1761217d0f72e6ae2c5a69b84 \
        8fff343654f86c3b3266f94cd338c7b4da2e386da029327815118ea00bce03b9 \
        92e2d521ff872755a13aa69dba7b24025a7dc0f0f5aa708c9a86cd3565f570da \
        94497b7e17b6f574a0605b380d454e20d3f01a9c63b70c2a2263f679d30053e1 \
        973be69e92b9e2d3c639774a77c95eef710f4586756c2191ab779e9534254208 \
        99dfd409ae92505ee56742feea4e82a1e052818c5b0036ee618a371b5e28c9d1 \
        9a8a6c65c165e9964f106fb4ac710959b5d33e0790227e3ab6b27c4742d1254a \
        9c0604ef15bf0a4265012ec04ffa527c6b960985209b93e262c404b8632d93eb \
        a38ebc4dfa8e66f1bc928c2c2c4dee1852823e2c3bc754aead8b93f712c52d88 \
        a60c313b59c09d776190a6e70b13337992240227f365ce4b91bb476d47a776d7 \
        a901ee6a081bfd1037b6e91fa46bb1f3e37dfd6503946032fb6866956106feb7 \
        aa53c4a1878475e7309f2c265c54d9a8a4602dec95564cf84d471d7376ff616c \
        affc6c5a4e5e8106f4d77ece5f2d15e032ae939532627387ce5466df8d9eeb20 \
        b002ea172b9c1e34a67bc497c523c67bb74c3f0a4e98113cb083990a1f1d3bfe \
        b302ad6cdcd70faf61b2d1cc4b0295499062b8476d7f222ce585647ce1e2fcc7 \
        b5a3fd3bf8c8fd0364bfb9bea00dcba7fc301229bd02dded084632d31f5b0fb3 \
        bd43e020b8fed399db3eebf098111f10fba4c436fff99ccad72cc7e27c9764ec \
        c1d97a5e32e2bc68e833b8abeae026b6306198e87ee4396a7ffecd4779caefbf \
        c54f87069888f80ba4da586da6147d74c7598ccdd8b90906dbc4271fa414c738 \
        ce3d7d71350974c053812dde0214f1320b03ff3bc98907f93ba3d00f3f39d7b5 \
        ce5c153953016be42def7b105f37d55eae07a9608d1dfe6bcb03cc017fc384cb \
        d0deec23a00fabc82d2e67f9da230b83d25298de2e71ec3859c6b2da8b7c4745 \
        d8b192c20bac4950bb5dfae2abf29f8017478823e777b16fa2640b2cc4755644 \
        d9a0091071635a84e837051e4813005ac445071731becea28fba4d9806df5252 \
        e0c6b63ce4602a036a526f60fe5e6c1586710688058d98fc1001b9b3147b7efd \
        e50984d2e1ef6300e3fd51303839842189a077b10cb5cadff1923df10c61c493 \
        e578583f73f8208564e5035b18aa729c441fc7ecb389c666923552e123f4d655 \
        e6de3c9c6b1fa5e6c87882d094484fe0ad0560c61413abd0d28582c4a40de460 \
        f86d201c90d3bb47a36a2e9cea99a9cac4b5a4d24f0e6144e1ca84de77c54da5 \
        faa7d20cc8fa05ac3b0497065fa60bc920eacd3711ff039649d43a7aa34421ce \
        fc618ec40465e5ce48622606299cb47833efc3fb235ba15543b81f850722f443 \
        fe2276901c7cd7b8079de63072d37fe1cbeb4eb001a3bc1f1d662ad89aa0890e > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        adduser=3.152 \
        ibverbs-providers=56.1-1 \
        ibverbs-utils=56.1-1 \
        libamd-comgr2=6.0+git20231212.4510c28+dfsg-3+b2 \
        libamdhip64-5=5.7.1-6+deb13u1 \
        libcbor0.10=0.10.2-2 \
        libcom-err2=1.47.2-3+b12 \
        libdrm-amdgpu1=2.4.124-2 \
        libdrm-common=2.4.124-2 \
        libdrm2=2.4.124-2 \
        libedit2=3.1-20250104-1 \
        libelf1t64=0.192-4 \
        'libevent-core-2.1-7t64=2.1.13-stable-1~deb13u1' \
        'libevent-pthreads-2.1-7t64=2.1.13-stable-1~deb13u1' \
        libfabric1=2.1.0-1.1 \
        libfido2-1=1.15.0-1+b1 \
        libfuse3-4=3.17.2-3 \
        libgssapi-krb5-2=1.21.3-5+deb13u1 \
        libhsa-runtime64-1=6.1.2-3 \
        libhsakmt1=6.2.4+ds-1 \
        libhwloc-plugins=2.12.0-4 \
        libhwloc15=2.12.0-4 \
        libibmad5=56.1-1 \
        libibumad3=56.1-1 \
        libibverbs1=56.1-1 \
        libk5crypto3=1.21.3-5+deb13u1 \
        libkeyutils1=1.6.3-6 \
        libkrb5-3=1.21.3-5+deb13u1 \
        libkrb5support0=1.21.3-5+deb13u1 \
        libllvm17t64=1:17.0.6-22+b2 \
        'libmunge2=0.5.16-1.1~deb13u1' \
        libnl-3-200=3.7.0-2 \
        libnl-route-3-200=3.7.0-2 \
        libnuma1=2.0.19-1 \
        libopenmpi40=5.0.7-1 \
        libpciaccess0=0.17-3+b3 \
        libpmix2t64=5.0.7-1 \
        libpsm2-2=11.2.185-2.1 \
        librdmacm1t64=56.1-1 \
        libucx0=1.18.1+ds-2+b1 \
        libx11-6=2:1.8.12-1 \
        libx11-data=2:1.8.12-1 \
        libxau6=1:1.0.11-1 \
        libxcb1=1.17.0-2+b1 \
        libxdmcp6=1:1.1.5-1 \
        libxext6=2:1.3.4-1+b3 \
        libxml2=2.12.7+dfsg+really2.9.14-2.1+deb13u3 \
        libxnvctrl0=535.171.04-1+b2 \
        libz3-4=4.13.3-1 \
        libze1=1.20.6-1 \
        ocl-icd-libopencl1=2.3.3-1 \
        openmpi-bin=5.0.7-1 \
        openmpi-common=5.0.7-1 \
        openssh-client=1:10.0p1-7+deb13u4 \
        rdmacm-utils=56.1-1 \
        ucx-utils=1.18.1+ds-2+b1; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

RUN printf '%s\n' \
    'nvidia-cublas-cu12==12.9.3.13 --hash=sha256:d7d51055f161b317c7105ddaae90e71eda059026074ffef93cf7cde2886bfe72' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cuda-cupti-cu12==12.9.79 --hash=sha256:096bcf334f13e1984ba36685ad4c1d6347db214de03dbb6eebb237b41d9d934f' \
    'nvidia-cuda-runtime-cu12==12.9.79 --hash=sha256:25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cuda-nvcc-cu12==12.9.86 --hash=sha256:5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0' \
    'nvidia-cuda-nvrtc-cu12==12.9.86 --hash=sha256:210cf05005a447e29214e9ce50851e83fc5f4358df8b453155d5e1918094dcb4' \
    'nvidia-nvjitlink-cu12==12.9.86 --hash=sha256:e3f1171dbdc83c5932a45f0f4c99180a70de9bd2718c1ab77d14104f6d7147f9' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cudnn-cu12==9.28.0.42 --hash=sha256:9ff58b7f36dacd0a93e89f8f2957b52466889217963701daa15e577317cfa375' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cufft-cu12==11.4.1.4 --hash=sha256:c67884f2a7d276b4b80eb56a79322a95df592ae5e765cf1243693365ccab4e28' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-curand-cu12==10.3.10.19 --hash=sha256:49b274db4780d421bd2ccd362e1415c13887c53c214f0d4b761752b8f9f6aa1e' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cusolver-cu12==11.7.5.82 --hash=sha256:15da72d1340d29b5b3cf3fd100e3cd53421dde36002eda6ed93811af63c40d88' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cusparse-cu12==12.5.10.65 --hash=sha256:73060ce019ac064a057267c585bf1fd5a353734151f87472ff02b2c5c9984e78' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-nccl-cu12==2.32.3 --hash=sha256:bb94b2348e4861d5e8aa00b36c3d12d9bdf9c6369b82cbb723de0b582280a21c' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY stack/ /opt/ngc/stack/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-177.tar /
RUN pip install --no-cache-dir --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /opt/ngc/stack/requirements.lock \
 && python -m ngc_runner.lockcheck /opt/ngc/stack/requirements.lock \
 && find /opt/venv -path '*/nvidia/*' -name 'lib*.so*' -printf '%h\n' | sort -u \
      > /etc/ld.so.conf.d/00-ngc-cuda.conf \
 && ldconfig

# NVIDIA_REQUIRE_CUDA lets the NVIDIA container runtime refuse a host whose driver cannot run
# this CUDA (the same table as the org.ngc-builder.min-driver label).
# Every later pip install (framework layers, and users of the image) must keep these exact
# CUDA wheels: a framework that wants other versions fails instead of shipping a second copy.
ENV PIP_CONSTRAINT=/opt/ngc/stack/requirements.txt \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NVIDIA_REQUIRE_CUDA="cuda>=12.9 driver>=525.60.13"
# The stack's versions, for job scripts and site hooks (labels are not visible inside).
ENV CUDA_VERSION="12.9" \
    CUBLAS_VERSION="12.9.3.13" \
    CUDART_VERSION="12.9.79" \
    CUDNN_VERSION="9.28.0.42" \
    NCCL_VERSION="2.32.3"

# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-199.tar /

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
