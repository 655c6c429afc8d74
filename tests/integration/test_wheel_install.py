"""The host-side wheel installer against pip itself, in our real base image: the same real
wheels (numpy with its f2py launcher and compiled modules, ml-dtypes on top), installed once
by pip in the image and once by ngc-builder on the host (ADD of its tar), give the same files
with the same bytes, and the host-installed ones import, run and pass `pip check`."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.assemble.wheel_install import VenvTree, install_wheels
from ngc_builder.cache.fetch import fetch_wheels
from ngc_builder.cache.store import open_cache
from ngc_builder.lock.pip import resolve_pip
from ngc_builder.manifest.wheels import Target
from tests.integration.conftest import ReleaseRun

pytestmark = pytest.mark.integration

# The files each installer writes of its own: who installed it, how, and bytecode.
OWN = ("/RECORD", "/INSTALLER", "/REQUESTED", "/direct_url.json")
LIST = ("cd /opt/venv && find lib bin share include -type f ! -path '*/__pycache__/*' "
        "-exec sha256sum {} + 2>/dev/null | sort -k2")


def _build(client: Any, context: Path, dockerfile: str, tag: str) -> str:
    (context / "Dockerfile").write_text(dockerfile)
    image, _ = client.images.build(path=str(context), tag=tag, rm=True)
    return str(image.id)


def _files(client: Any, image: str) -> dict[str, str]:
    out = client.containers.run(image, ["sh", "-c", LIST], entrypoint=[], remove=True)
    rows = [line.split(maxsplit=1) for line in out.decode().splitlines()]
    return {path: digest for digest, path in rows if not path.endswith(OWN)}


def test_host_installed_wheels_are_what_pip_installs(
        ci_release: ReleaseRun, docker_client: Any, tmp_path: Path) -> None:
    base = ci_release.record["images"]["base"]["build"]["image_id"]
    locked = resolve_pip(["ml-dtypes"], Target("3.13", "2.41", "x86_64"), [])
    cache = open_cache(tmp_path / "cache")
    fetch_wheels(cache, Target("3.13", "2.41", "x86_64"), locked, lambda _: None)
    by_pip, by_host = tmp_path / "pip", tmp_path / "host"
    (by_pip / "wheels").mkdir(parents=True)
    by_host.mkdir()
    for package in locked:
        shutil.copy(cache.wheel_path(package), by_pip / "wheels" / package.file)
    install_wheels(locked, cache.wheel_path, VenvTree("3.13", 86400), by_host / "venv.tar")
    tags = [f"ngc-test/wheel-install-{kind}:1" for kind in ("pip", "host")]
    pip_image = _build(docker_client, by_pip, f"FROM {base}\nCOPY wheels /tmp/wheels\nRUN pip "
                       "install --no-deps --no-index --no-compile /tmp/wheels/*.whl\n", tags[0])
    host_image = _build(docker_client, by_host, f"FROM {base}\nADD venv.tar /\n", tags[1])

    below = _files(docker_client, base)
    by_pip_files, by_host_files = ({path: digest for path, digest in
                                    _files(docker_client, image).items() if path not in below}
                                   for image in (pip_image, host_image))
    launchers = {path for path in by_pip_files if path.startswith("bin/")}
    assert launchers >= {"bin/f2py", "bin/numpy-config"}
    assert {p: d for p, d in by_host_files.items() if p not in launchers} == \
        {p: d for p, d in by_pip_files.items() if p not in launchers}
    assert set(by_host_files) == set(by_pip_files)
    checks = ("python -c 'import ml_dtypes, numpy; print(numpy.ones(2, ml_dtypes.bfloat16))' "
              "&& f2py -v && numpy-config --version && pip check")
    out = docker_client.containers.run(host_image, ["sh", "-c", checks], entrypoint=[],
                                       remove=True).decode()
    assert "No broken requirements found." in out
    versions = {p.name: p.version for p in locked}
    assert versions["numpy"] in out


def test_the_tar_adds_as_root_with_no_surprises(tmp_path: Path) -> None:
    """ADD extracts what the tar holds: only regular files and folders, none outside /opt."""
    locked = resolve_pip(["six"], Target("3.13", "2.41", "aarch64"), [])
    cache = open_cache(tmp_path / "cache")
    fetch_wheels(cache, Target("3.13", "2.41", "aarch64"), locked, lambda _: None)
    install_wheels(locked, cache.wheel_path, VenvTree("3.13", 0), tmp_path / "venv.tar")
    with tarfile.open(tmp_path / "venv.tar") as tar:
        entries = tar.getmembers()
    assert all(e.isfile() or e.isdir() for e in entries)
    assert all(e.name.startswith("opt") and e.uid == 0 for e in entries)
