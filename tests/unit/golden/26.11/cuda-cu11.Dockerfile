# Rendered by ngc-builder from templates/cuda.Dockerfile.j2: do not edit.
# Layer 2: CUDA stack cu11 (CUDA 11.7) from NVIDIA's PyPI wheels, installed
# once here and shared by every framework image built on it.
FROM ngc-local/base-debian-bookworm:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

# The multi-node userspace (rdma-core, UCX, Open MPI): the lock's .debs, as every layer's.
RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/8a1a61b31246c38295a24b37b7b0e19f/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        ibverbs-providers=44.0-2 \
        ibverbs-utils=44.0-2 \
        libibverbs1=44.0-2 \
        openmpi-bin=4.1.4-3+b1 \
        rdmacm-utils=44.0-2 \
        ucx-utils=1.13.1-1; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        0fdcc425ae2982788c085c76a7cb0eda3e3db99d41bd1ce56082ee18e9f1e21f \
        16b18625834371d023b81477823074ea0d34c478d58dbef3f01107984f47d034 \
        1cf14abf2716d3279db12d0657a5737cf70074a1e71d3bdf73206625e3c89ce6 \
        1df0b3acb9a55e43152621015f941457fe63cb9866868f2c2df2c20d34604a22 \
        35054815259fee46173240254246d03b673a5cd5c528aaac96fd15ac428a8d59 \
        38ad6400906ae84345362aa366c7a1900e9cbcce06fb6ed35bf5dab414ec2939 \
        3c9907fd96a4ae7effb5faa178bd3648344a521f6bcca2c23c9f2dd214cf1192 \
        4025f3608cf431c163efb94fdc553e7b93e16b8f0d741ea87762e19025ffc80e \
        42c250b8b9110382488c53c066a960bc564ddac2cb9e449f47b6cdbb5fc1cb60 \
        42c66fbf7746b44abfe1f4ff74c00bc272ad947ad65214b8610361695f8f7262 \
        4460e39dda10a815881374217cde08474747cfa018358cd8612c14b390eff53b \
        4cebf4a24fb222ddbc5569df9960c5ff2da8b7ed71a02e13c79a59dcaf3b518a \
        4e7194b5d9adbb1a7d11a9501a4be4a4fa22876b69c73b7998056f552962c0e4 \
        504b7be9d7df4f6f4519e8dd4d6f9d03a9fb911a78530fa23a692fba3058cba6 \
        533a38220c7f2a38a1130f5f80033d1a07723880fa352299b22a10ba99ce826e \
        555300f03e3c3b02d13dc1c44ece592728b790b71a0d138ebe695d4e267bf8bb \
        5f1a69772052fe5df1730a7511d069fda506a395cd5defd744d9c5626f22d57b \
        610423d011908d21d8bbda185af96d63cd8b3b8a90ab187e0992253eae249049 \
        639e1ab6bd66ead40db8a22c332d7199679fa22db261cac34444eb8eb4c17dda \
        679db1c4579ec7c61079adeaae8528adeb2e4bf5465baa6c56233b995d714750 \
        6fc26e4b6069f4648692e0c225f580161e3b0c04e4bac1c616c8a418a9a9817d \
        798bbe7f492e176c287fc211e4a670eb64b10952720a036927357980d9a4a4b0 \
        872325ca09249b99e7cfe9e41da438b31084f32f969f80f85813482a4ae2ff37 \
        8cbd111e1ad1c1357afb18f916c88c7ebb8cc860b8fac04ccc66a9eefe5a53af \
        987a848aeb1c358e4186368871b0526f10bb14c6b53214ab3bf8b69abb830191 \
        acbb84293aa092a49a457a724d293ff0bcceabf297f2828ef9e8cad08b28fc99 \
        bb31cc8b40f962a85b2cec970f7f79cc704a1ae4bad24257a822055404b2c60b \
        bd9ea195418233ddcfd9c64b66c97feb23ff5dd4e0ed4a29039199cb48f4f218 \
        d1fc3e9eb8e79b4c96b0a64c3d8c9e068ae2f665cab71bd19f417ffd0453a890 \
        d8245d4c857b40850305e69991cba309ca699de27cfb131c7a139c3ada2bb0f5 \
        d88c973e79fd9b65838d77624142952757e47a6eb1a58602acf0911cf35989f4 \
        dba89cd91adcb886ce1972122e55768aa3652cb562a6b26c5983c2d482a30a1e \
        ddd8509c0430545173752bed272c7f44f8b5f7d125265b20456207aaefbb52c8 \
        ecb8536f5fb34543b55bb9dc5f5b14c9dbb4150a7bddb3f2287b7cab6e9d25ef \
        f636d9893abece6a62ff943102b0caebeea8ba05c110550f5c8e6f01b015d3b5 \
        f7f6f99c6d7b025914df2447fc93e11d22c44c0c8bdd8b6f36691c9e7ddcef88 \
        fbd4e154a6b444229ea002cc209df099209c0adc09102e5fd21239a3d2b55e2d \
        fdc61332a3892168f3cc9cfa1fe9cf11a91dc3e0acacbc47cbc50ebaa234cc71 \
        fe19bbea5a23897618ef4c54b097366a834bd6c7157276ef4375d053ac2ecd1e > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        ibverbs-providers=44.0-2 \
        ibverbs-utils=44.0-2 \
        libatomic1=12.2.0-14+deb12u1 \
        libbsd0=0.11.7-2 \
        libcbor0.8=0.8.0-2+b1 \
        libedit2=3.1-20221030-2 \
        libevent-core-2.1-7=2.1.12-stable-8 \
        libevent-pthreads-2.1-7=2.1.12-stable-8 \
        libfabric1=1.17.0-3 \
        libfido2-1=1.12.0-2+b1 \
        libhwloc-plugins=2.9.0-1 \
        libhwloc15=2.9.0-1 \
        libibverbs1=44.0-2 \
        libicu72=72.1-3+deb12u1 \
        libmunge2=0.5.15-2+deb12u1 \
        libnl-3-200=3.7.0-0.2+b1 \
        libnl-route-3-200=3.7.0-0.2+b1 \
        libnuma1=2.0.16-1 \
        libopenmpi3=4.1.4-3+b1 \
        libpciaccess0=0.17-2 \
        libpmix2=4.2.2-1+deb12u1 \
        libpsm-infinipath1=3.3+20.604758e7-6.2 \
        libpsm2-2=11.2.185-2 \
        librdmacm1=44.0-2 \
        libucx0=1.13.1-1 \
        libx11-6=2:1.8.4-2+deb12u2 \
        libx11-data=2:1.8.4-2+deb12u2 \
        libxau6=1:1.0.9-1 \
        libxcb1=1.15-1 \
        libxdmcp6=1:1.1.2-3 \
        libxext6=2:1.3.4-1+b1 \
        'libxml2=2.9.14+dfsg-1.3~deb12u6' \
        'libxnvctrl0=525.85.05-3~deb12u1' \
        ocl-icd-libopencl1=2.3.1-1 \
        openmpi-bin=4.1.4-3+b1 \
        openmpi-common=4.1.4-3 \
        openssh-client=1:9.2p1-2+deb12u10 \
        rdmacm-utils=44.0-2 \
        ucx-utils=1.13.1-1; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

RUN printf '%s\n' \
    'nvidia-cublas-cu11==11.10.3.66 --hash=sha256:d32e4d75f94ddfb93ea0a5dda08389bcc65d8916a25cb9f37ac89edaeed3bded' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cuda-cupti-cu11==11.7.101 --hash=sha256:e0cfd9854e1f2edaa36ca20d21cd0bdd5dcfca4e3b9e130a082e05b33b6c5895' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cuda-nvrtc-cu11==11.7.99 --hash=sha256:9f1562822ea264b7e34ed5930567e89242d266448e936b85bc97a3370feabb03' \
    'nvidia-cuda-runtime-cu11==11.7.99 --hash=sha256:cc768314ae58d2641f07eac350f40f99dcb35719c4faff4bc458a7cd2b119e31' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cudnn-cu11==8.5.0.96 --hash=sha256:402f40adfc6f418f9dae9ab402e773cfed9beae52333f6d86ae3107a1b9527e7' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cufft-cu11==10.9.0.58 --hash=sha256:e21037259995243cc370dd63c430d77ae9280bedb68d5b5a18226bfc92e5d748' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-curand-cu11==10.2.10.91 --hash=sha256:eecb269c970fa599a2660c9232fa46aaccbf90d9170b96c462e13bcb4d129e2c' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cusolver-cu11==11.4.0.1 --hash=sha256:72fa7261d755ed55c0074960df5904b65e2326f7adce364cbe4945063c1be412' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-cusparse-cu11==11.7.4.91 --hash=sha256:a3389de714db63321aa11fbec3919271f415ef19fda58aed7f2ede488c32733d' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-nccl-cu11==2.14.3 --hash=sha256:5e5534257d1284b8e825bc3a182c6f06acd6eb405e9f89d49340e98cd8f136eb' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

RUN printf '%s\n' \
    'nvidia-nvtx-cu11==11.7.91 --hash=sha256:b22c64eee426a62fc00952b507d6d29cf62b4c9df7a480fcc417e540e05fd5ac' \
  | pip install --no-cache-dir --no-deps --require-hashes --index-url http://ngc-cache:3149/simple/ --trusted-host ngc-cache -r /dev/stdin

# COPY stack/ /opt/ngc/stack/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-145.tar /
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
    NVIDIA_REQUIRE_CUDA="cuda>=11.7 driver>=450.80.02"
# The stack's versions, for job scripts and site hooks (labels are not visible inside).
ENV CUDA_VERSION="11.7" \
    CUBLAS_VERSION="11.10.3.66" \
    CUDART_VERSION="11.7.99" \
    CUDNN_VERSION="8.5.0.96" \
    NCCL_VERSION="2.14.3"

# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-167.tar /

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
