# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/lua-torch/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Torch (Lua) 7.0 on debian-trixie, with no CUDA stack.
FROM ngc-local/base:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/a5880158b8c00436f49eea08f560a5f9/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        build-essential=12.12 \
        cmake=3.31.6-2 \
        luarocks=3.8.0+dfsg1-1; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        002da5d23f8757dee97a2c0a40e0e1d4d85a43da094488ee2ee7068d4d3691f9 \
        04c28c2760b0094b3d7758154ac095303dd00599b63ebad4086a325b607308b7 \
        0b11ad17be0300b63ad4eeb4c6450fed24d34b7b740f23e5363dcb29ee6d5eba \
        0d36d0bde85c467ac6735dded08e19dd30ae1369e3908b9eb48ccc0d6ff66648 \
        0dedddfe614fc4a4335c9167b73c64a50136edd76b7991aa851408d0795163eb \
        0fb79f88db210afbd69282ab9649e525f393ec6950ca34da1a6b359250b8d7db \
        120cafcd93132a276fa92a8fb4cf39b23d14e5a3e348f4f5580638d71ca95ac5 \
        12e06195a899e8db371803ed70111fc7302573d3ed84e967d3d48ef2d543ace8 \
        15e10fc3948ec76be8d51b23e75ad9df9c39588c94f1f47059cee02c117c7583 \
        18a8bdfd91c7e3bcb01719d55a2b56849c7160b34f1f52b1c4fdfdd41bf1352b \
        1fda734dabcd80b77266a09ab62b0f1e3e16d8091db62899890b2200745632a2 \
        212b399aae2f7299203d261a57e49372e09565a9a5ea971905f94a3960366c05 \
        21500408b5019d8d29f70ce58488e2eea469a1adb4b5fd7db45e819b5efcac4e \
        23fec6e06583ce2bad9b2c04c9b485e90440e259b1abf8677cd80d3ce60831ad \
        269cf79d76b67d55a540ae1de55f8420fb46e2f867d5309da4f1ee38bd07a1db \
        2af0a5c128e03694a41c0b011bd8a958b7297436cdb3a15ddad7866dae8c300b \
        2c21175d6a8283ed566d154c0c0bc06f60836e53b0b9e1f74c14eac586b68c24 \
        2cbd43cf2dfbf57ff48188b5d79d29cf7ea8f0dedaa61ab0bcc02eceff50ea01 \
        2cdaf797cad8ac30a964ab081370682dd065ae1b0305a0be9d8e0e14cd0657d7 \
        2d587e3bfba4aec701946b7ba0c1640b97b6d8dd0a34ba1c70ae85261ecedefa \
        30847c1fde4240567d7ed3aeab4f655dd591203758b857e85e824045aae70299 \
        32ac0692694f8a34cc90c895f4fc739680fb2ef0e2d4870a68833682bf1c81a3 \
        35b7ee1f2afbced2c356d5f7486ff5a05a961628fe7c7f08c582b6b2843e6489 \
        363759cbaccd47f06b972e578ea6112e50c833d728b7a11e15609764665dabbc \
        388e4c33b72829cbf0d098afdc8539fa5ba7458eddb077f5538fdb4d5538716b \
        38f625dfdc582717029ac3a3e97c51d994ec2e7a0e9b230c6b44e40d1276311f \
        3a0acd8b37955c0e102c756b52c97df2a31f67b96453c35dab70df218d309117 \
        3bae5fe03c56c6d021900ab4fb79e35c6f75eee72a73fccc6f28a39db559d6a0 \
        4706ab29eab3d81e93582b45b229fdedc71f1eec3071996a448cf2c8beb83f3a \
        47d71d6a7f2e59b9bae5f89602397594805113b95889ad18fa703cd53abafc97 \
        4b962fac5f1af0bd8b1b3f97e0f47b9d8e9a79e88802143f00ebfbd78ad87a7b \
        4c46cdd8f3135aa1c95f07e817f8e5d9be590687441ac1c27e3a8c49400f35ce \
        4db90bb6776772fc52585d6b1fbfc52ec2a85480e1b4363b743fbb2ffa2a5375 \
        4f4664c8a8f0ad0c8631c39fab02e3d8d86ccc6f4436a1d59f059dbcb0492679 \
        529d7f68227d16975076c5f842e8b687faea1b5df8e0dcf62e436d5402844ca5 \
        5649cad63c781b2dcf5a7b87d70b3bf789291cd0d6bcabc4d521211f94980683 \
        59d42bb1f9ebc0d1776fe616efb08a7a8568b05982e00f70b03c63863db768ab \
        5fec8035002e0c745b64d1c5b3e1dc42790d1a77574315b976cf3e4aab9ddc0a \
        60069e4a550ca890113fa89d3001417781b18e146ec5d637d31e368dec9909bd \
        60707a62fe6c1228c3389b12a13ca4efd76defc5532473e547a29e99cf7d2a6e \
        66e49d7ae026811b49a0050f18b0325960a2625ffd1ff60d91b7844a815fa9d2 \
        6b5fbe71f0fc41e85919bc4b3c514e6c47577c5005dbf1f5af6e4a49cc221aab \
        6bc08c02539ba53b5e748142397144c499f9b20b5fa9bb56431545db124addeb \
        6bd7804e243fc08e2a2af380c341998bb6d21dd35550588ecc430d7c488a410d \
        6d4020421740a70e1fb9c41b07f8bb8306d93aef6fea1a8ce11a1f839921f414 \
        6dd3490bef06ea1096f32d10766b7e016cf579bfae8451d1b7df15ce05b8aa46 \
        70a9709e665383b06068ccd423d62ea191b65355f318a25565dbf324b254cec6 \
        75dddce11dabc7fc543712c33dc27b7f2ee66a111763eb5eac654d010b42cd92 \
        771899ade7310fe31aa538a509354c33d62bbe4e408b4e5fc1e513988dc42645 \
        784bf2063e166c8bc851a32623b74ebd85c499043a9d57c5bbd64fa63447f45a \
        7da07ee674b47f1f0be7cc89317c25310086a1f1761217d0f72e6ae2c5a69b84 \
        7ebffb08d6874dbed13665911fd43f2f7782d1ea55dd8f5399077c44a47ab123 \
        80c46a0085b33acc74bf451fddb6a70cb43d4ebcc4a873aec04d8d0a63ffc630 \
        896cb217537c09251fb909b8541349010ac279d802d871e98c06a62a2c67ce2c \
        90b039bcdc4578f8e1c4935adf8dbb525e36a164deefdbbb8c45bac347d48278 \
        9205a1bef7d6a52ffc06548e0cde169ff303e688c12d9be3a98f734449077e22 \
        93baa2004cbe6c8721b9e81beed078612540aef120970b4751305c51c6697368 \
        98e2333aea8d64ca68f9b75c16256d3a05492fd8f9e6dba96adbc6f19e4f5a09 \
        9bf56d7d8ce3e7680a0dd8e3cfe8acdf50e0aa3b98b0a907cf744a4d1711af72 \
        9e0a39d95373afdaad3c9dfaab3c8b0beb9a2c4654e6be10b4bcf458509a3217 \
        a0df07da76287a45e665d584363dc2a6a1c4e240aee41b8bbc0f67cdff97cd68 \
        a17ef039f1ba482051c3efb5c2c24070002e60dd0bd09fd456ec31481a11b725 \
        a45159aebea0d98d6652ac5a56b7fff164a7733a7dc736b9f8715ca504519d3a \
        a5c38659fbd62c33c6d9bfa2be43e75a572d1818531aad32dd74d0a58cc4bd19 \
        a6ba40550aadec80437813e0fce5516574945ff40e72306a5b378c03af3a6544 \
        ac8518042e81c00de1effb72bba7e88ac4ecd488f7ea8b9e3ebc63159cb53b35 \
        b41eaeb4879091023f8c1a058510844a244d3d0bd0f437e0e05d58213e36fd9f \
        bd43e020b8fed399db3eebf098111f10fba4c436fff99ccad72cc7e27c9764ec \
        c5ef1d9791fa731b20a0320dbeef57d33332ca4cb4ecf3a0d2e95f647549bd75 \
        c66b009fedd340520279d1af2f91d0668e9f64f0c08fe62179ca1c75e556be58 \
        c95b5523e18feec8c4c2843e31bf2419d08bf118d6b1d20b5b88a01c5d9b063f \
        c9d61caab1b2ddfc3f17edb95be31b9809fcb2daf27d853dff615bc4ebd08b4b \
        ca6f2d36d96b19b3eb71405b0b80134d8c89380b02204a2512e5c58ceb090628 \
        d902f484e38bce59e82efc0df2fe20139a0932ca759ecafdfe6e5b6c72238eb8 \
        d9060145be892f43cd1888024114ceab019c81479d4b0a3383fe14cebe2295cb \
        dbb1024c192d4d292b7cfa902b96076cfe81b56a5eed4fb28da36e8bf543e49a \
        dc68dd53c7356598d005866da0d19d7bd33af2a62971aced624cdf04492902b4 \
        dee2fc94973325240604ffbca677a3f16b462fb6520946bd81be1ecbac770a02 \
        e00cbcc8c0826993f881f492c05f33ba8d79b5375dc5a2ab59c82e0c7b9179a9 \
        e0c6b63ce4602a036a526f60fe5e6c1586710688058d98fc1001b9b3147b7efd \
        e280b2be3db6e584500e865c251605b95c346767d87ccb2524e44992048fc657 \
        e44777ff47ad248d1debd57e1f96ab5e89061a341008ae39880ba3b5fc15f273 \
        e6741ce95ff0f7a131c8d9faa3528ccbbc453078bbc62a97da81340ed7462c53 \
        e7b42c68c391e278733adb3c1efdacd24d660862bd7bac0efbc10a91e5696dfc \
        e98fb0eaa8d07fd24bbaefd3b2bd356b8c6df241865780c42adb08f7ebcf8563 \
        eee65c41a441c57c05f754ced1b9d093956966a1c7da9938c3ec00d3dc2f905d \
        ef145c247787d6f40dcdefd5b417502484827cde0d555998c17fd5b27ec1e1dd \
        ef274b5379f5f97fc71619d39ecc84d039d3e184570d207b909c90afaa5d79e0 \
        f5b51cf0ece3ec3bb7494d0cdbff3ce715ae00cfb2b6ed787f7db91319d64a7b \
        f86661c021ab2acb39ceb87315e7c2d4d420fdadc19945d5d589f3953410445c \
        fc11f8736bdec6fc46a6864f75bce0c8206a790df37dbcab5ddb25b1bf0f58f0 \
        fd0b75839fe7b1a08df49e4203b1fb042df4f7d982db8d91c1fd7bdbcd4b1460 \
        febdb3c528cde1a3abe952e17a1d3cfa7ccaca5b6f506d983d34385dad199490 > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
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
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/lua-torch-rocks/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-208.tar /
RUN luarocks install torch

# COPY probe/ /opt/ngc/probes/lua-torch/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-211.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-212.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-213.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Torch (Lua)" \
    LUA_TORCH_VERSION="7.0" \
    NVIDIA_LUA_TORCH_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
