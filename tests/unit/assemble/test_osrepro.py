"""The reproducible OS base's pure pieces: the lock of an image's packages from dpkg and apt
output, the flat repository and mmdebstrap command, the canonical tarball, the image config
and the docker-archive, and loading it into a fake engine (mmdebstrap itself never runs)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pytest

from ngc_builder.assemble import osrepro
from ngc_builder.assemble.osrepro import (
    flat_repo,
    image_config,
    load_rootfs,
    locked_os_packages,
    match_installed,
    mmdebstrap_command,
    normalise_tar,
    parse_installed,
    reproducible_rootfs,
    write_archive,
)
from ngc_builder.errors import StepError
from ngc_builder.lock.models import AptPackage
from ngc_builder.services.engine import Engine
from tests.unit.cache.test_apt_repo import make_deb
from tests.unit.fake_engine import FakeApi, FakeClient, FakeEngine

pytestmark = pytest.mark.unit

EPOCH = 1_763_856_000  # 2025-11-23T00:00:00Z
LATER = EPOCH + 86_400
REF = "ngc-local/os-debian-trixie:13"


def package(name: str, version: str = "1.0", arch: str = "amd64") -> AptPackage:
    return AptPackage(name=name, version=version, arch=arch, size=3,
                      sha256=hashlib.sha256(f"{name}={version}".encode()).hexdigest(),
                      file=f"pool/main/{name[0]}/{name}/{name}_{version}_{arch}.deb")


def stanza(p: AptPackage) -> str:
    return (f"Package: {p.name}\nVersion: {p.version}\nArchitecture: {p.arch}\n"
            f"Filename: {p.file}\nSize: {p.size}\nSHA256: {p.sha256}\n")


def test_only_installed_packages_are_the_images_set() -> None:
    lines = ["installed dash 0.5.12-12 amd64", "config-files old 1.0 amd64",
             "installed base-files 13.8 amd64", "W: noise", ""]
    assert parse_installed(lines) == [("base-files", "13.8", "amd64"),
                                      ("dash", "0.5.12-12", "amd64")]


def test_each_installed_version_gets_its_archive_record() -> None:
    dash, tzdata = package("dash", "0.5.12-12"), package("tzdata", "2025b", "all")
    stanzas = [dict(line.split(": ", 1) for line in stanza(p).splitlines())
               for p in (tzdata, dash)]
    found = match_installed(REF, [("tzdata", "2025b", "all"), ("dash", "0.5.12-12", "amd64")],
                            stanzas)
    assert found == [dash, tzdata]
    with pytest.raises(StepError, match=r"no file for dash=0.5.12-13, tzdata=2025b"):
        match_installed(REF, [("dash", "0.5.12-13", "amd64"), ("tzdata", "2025b", "amd64")],
                        stanzas)


def test_locking_an_image_reads_dpkg_then_apt(monkeypatch: pytest.MonkeyPatch) -> None:
    dash = package("dash", "0.5.12-12")
    output = "\n".join(["@@ngc installed", "installed dash 0.5.12-12 amd64", "@@ngc rc 0",
                        "@@ngc update", "Get:1 http://mirror trixie InRelease", "@@ngc rc 0",
                        "@@ngc show", stanza(dash), "@@ngc rc 0"])
    scripts: list[str] = []

    def run_script(engine: Engine, os_ref: str, script: str) -> str:
        scripts.append(script)
        return output

    monkeypatch.setattr(osrepro, "run_script", run_script)
    engine = FakeClient(FakeEngine())
    assert locked_os_packages(engine, REF, lambda line: None) == [dash]
    assert "apt-cache show --no-all-versions" in scripts[0]
    assert "apt-get update -q --error-on=any" in scripts[0]
    failed = output.split("@@ngc update")[0] + "@@ngc update\nE: Failed to fetch x\n@@ngc rc 100"
    monkeypatch.setattr(osrepro, "run_script", lambda engine, os_ref, script: failed)
    with pytest.raises(StepError, match="apt-get update failed: E: Failed to fetch"):
        locked_os_packages(engine, REF, lambda line: None)


def test_the_flat_repository_holds_exactly_the_locked_files(tmp_path: Path) -> None:
    locked = [package("dash", "0.5.12-12"), package("tzdata", "2025b", "all")]
    debs = {p.sha256: make_deb(tmp_path / f"{p.name}.deb", stanza(p)) for p in locked}
    source = flat_repo(locked, lambda p: debs[p.sha256], tmp_path / "repo")
    prefix = f"deb [trusted=yes] copy://{(tmp_path / 'repo').resolve()} apt/"
    assert source.startswith(prefix)
    index = (tmp_path / "repo" / source.split()[-1] / "Packages").read_text()
    for p in locked:
        assert f"SHA256: {p.sha256}" in index
        copied = tmp_path / "repo" / "debs" / p.sha256 / Path(p.file).name
        assert copied.read_bytes() == debs[p.sha256].read_bytes()


def test_mmdebstrap_installs_exactly_the_pins() -> None:
    command = mmdebstrap_command([package("zlib1g"), package("tzdata", "2025b", "all")],
                                 "trixie", "deb [trusted=yes] copy:///r apt/x/", Path("o.tar"))
    assert command[:4] == ["mmdebstrap", "--mode=root", "--variant=custom",
                           "--architectures=amd64"]
    assert "--include=tzdata=2025b,zlib1g=1.0" in command
    # debootstrap's merged /usr, made before anything is unpacked (bullseye has no package
    # that makes it, bookworm's usr-is-merged requires it)
    assert 'for d in bin sbin lib lib64; do mkdir -p "$1/usr/$d"; ln -s "usr/$d" "$1/$d"; done' \
        in [option.removeprefix("--setup-hook=") for option in command]
    assert command[-3:] == ["trixie", "o.tar", "deb [trusted=yes] copy:///r apt/x/"]


def _add(tar: tarfile.TarFile, name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE,
         link: str = "", mtime: int = LATER, pax: dict[str, str] | None = None) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mtime, info.uname, info.gname = kind, link, mtime, "u", "g"
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.pax_headers = pax or {}
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def _messy(path: Path, reverse: bool) -> Path:
    """What a tar of a fresh chroot holds, in an order that depends on `reverse`."""
    entries: list[tuple[str, dict[str, Any]]] = [
        ("./", {"kind": tarfile.DIRTYPE}), ("./usr/", {"kind": tarfile.DIRTYPE}),
        ("./usr/bin/", {"kind": tarfile.DIRTYPE}), ("./etc/", {"kind": tarfile.DIRTYPE}),
        ("./usr/bin/perl", {"data": b"perl", "mtime": 100}),
        ("./usr/bin/ping", {"data": b"ping", "pax": {"SCHILY.xattr.security.capability": "c",
                                                      "atime": "1.5", "ctime": "2.5"}}),
        ("./etc/apt/sources.list", {"data": b"deb [trusted=yes] copy:///scratch apt/x/\n"}),
        ("./etc/resolv.conf", {"data": b"nameserver 10.0.0.1\n"}),
        ("./var/log/dpkg.log", {"data": b"now"}), ("./var/lib/dpkg/status-old", {}),
        ("./dev/", {"kind": tarfile.DIRTYPE}), ("./dev/null", {"kind": tarfile.CHRTYPE}),
        ("./usr/lib/python3/__pycache__/x.cpython-313.pyc", {"data": b"pyc"}),
        ("./var/lib/apt/lists/mirror_dists_trixie_InRelease", {"data": b"x"}),
        ("./var/lib/apt/lists/lock", {}),
    ]
    with tarfile.open(path, "w:", format=tarfile.PAX_FORMAT) as tar:
        for name, fields in reversed(entries) if reverse else entries:
            _add(tar, name, **fields)
        # the hard link: the earlier copy in the tar holds the data, whatever its name
        first, second = ("./usr/bin/perl5.40", "./usr/bin/perl") if reverse else \
            ("./usr/bin/perl", "./usr/bin/perl5.40")
        if reverse:
            _add(tar, first, b"perl", mtime=100)
        _add(tar, second, kind=tarfile.LNKTYPE, link=first, mtime=100)
    return path


def test_the_rootfs_tarball_is_canonical(tmp_path: Path) -> None:
    rewrites = {"etc/apt/sources.list": b"deb http://mirror trixie main\n"}
    outputs = []
    for reverse in (False, True):
        out = tmp_path / f"out-{reverse}.tar"
        normalise_tar(_messy(tmp_path / f"in-{reverse}.tar", reverse), out, EPOCH, rewrites)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]  # member order and link roles of the input do not matter
    with tarfile.open(fileobj=io.BytesIO(outputs[0])) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [
            ".", "./dev", "./etc", "./etc/apt/sources.list", "./usr", "./usr/bin",
            "./usr/bin/perl", "./usr/bin/perl5.40", "./usr/bin/ping", "./var/lib/apt/lists/lock"]
        by_name = {m.name.removeprefix("./"): m for m in members}
        assert all(m.mtime <= EPOCH and not m.uname and not m.gname for m in members)
        assert by_name["usr/bin/perl"].mtime == 100 and by_name["usr/bin/perl"].isreg()
        assert by_name["usr/bin/perl5.40"].islnk()
        assert by_name["usr/bin/perl5.40"].linkname.removeprefix("./") == "usr/bin/perl"
        assert by_name["usr/bin/ping"].pax_headers == {"SCHILY.xattr.security.capability": "c"}
        sources = tar.extractfile(by_name["etc/apt/sources.list"])
        assert sources is not None and sources.read() == rewrites["etc/apt/sources.list"]


def test_the_config_is_canonical_and_dated_by_the_epoch() -> None:
    labels = {"org.ngc-builder.os-origin": "mmdebstrap trixie locked"}
    config = image_config("sha256:" + "ab" * 32, EPOCH, labels)
    assert config == image_config("sha256:" + "ab" * 32, EPOCH, dict(reversed(labels.items())))
    data = json.loads(config)
    assert data["created"] == "2025-11-23T00:00:00Z"
    assert data["config"] == {"Cmd": ["/bin/bash"], "Labels": labels,
                              "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
                                      ":/sbin:/bin"]}
    assert data["rootfs"] == {"type": "layers", "diff_ids": ["sha256:" + "ab" * 32]}
    assert config == json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _layer(tmp_path: Path) -> Path:
    layer = tmp_path / "rootfs.tar"
    with tarfile.open(layer, "w:") as tar:
        _add(tar, "etc/hostname-free", b"x", mtime=EPOCH)
    return layer


def test_the_archive_is_what_docker_save_writes(tmp_path: Path) -> None:
    layer = _layer(tmp_path)
    diff = hashlib.sha256(layer.read_bytes()).hexdigest()
    config = image_config(f"sha256:{diff}", EPOCH, {})
    write_archive(layer, config, REF, tmp_path / "image.tar", EPOCH)
    with tarfile.open(tmp_path / "image.tar") as tar:
        manifest = json.loads(_read(tar, "manifest.json"))
        image_id = hashlib.sha256(config).hexdigest()
        assert manifest == [{"Config": f"{image_id}.json", "RepoTags": [REF],
                             "Layers": [f"{diff}/layer.tar"]}]
        assert _read(tar, f"{image_id}.json") == config
        assert _read(tar, f"{diff}/layer.tar") == layer.read_bytes()


def _read(tar: tarfile.TarFile, name: str) -> bytes:
    member = tar.extractfile(name)
    assert member is not None
    return member.read()


class LoadingApi(FakeApi):
    """`docker load` as the engine does it: the image ID is the sha256 of the config file."""

    def __init__(self, engine: FakeEngine, chunks: list[Mapping[str, Any]] | None = None,
                 rewrite: bool = False) -> None:
        super().__init__(engine)
        self.chunks, self.rewrite = chunks, rewrite

    def load_image(self, data: IO[bytes]) -> Iterator[Mapping[str, Any]]:
        with tarfile.open(fileobj=io.BytesIO(data.read())) as tar:
            entry = json.loads(_read(tar, "manifest.json"))[0]
            config = _read(tar, entry["Config"]) + (b" " if self.rewrite else b"")
        image_id = "sha256:" + hashlib.sha256(config).hexdigest()
        self.engine.images[image_id] = {"name": REF, "labels": {}}
        self.engine.tags[entry["RepoTags"][0]] = image_id
        return iter(self.chunks or [{"stream": f"Loaded image: {entry['RepoTags'][0]}\n"}])


def _engine(**options: Any) -> FakeClient:
    client = FakeClient(FakeEngine())
    client.api = LoadingApi(client.engine, **options)
    return client


def test_loading_gives_the_id_of_our_config(tmp_path: Path) -> None:
    layer = _layer(tmp_path)
    diff = hashlib.sha256(layer.read_bytes()).hexdigest()
    expected = "sha256:" + hashlib.sha256(image_config(f"sha256:{diff}", EPOCH, {})).hexdigest()
    lines: list[str] = []
    assert load_rootfs(_engine(), layer, REF, {}, EPOCH, lines.append) == expected
    assert lines == [f"Loaded image: {REF}"]
    assert list(tmp_path.iterdir()) == [layer]  # the archive is gone
    with pytest.raises(StepError, match="docker load: invalid diffID"):
        load_rootfs(_engine(chunks=[{"error": "invalid diffID"}]), layer, REF, {}, EPOCH)
    with pytest.raises(StepError, match=f"expected {expected}"):
        load_rootfs(_engine(rewrite=True), layer, REF, {}, EPOCH)


def test_the_rootfs_is_mmdebstraps_output_made_canonical(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = [package("dash", "0.5.12-12")]
    deb = make_deb(tmp_path / "dash.deb", stanza(locked[0]))
    calls: list[tuple[list[str], dict[str, str]]] = []

    def run(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        calls.append((command, options["env"]))
        _messy(Path(command[-2]), reverse=False)
        return subprocess.CompletedProcess(command, 0, "", "I: success in 1 seconds\n")

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(subprocess, "run", run)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    tarball = reproducible_rootfs(locked, lambda p: deb, "trixie", EPOCH, scratch,
                                  lambda line: None, mirror="http://mirror/debian/")
    assert calls[0][1]["SOURCE_DATE_EPOCH"] == str(EPOCH)
    assert calls[0][1]["TMPDIR"] == str(scratch)
    assert sorted(p.name for p in scratch.iterdir()) == ["repo", "rootfs.tar"]
    with tarfile.open(tarball) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("etc/apt/sources.list"))
        assert _read(tar, member.name) == b"deb http://mirror/debian trixie main\n"


def test_without_root_or_mmdebstrap_it_says_what_is_needed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(StepError, match="needs root and mmdebstrap"):
        reproducible_rootfs([], lambda p: tmp_path, "trixie", EPOCH, tmp_path,
                            lambda line: None, mirror="http://mirror/debian")
