"""The reproducible OS base, for real: trixie's package set locked from the OS image the
engine holds, its .debs fetched (each checked by sha256), the rootfs made twice with
mmdebstrap and loaded twice: one image ID, holding exactly the locked packages."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from ngc_builder.assemble.osbase import ensure_os_image
from ngc_builder.assemble.osrepro import (
    load_rootfs,
    locked_os_packages,
    os_packages,
    reproducible_rootfs,
)
from ngc_builder.cache.fetch import fetch_debs
from ngc_builder.cache.store import PackageCache, file_sha256
from ngc_builder.errors import StepError
from ngc_builder.manifest.models import BaseImage
from ngc_builder.manifest.source import load_yaml
from tests.conftest import REPO

# On demand (docs/testing.md): CI builds the CI lock's OS on a second, empty engine and gets
# the main engine's OS layer byte for byte (test_reproducible.py).
pytestmark = [pytest.mark.integration, pytest.mark.extended]

OS_REF = "ngc-local/os-debian-trixie:13"
SUITE = "trixie"
EPOCH = 1_763_856_000  # 2025-11-23T00:00:00Z: any fixed time; the lock would carry it
LABELS = {"org.ngc-builder.os-origin": f"mmdebstrap {SUITE} locked"}
CHECK = ("apt-get --version | head -n 1; command -v python3 || echo no-python; "
         "cat /etc/apt/sources.list; find /var/log /var/lib/apt/lists -type f | sort | xargs")


@pytest.fixture
def mirror(trixie_os: str, debian_mirror: str) -> str:
    """The mirror to fetch the locked .debs from, once the bootstrapped trixie image (made if
    missing) is there to lock and mmdebstrap can run."""
    if shutil.which("mmdebstrap") is None or os.geteuid() != 0:
        pytest.skip("needs root and mmdebstrap (apt-get install mmdebstrap)")
    return debian_mirror


def test_two_builds_of_a_locked_os_base_are_one_image(docker_client: Any, tmp_path: Path,
                                                       mirror: str) -> None:
    lines: list[str] = []
    locked = _lock_current(docker_client, lines)
    cache = PackageCache(tmp_path / "cache")
    fetch_debs(cache, mirror, locked, lines.append)  # each file enters only if its hash fits
    refs = [f"ngc-local/os-repro-test:{secrets.token_hex(4)}-{run}" for run in (1, 2)]
    layers, ids = [], []
    try:
        for run, ref in enumerate(refs):
            scratch = tmp_path / f"run-{run}"
            scratch.mkdir()
            tarball = reproducible_rootfs(locked, cache.deb_path, SUITE, EPOCH, scratch,
                                          lines.append, mirror=mirror)
            layers.append(file_sha256(tarball))
            ids.append(load_rootfs(docker_client, tarball, ref, LABELS, EPOCH, lines.append))
        assert layers[0] == layers[1]
        assert ids[0] == ids[1]
        _holds_exactly(docker_client, refs[1], locked, mirror)
    finally:
        for ref in refs:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.api.remove_image(ref, force=True)


def _lock_current(docker_client: Any, lines: list[str]) -> list[Any]:
    """The packages of the held trixie image, or, once the mirror has moved past its versions
    (a Debian point release: the old files leave `trixie main`, and the builder refuses to lock
    what it cannot fetch), of a trixie image bootstrapped from the mirror as it is today."""
    try:
        return locked_os_packages(docker_client, OS_REF, lines.append)
    except StepError as exc:
        if "the image's mirror has no file for" not in exc.message:
            raise
    fresh = f"ngc-local/os-repro-test:current-{secrets.token_hex(4)}"
    path = REPO / "base-images" / "debian-trixie.yaml"
    base = BaseImage.model_validate(load_yaml(path, path.name)[0])
    ensure_os_image(docker_client, base, fresh, "bootstrap", lines.append)
    try:
        return locked_os_packages(docker_client, fresh, lines.append)
    finally:
        docker_client.api.remove_image(fresh, force=True)


def _holds_exactly(docker_client: Any, ref: str, locked: list[Any], mirror: str) -> None:
    assert os_packages(docker_client, ref) == sorted((p.name, p.version, p.arch)
                                                     for p in locked)
    # Its own apt sources serve the same files: locking the rebuilt image gives the lock.
    assert locked_os_packages(docker_client, ref, lambda line: None) == locked
    out = docker_client.containers.run(ref, ["sh", "-c", CHECK], remove=True).decode()
    apt, python, sources, files = out.splitlines()
    assert apt.startswith("apt 3.") and python == "no-python"
    assert sources == f"deb {mirror.rstrip('/')} {SUITE} main"
    # no log of the run and no package index was kept: only what packages make empty
    assert files == "/var/lib/apt/lists/lock /var/log/btmp /var/log/lastlog /var/log/wtmp"
    info = docker_client.api.inspect_image(ref)
    assert info["Created"] == "2025-11-23T00:00:00Z"
    assert info["Config"]["Labels"] == LABELS and info["Config"]["Cmd"] == ["/bin/bash"]

