"""The OS base bootstrap path, for real: debootstrap from the host's mirror + docker import."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from ngc_builder.assemble.osbase import bootstrap
from ngc_builder.manifest.models import BaseImage
from ngc_builder.manifest.source import load_yaml
from ngc_builder.services.mirror import host_debian_mirror
from tests.conftest import REPO

# Extended since 2026-11-29 (CI's budget): debootstrap from the live mirror is the unlocked
# path (a new OS's first lock); CI makes its OS images from the lock's .debs, on an empty
# engine too (test_reproducible.py).
pytestmark = [pytest.mark.integration, pytest.mark.extended]


def test_bootstrap_imports_a_working_debian(docker_client: Any) -> None:
    if host_debian_mirror() is None:
        pytest.skip("no Debian mirror on this host (set NGC_DEBIAN_MIRROR)")
    data, _ = load_yaml(REPO / "base-images" / "debian-trixie.yaml", "debian-trixie.yaml")
    base = BaseImage.model_validate(data)
    ref = f"ngc-local/os-test:{secrets.token_hex(4)}"
    lines: list[str] = []
    bootstrap(docker_client, base, ref, lines.append)
    try:
        out = docker_client.containers.run(ref, ["cat", "/etc/os-release"], remove=True)
        assert b'VERSION_CODENAME=trixie' in out
        labels = docker_client.api.inspect_image(ref)["Config"]["Labels"]
        assert labels["org.ngc-builder.os-origin"] == "debootstrap trixie"
        assert any(line.startswith("debootstrap --variant=minbase trixie") for line in lines)
    finally:
        docker_client.api.remove_image(ref, force=True)
