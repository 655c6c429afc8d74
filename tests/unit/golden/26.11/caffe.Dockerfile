# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/caffe/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Caffe 1.0.0 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>
ARG SOURCE_DATE_EPOCH=1795392000
SHELL ["/opt/ngc/bin/ngc-build-shell", "-c"]

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/2690f2302bda86b760341197ab2c90a6/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    set -- \
        caffe=1.0.0+git20180821.99bd997-8+b2 \
        python3-caffe=1.0.0+git20180821.99bd997-8+b2; \
    rm -f /var/cache/apt/archives/*.deb; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends --download-only "$@"; \
    printf '%s\n' \
        004ef11197a1424306d4ad4dab993147cba89790a5b0fc7a0479ec716df63ec9 \
        0608ecb6ed258814e390b52b3fb50f2a6d3239b5ecb1086292ae08be00a67b0f \
        078487a45916167e3e4ee2e584c50306c84368dd06dae276604861ca0426c34e \
        0a02610fb7afeec201fb581ab52b3513fe24ccaa47533d8989ac8e20e05a41d0 \
        0acd83b0ceacca57aa15e8f95df9f4e591071a8408cdac77a69fddb8e956df60 \
        112d552e88ef6fd99e717dd2dae8764fffc11a2787e7452dcc312d34c161a33e \
        122bf3de4ca0ec873bc35bdde1f21ec9d91ace4f5245c3b1240e077f866e1ae9 \
        126d5d9d645dbe4e60c63c55160f3db31372bc7f6351d8b4480a51b40c551ff6 \
        127e6d2728921dd270e60fae11b0175c2d49fcd0c4845e803c0819dc6e5dc175 \
        176a963f1f1181d66c74ad4597b989590a74cb27bf981fbfebac875679e0f0d9 \
        18f3c005d4f0d71bd8a448a2fe26867301f9cfd87197c455f30b879376e89703 \
        1d2a98660a142761aeb64b191bd86b5eff51ff15e05f596874c4abe00a07e9ee \
        1f30f21e55069d28c49dbcff8cab9af71f785565486ad840d86a95674b0ba587 \
        1f67421437b6eb18669d2868e3e02cb88668683d635198142f48aacc5b397118 \
        20c49a384f61bb25166df75c418f82e2d83539abdce3fb0fb01f8fcc3fc2b0aa \
        2249d79265d88eb5d35462b78b7fe019ab46f3f535a3c49a6f482017e954ebe7 \
        22b3130e002c2c2fa6a1124aaccbe3a6ddbbb4d6bf03beed8a6f044027dcb720 \
        24f6668ab58563d8a1005809068b3df00f6639e4657aeef2ceaa93620a100363 \
        25f9564de63a47fcc90763cc4c943a2319928e697aff7622876bd920070171bb \
        288af17a1d3a0955f56c8347ea81bd33534add8b22c5b1b4771d8ac1c85b5ba0 \
        28de780a1605cf501c3a4ebf3e588f5110e814b208548748ab064100c32202ea \
        2b3043e9da483e5b06f74c2c2b9d0990f42bed0750e0adb03d95749a8d32212d \
        2bf5c46254f527865bfd6368e1120908755fa57d83634bd7d316c9b3cfd57303 \
        2d784ab4a922112cc1c3aab0164486e7829fc705913c9ba8bc62a0642d18b8bd \
        2e86ab7a3329aad4b7350a9b067fe8f80b680302f2f82d94f73f9bf075404460 \
        2f5dd7fd7a39d7c39c262238e9af19232977604ac414ae37481be3d847b776aa \
        2fc53f145d40c0e209f31608f0bca7d358f372be80289e0a2b7e777474e2f714 \
        307943e0bdf22a83d34e64a5148520c8b2bc6142ddb2a1432b9efd395e9f9c47 \
        30954583ecba12e8715b7319c6c53f1196855dc1e1de89598fce2d7046306177 \
        315cb60027d9db71d9c15b860263cb33242af2480af6ef90c261372f5c6a5c04 \
        31df76c8a4d3d6d56f167b54493e80fb1009f807fb5ba808387e7a086150641a \
        33b954eb94ff87e9845b68f56578bd3cde7e6ec3850c459f7061868f9137f280 \
        34643f3a134e10adce5addac271ab1d35b1dcb16f7152224902088702622a865 \
        34b3b285f42d89e94e6315ae572ee9bdcb23278538d73b5c5f13526a8da77eae \
        36a962b167b1971f89568feccabe4b027f177fcab4cbf9a1ed66a03d25a161ed \
        3ae74d712766f261e41502a712ec8b471f7514b7fc4ae03fb6df539a553b61ff \
        3d79ee84c42c1d1b58a6e0d7debc7e3c8444147b84412b8248a7789809bc3163 \
        3ebd02002d226aef70e614676774f0c0828d21b22c0743af3b277865e05fcfe7 \
        3facb165fb539f4a0fe702a6f2549f04480de658b17e895382e09c6fb215ed1d \
        40c64f7808d8233c08f3aa2745211e705828b4ae6fc5dbd62a934d8c3e9fd6e5 \
        41318a033fd2725ed2a84989cb5e3c44baa41dc99a525e20a5f914044fe60d9b \
        421040561c52068acb17638b7b2cfc3ec328f56539f6cb947d746a36a742f60c \
        43d6a68b0eda21cc1493bf34147317248a35646f97d0192f8e3613287a229e32 \
        449c14ac28f76a94421d1bd82347a67690069551fb5e8950402711c0d5edcd29 \
        465de156486b6c5e50ce37576c28ec7d1ac2ee3dbe019022a237ca58de61c4a1 \
        48afb6ad7d15e6104a343b789f73697301ad8bff77b69927bc998f5a409d8e90 \
        4b14fa664b1bbb4e659c2b8ac44a068baa80474ebca7d830aeed176493d06f74 \
        4e833c185bf02d75d013f888677d65afa25c5b84769736860d53f9dbb0f349a2 \
        4e8f5c1bce75c2006309e1dcb952675d5760c9f7445b20c8d57c14e760fe7e07 \
        4ea6e4170eca7ed2a1319c1d1a35f661421f4879de01eafaaff15d10b036b753 \
        51124d74266178281236c8bab8ef09aa4be5276db6fcf5eff848bc989bcea271 \
        5198f10990381d4aa303550229559fe27b2e4e9abf37a7fde7d6e5a608fabefe \
        52a0a21e06bb89038a3ab6949020228fbf9dd7897e027233cf0a8c2d111d6c10 \
        54b96a6eec874273fedfcd11e2af695a91830a18b3587ac0d7a68e115a82dc2a \
        54daff607308fadf5662836e422442bef3e4435ad56ca669f3d3de4ff41ba2ab \
        57fd2fd63520c8ffef78adb72adbc64fbac03549897e0708b446950014871fd9 \
        5818b78c029d53a445c128c020164cacea07b5effe6e0b2666bcb2eaf5a96b5f \
        58c93a50b180f8b8935d128438434a0e9407228e6181c4e7312402a486f0ba0a \
        59d2e32149471adee915d6b721726612c873a83f262a041899573a1867e9e450 \
        5a0d21a96ec7a5d50e0c2352ac086dde7dd9cd6018f80f2a74ec6fd4dd47b4bf \
        5ecaed0211a0fd7793abdd3963941ed25faf74ab86273a57ff90a75f9aeae7e3 \
        60b97c0e1189ef09765ff9815780eecc12dcfd264cf8320d22c53ed68d93e7fa \
        63736685c15f63ef6aff102f5703d9a63a189dc1e597bfd3afd53dd9920e9ef4 \
        63f3282c862c7505f5b8e806338c3197ced2b621cc308dd2e3df55e2f41a1384 \
        63fa5520f05d2aea5ca23eee95981a5e029608e1186ded4143470c8f84184158 \
        65ca7d8b03e9dac09c5d544a89dd52d1aeb74f6a19583d32e4ff5f0c77624c24 \
        668403c9537b40280902de700099cc57938edd75a531ed2ac0d59d3c11325622 \
        670f8b30a5a6630897b2a21b381a6245d739320fb1bcef4c789910f82f03116a \
        679db1c4579ec7c61079adeaae8528adeb2e4bf5465baa6c56233b995d714750 \
        6aad859e376566a16afbe53148ec1b8344ef5233a6d8df0f8d4c86d062dbec84 \
        6c67f5e4f1bcfbdbfa7a76f45d0d846d6e53a2f39f91c2941614ff0a3d54e86c \
        6ec5a08a4bb32c0dc316617f4bbefa8654c472d1cd4412ab8995f3955491f4a8 \
        6f2362e89e840e80b6c582a9c7707659a037356dd3e39576700a4e5d9fa2ee58 \
        6f995a83456708a0c67a5c41dc31e5a24a38c1cfeec3a3ecd9c6994171e07a06 \
        6fe41d04ea9ef8c5c684b14585caa7a4a7e04ad6805d59cdd29016960b737123 \
        711cfcd10c08d032844b20fbeb0bd881e303d244faef7426f8bb6600c7f43a0a \
        778cf6dabc49e5e16fc976609e06117bf64fdf5ece56357741b0aba2891b1485 \
        77ad230844b6396b2330ebc0a3de9d1f94c235b51293acf3ffa007047157e49f \
        79405f9eca217388fd97c4a64557d395f365ad40b412174cae96eb0e5d6738c8 \
        7a70e9513e2b3c3a3d68f1614189f0be72b57eae2229aa64a3d7c8a3fe0639c9 \
        7b4fb6fe16c96ffd2b74b1c29a285bb91ce8f986ff89eb712422a5b98f04687e \
        7d5336af395d1f658d0e66d74d0e1f4c632028750e7e04314d1a650e0317f3d6 \
        7e34c4e1e3b85c51ed302af50d30d6ef88889d87e310d50dde2ad31dbae3f606 \
        84c24078e5a05c0360f196a3508aa480f05a957d914fec3ea3e8eda76971579a \
        87022b0aaf76b345ed80a6737326592a6009035a0eb694f475030ad325e91262 \
        87ac7778820cbd7a2c7485f7fccd2ac4437b39cbb390e49b3aeec38a826f5af9 \
        88072c56bf83ab01f97096fac8b8acdfdad7122c01dcb9fd9825ef4ac525d3fe \
        8abc2b1ca77a458bbbcdeb6af5d85316260977370fa2518d017222b3584d9653 \
        8cf27dfefadf290609f59543c889309a5222e775d9ec0088c9b8b16475e1905c \
        8f46ff26b1e6de1fa64626de2464d5743f9630e16a2b3b2b4d555abc2525c76a \
        91f0ca7be710a43e9e7a82b8fe4e28387bee103ff64412c7e690f6b27152f922 \
        9646d69eefce505407bf0437ea12fb7c2d47a3fd4434720ba46b642b6dcfd80f \
        96c380d74b9600ee3c300773c60a7d56a78017ac4a0b98d70b52708c1c7e8fd9 \
        97647869e7e9db643a7eeab949b7d140f9a175814fcc94289be70d426aa5fd1a \
        9854b0866201b63e04f1e446f45f01ef4a6f72c61f2250b75f944f6046cc7e8c \
        9a5cb99d0f33cb11c7f535aaebfb569c6b6f97a75d748a9a52ea3afed5bd3960 \
        9bedc3080902005650ee5ec38ec4906fc667104e1bdb06f1af895025acac7093 \
        9e425b3c128b69126d95e61998e1b5ef74e862dd1fc953d91eebcc315aea62ea \
        9f91a68dc8221cd67b7af765b44fb52401a0dc7609f5c4b926afb6362e475366 \
        a19d4e2aa8f7d692e0e37f09bd9bd098443468b76b7dbbcc7e1aee0b9eda960e \
        a4fb050d9aaf5cd44978164aaa9a1475f09de3838371d83105ea4c1d8a4807a4 \
        a8cc1181a479375aeb603cfe748cc19dc3a700a47ffdcb09fa025fe02b0c73bf \
        a9a5e1f53b7e27a3f2b8388929bb622d3c6c35a4e42ac166697444e5ed662fd5 \
        ab0c0a5a4037f266e691a5faba20fa04aa7f5f82763d8dd61ae9957ef4fbc232 \
        ac04db17b26790bc50344bde8c34d55696dd01a85d79d1001243e7bf5aef6448 \
        acd4271ba56e42298b9fab0fcdad8f319970b50d1026f8469eed968a20f28761 \
        ace5f22edfc057f252a57da7c04145ae298dddc658e3e72dbe7bddd39e03838a \
        ad81bca4874bd0a622422b7f007c411c1fb416acff21dbc1613bf2df563f0dc4 \
        adc6d0c181279be9f9e422d54fed41f7134eda4a352e98d028a67c2413e62e3d \
        b0fd7c43eea64016dd3ebd14bd2d32c2a11f08f7a1692716e10f8a22501784a2 \
        b21cfdd12adf6cac4af320c2485fb62a8a5edc6f9768bc2288fd686f4fa6dfdf \
        b25476561e7380308d6c4c7bb9e8f19dd51ee62705c2615c6aab29ecc882c8d8 \
        b29ea9026561ef0019a57b8b192bf08f725976cd1dddd3fc6bcf876840350989 \
        b5411836f38f8c17fb82f7f826c2fa020b1b4e7237144f2d8d8b0623485e4f9c \
        b57b83ab5a3b1f055860bdf86f9316124f1da3c75fbba5dabbcb3cd3707c95ed \
        b5bde49837bdb1faca8764cf679e45807eed4126e65d92a5391c2d376359c6f3 \
        b7bfa24c9b03e825ed3a970b3fa2b8f5369be1bba42abef2e338e4328fddb455 \
        b92861827627a76e74d6f447a5577d039ef2f95da18af1f29aa98fb96baea4c1 \
        b964e671e6c47674879a3e54130b6737e8760fbd3da6afcc015faa174af98ba0 \
        b9a447dc4ec8714196b037e20a2209e62cd669f5450222952f259bda4416b71f \
        ba622edf73744b2951bbd20bfc113a1a875a9b0c6fed1ac9e9c7f4b54dd8a048 \
        bec23dc18bb37357f34e77e3f9590224b2d0f3bb4d9bb099600fa2d547800aa3 \
        bf18722df8d51fe905fa51ca25d87c11565615cdb8afeb485f51d99427cd38b9 \
        bf4bfda012f05151f68ba4494c09e3dc1bdae556d429c5ede92dc1c5926a37d8 \
        c0bd76340dfe6fcbce6212f236fbf0d845419c1b19caaeaa4aef9524a0f1f426 \
        c0e4ecc494290b6859484ea0e502fa608602ec5101e4139524972d46575b8ca3 \
        c23d9dba9016fd8f191b8969c73c75d99cfd92ced6d684ffeadfef5d207d210a \
        c51364e5681e1268f201a57969a4a029d71d3239be993934fad59428b96f588e \
        c6190966a2410f01f14ce5265e362ba77fdf8c25f3b08b5af71ee05f8d70b09e \
        c6a1e4105d3c4edc246e4740560c9eda0e5fffec72dd03de256cf10f669fbec8 \
        cb7df744865c8908fcad6c6035274f01bcfda03addbd4db2fc45018f6881b6ca \
        cca1a4d3c24358c75964c720445a1ba50467aa52af7fb82a387f460a4a065096 \
        ce14f3a8a4451398302b2df9fe2fa77df8c4f8df8bee125a52cecccbfbd48960 \
        d06bd6cb48aa985c0a62948579364fb74c9f9fc85eaf1948faa27035bde0078d \
        d16c9b4c24c0f3524eeb120082183666ec8cef96445dd2fe9fd0a0b2f310b799 \
        d2c18eee31e2fe8e7c283066f3565f8978ce61a8ffc33ac8a9a11dd9c1618f51 \
        d30aa8231afdf7997f57a7c28be25868f1f60ea01c7bdb1990e030514a74b9a5 \
        d5e0f047ed766f45eb7473947b70f9e8fddbe45ef22ecfd92ab712c0671a93ac \
        d5f710c7db9fcd6d9d6f119cd0dea64a4f765867447dd97b24ab44be1de7c60f \
        d716f5b4346ec85bb728f4530abeb1da4a79f696c72d7f774c59ba127c202fa7 \
        d7ad246c34ead53e167d6c6eb831b6f4ffe3764c5c43bc629d3390d59f924f03 \
        d8e93538920971ed3fde36f1757d32676460419dd12619b037a0602fd3dade15 \
        dadaf0d28360f6eb21ad389b2e0f12f8709c9de539b28de9c11d7ec7043dec95 \
        db80978d150545a90db7b18ab4b7681337dcc69b05ce4b7f3d719db2421cf8cd \
        dbc310a248747ff9e6e13d103d6b7fbdf4603cf2ea7ad149595584d0691a09eb \
        dc525a21b2c8b05a60cc68c8c2a23504d1d486b1c6489b68dcd19bcca2f2b7a1 \
        ddf76cacf5410bc1e0abe69ed73a56b3be2049f61850a419a0fd4b3479795bd0 \
        de742d6045ddbad904a3a2899f48b6d3aba96f234a475e73e76abe0f0f4e051d \
        e1f69020dc2c466e421ec6a58406b643be8b5c382abf0f8989011c1d3df91c87 \
        e23f6617358a526476dc22226ef985fde00f46ee32166d2bb569b6524a9310e9 \
        e411a5de1fb43c3076697b48ec7eb36d4c98e6359d6717b34adfdd40b49fb9d5 \
        e54cfe4d8b8f209bb7df31a404ce040f7c2f9b1045114a927a7e1061cdf90727 \
        e62caed68b0ffaa03b5fa539d6fdc08c4151f66236d5878949bead0b71b7bb09 \
        e81cb1b4a3aa739fa5bcfceb043c3bd47233b4f5a36f88ad2de1f05a83d6ec2b \
        ebef6bcd777b5c0cc2699926f2159db08433aed07c50cb321fd828b28c5e8d53 \
        ecb8536f5fb34543b55bb9dc5f5b14c9dbb4150a7bddb3f2287b7cab6e9d25ef \
        ecdcec5a0c46cd2db4cead315082c08d8a42cf28757eae39a1865b9d82c5eec1 \
        f0a132f0a54e55eeb6db2d74ff669716b633d3b913ccb406766c7d6f7763512e \
        f1fce73017d6bb3118496f6ea2ea1023d2359a99f3e1b7c14195910a615e7ce7 \
        f21e67cc47debac8870c464dbc766978328abb3b60ad7f84555b8f068d989452 \
        f99e76456459aa19ac5f610096c7054994130597931abf660b82436c477ff03e \
        fd6436efe71e465fac68acc00911d34e0eed8c5c0627c3f2d0de3bcc9edcb24b \
        fe8c8955be71be9f744729b73c73cc6bc01184daf253604f1d3ee16a8d64d30d \
        ff4ccb73fee9356ac1e76f05a23891075f7bc4445b0a746eb96de39975b65a4b > "$d/sha256"; \
    for f in /var/cache/apt/archives/*.deb; do \
        [ -e "$f" ] || continue; s="$(sha256sum < "$f")"; s="${s%% *}"; n="${f##*/}"; grep -qxF "$s" "$d/sha256" || { printf 'ngc-builder: %s: sha256 %s is not the locked one: refused before dpkg\n' "${n%%_*}" "$s" >&2; exit 1; }; done; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends "$@"; \
    for p in \
        caffe=1.0.0+git20180821.99bd997-8+b2 \
        cython3=0.29.21-3+b1 \
        fontconfig-config=2.13.1-4.2 \
        fonts-dejavu-core=2.37-2 \
        fonts-lyx=2.3.6-1 \
        gdal-data=3.2.2+dfsg-2+deb11u2 \
        libaec0=1.0.4-1 \
        libaom0=1.0.0.errata1-3+deb11u1 \
        libarmadillo10=1:10.1.2+dfsg-6+b1 \
        libarpack2=3.8.0-1 \
        libblas3=3.9.0-3+deb11u1 \
        libboost-filesystem1.74.0=1.74.0-9 \
        libboost-python1.74.0=1.74.0-9 \
        libboost-thread1.74.0=1.74.0-9 \
        libbrotli1=1.0.9-2+b2 \
        libbsd0=0.11.3-1+deb11u1 \
        libcaffe1=1.0.0+git20180821.99bd997-8+b2 \
        libcfitsio9=3.490-3 \
        libcharls2=2.2.0+dfsg-2 \
        libcurl3-gnutls=7.74.0-1.3+deb11u13 \
        libdap27=3.20.7-6 \
        libdapclient6v5=3.20.7-6 \
        libdav1d4=0.7.1-3+deb11u1 \
        libde265-0=1.0.11-0+deb11u3 \
        libdeflate0=1.7-1 \
        libepsilon1=0.9.2+dfsg-5 \
        libfontconfig1=2.13.1-4.2 \
        libfreetype6=2.10.4+dfsg-1+deb11u1 \
        libfreexl1=1.0.6-1 \
        libfyba0=4.1.1-7 \
        libgdal28=3.2.2+dfsg-2+deb11u2 \
        libgdbm-compat4=1.19-2 \
        libgdbm6=1.19-2 \
        libgdcm3.0=3.0.8-2 \
        libgeos-3.9.0=3.9.0-1 \
        libgeos-c1v5=3.9.0-1 \
        libgeotiff5=1.6.0-1 \
        libgflags2.2=2.2.2-2 \
        libgfortran5=10.2.1-6 \
        libgif7=5.1.9-2 \
        libgoogle-glog0v5=0.4.0-4 \
        libhdf4-0-alt=4.2.15-3 \
        libhdf5-103-1=1.10.6+repack-4+deb11u1 \
        libhdf5-hl-100=1.10.6+repack-4+deb11u1 \
        libheif1=1.11.0-1 \
        libicu67=67.1-7 \
        libilmbase25=2.5.4-1 \
        libimagequant0=2.12.2-1.1 \
        libjbig0=2.1-3.1+b2 \
        libjpeg62-turbo=1:2.0.6-4 \
        'libjs-jquery=3.5.1+dfsg+~3.5.5-7' \
        libjs-jquery-ui=1.12.1+dfsg-8+deb11u2 \
        libjson-c5=0.15-2+deb11u1 \
        libkmlbase1=1.3.0-9 \
        libkmldom1=1.3.0-9 \
        libkmlengine1=1.3.0-9 \
        liblapack3=3.9.0-3+deb11u1 \
        liblbfgsb0=3.0+dfsg.3-9 \
        'liblcms2-2=2.12~rc1-2' \
        libldap-2.4-2=2.4.57+dfsg-3+deb11u1 \
        libleveldb1d=1.22-3 \
        liblmdb0=0.9.24-1 \
        libltdl7=2.4.6-15 \
        liblzf1=3.6-3 \
        libmariadb3=1:10.5.23-0+deb11u1 \
        libmd0=1.0.3-3 \
        libminizip1=1.1-8+deb11u1 \
        libnetcdf18=1:4.7.4-1 \
        libnghttp2-14=1.43.0-1+deb11u1 \
        libnspr4=2:4.29-1 \
        libnss3=2:3.61-1+deb11u3 \
        libnuma1=2.0.12-1+b1 \
        libodbc1=2.3.6-0.1+b1 \
        libogdi4.1=4.1.0+ds-5 \
        libopencv-core4.5=4.5.1+dfsg-5 \
        libopencv-imgcodecs4.5=4.5.1+dfsg-5 \
        libopencv-imgproc4.5=4.5.1+dfsg-5 \
        libopenexr25=2.5.4-2+deb11u1 \
        libopenjp2-7=2.4.0-3 \
        libperl5.32=5.32.1-4+deb11u3 \
        libpng16-16=1.6.37-3 \
        libpoppler102=20.09.0-3.1+deb11u1 \
        libpq5=13.16-0+deb11u1 \
        libproj19=7.2.1-1 \
        libprotobuf23=3.12.4-1+deb11u1 \
        libpsl5=0.21.0-1.2 \
        libpython3.9=3.9.2-1 \
        libqhull8.0=2020.2-3 \
        libquadmath0=10.2.1-6 \
        librtmp1=2.4+20151223.gitfa8646d.1-2+b2 \
        librttopo1=1.1.0-2 \
        libsasl2-2=2.1.27+dfsg-2.1+deb11u1 \
        libsasl2-modules-db=2.1.27+dfsg-2.1+deb11u1 \
        libsnappy1v5=1.1.8-1 \
        libsocket++1=1.12.13-11 \
        libspatialite7=5.0.1-2 \
        libssh2-1=1.9.0-2+deb11u1 \
        libsuperlu5=5.2.2+dfsg1-2 \
        libsz2=1.0.4-1 \
        libtbb2=2020.3-1 \
        libtiff5=4.2.0-1+deb11u5 \
        libunwind8=1.3.2-2 \
        liburiparser1=0.9.4+dfsg-1+deb11u1 \
        libwebp6=0.6.1-2.1+deb11u2 \
        libwebpdemux2=0.6.1-2.1+deb11u2 \
        libwebpmux3=0.6.1-2.1+deb11u2 \
        libx265-192=3.4-2 \
        libxau6=1:1.0.9-1 \
        libxcb1=1.14-3 \
        libxdmcp6=1:1.1.2-3 \
        libxerces-c3.2=3.2.3+debian-3+deb11u1 \
        libxml2=2.9.10+dfsg-6.7+deb11u4 \
        libyaml-0-2=0.2.2-1 \
        mailcap=3.69 \
        mariadb-common=1:10.5.23-0+deb11u1 \
        mime-support=3.66 \
        mysql-common=5.8+1.0.7 \
        odbcinst=2.3.6-0.1+b1 \
        odbcinst1debian2=2.3.6-0.1+b1 \
        perl=5.32.1-4+deb11u3 \
        perl-modules-5.32=5.32.1-4+deb11u3 \
        proj-data=7.2.1-1 \
        python-matplotlib-data=3.3.4-1 \
        python3-backcall=0.2.0-1 \
        python3-caffe=1.0.0+git20180821.99bd997-8+b2 \
        python3-cycler=0.10.0-3 \
        python3-dateutil=2.8.1-6 \
        python3-decorator=4.4.2-2 \
        python3-gflags=1.5.1-7 \
        python3-h5py-serial=2.10.0-9+b2 \
        python3-imageio=2.4.1-3 \
        python3-ipython=7.20.0-1+deb11u1 \
        python3-ipython-genutils=0.2.0-4 \
        python3-jedi=0.18.0-1 \
        python3-kiwisolver=1.3.1-1+b1 \
        python3-matplotlib=3.3.4-1 \
        python3-networkx=2.5+ds-2 \
        python3-nose=1.3.7-7 \
        python3-numpy=1:1.19.5-1 \
        python3-pandas=1.1.5+dfsg-2 \
        python3-pandas-lib=1.1.5+dfsg-2 \
        python3-parso=0.8.1-1 \
        python3-pexpect=4.8.0-2 \
        python3-pickleshare=0.7.5-3 \
        python3-pil=8.1.2+dfsg-0.3+deb11u2 \
        python3-pkg-resources=52.0.0-4 \
        python3-prompt-toolkit=3.0.14-1 \
        python3-protobuf=3.12.4-1+deb11u1 \
        python3-ptyprocess=0.7.0-1 \
        python3-pygments=2.7.1+dfsg-2.1 \
        python3-pyparsing=2.4.7-1 \
        python3-pywt=1.1.1-1+b2 \
        python3-scipy=1.6.0-2 \
        python3-six=1.16.0-2 \
        python3-skimage=0.18.1-2 \
        python3-skimage-lib=0.18.1-2 \
        python3-tifffile=20210201-1 \
        python3-traitlets=5.0.5-1 \
        python3-tz=2021.1-1 \
        python3-wcwidth=0.1.9+dfsg1-2 \
        python3-yaml=5.3.1-5 \
        sensible-utils=0.0.14 \
        ttf-bitstream-vera=1.10-8.1 \
        ucf=3.0043; do \
        n=${p%%=*}; v=${p#*=}; f="$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$n" 2>/dev/null || true)"; [ "$f" = "installed $v" ] || { echo "ngc-builder: $n: locked $v, found ${f:-not installed}" >&2; exit 1; }; done; \
    rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \
    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock ! -name partial -exec rm -rf {} +

# COPY requirements.txt requirements.lock /opt/ngc/frameworks/caffe/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-349.tar /
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /usr/lib/python3/dist-packages > "$(cat /tmp/site)/debian-dist-packages.pth" \
 && rm /tmp/site \
 && python -c "import caffe; print('caffe', caffe.__version__, caffe.__file__)"

# COPY probe/ /opt/ngc/probes/caffe/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-355.tar /
# COPY expect/ /opt/ngc/expect/: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-356.tar /
# COPY workspace/README.md /workspace/README.md: as a tar, dated SOURCE_DATE_EPOCH
ADD copy-357.tar /
# What job scripts read: the framework's version, the product and the release.
ENV NVIDIA_PRODUCT_NAME="Caffe" \
    CAFFE_VERSION="1.0.0" \
    NVIDIA_CAFFE_VERSION="26.11" \
    NGC_RELEASE="26.11"

# Builds on this image get Docker's default shell.
SHELL ["/bin/sh", "-c"]
