# Rendered by ngc-builder from templates/framework.Dockerfile.j2 and
# frameworks/caffe/layer.Dockerfile.j2 (release 26.11): do not edit.
# Layer 2: Caffe 1.0.0 on debian-bullseye, with no CUDA stack.
FROM ngc-local/base-debian-bullseye:layer-<digest>

RUN set -e; \
    d="$(mktemp -d)"; \
    mkdir "$d/parts"; \
    echo 'deb [trusted=yes] http://ngc-cache:3149/ apt/2690f2302bda86b760341197ab2c90a6/' > "$d/cache.list"; \
    o="-o Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts -o Acquire::EnableSrvRecords=false"; \
    apt-get $o update --error-on=any; \
    DEBIAN_FRONTEND=noninteractive apt-get $o install -y --no-install-recommends \
        caffe=1.0.0+git20180821.99bd997-8+b2 \
        python3-caffe=1.0.0+git20180821.99bd997-8+b2; \
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
    rm -rf "$d" /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb

COPY requirements.txt requirements.lock /opt/ngc/frameworks/caffe/
RUN python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > /tmp/site \
 && echo /usr/lib/python3/dist-packages > "$(cat /tmp/site)/debian-dist-packages.pth" \
 && rm /tmp/site \
 && python -c "import caffe; print('caffe', caffe.__version__, caffe.__file__)"

COPY probe/ /opt/ngc/probes/caffe/
COPY expect/ /opt/ngc/expect/
