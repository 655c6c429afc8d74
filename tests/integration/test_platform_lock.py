"""linux/arm64's lock for real, on this amd64 host with no arm64 code run: apt in the trixie
OS image told arm64 is native resolves the OS base and a layer against the real mirror; the
.debs it names download and match their hashes; pip resolves the same requirements for
aarch64 at the versions it chose for x86_64, with aarch64 wheels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ngc_builder.cache.fetch import fetch_debs
from ngc_builder.cache.store import open_cache
from ngc_builder.lock.apt import resolve_apt
from ngc_builder.lock.foreign import resolve_foreign_apt
from ngc_builder.lock.pip import resolve_pip
from ngc_builder.manifest.wheels import Target

pytestmark = pytest.mark.integration

BASE = ["python3", "ca-certificates"]


def test_apt_resolves_the_arm64_os_and_layers_without_emulation(
        docker_client: Any, trixie_os: str, debian_mirror: str, tmp_path: Path) -> None:
    host = resolve_apt(docker_client, trixie_os, BASE, {"omp": ["libgomp1"]}, lambda _: None)
    arm = resolve_foreign_apt(docker_client, trixie_os, "arm64", BASE,
                              {"omp": ["libgomp1"], "bad": ["no-such-package-ngc"]},
                              lambda _: None)
    os_names = {p.name for p in arm.os}
    assert {"libc6", "dpkg", "apt", "base-files"} <= os_names
    assert {p.arch for p in [*arm.os, *arm.apt.base]} <= {"arm64", "all"}
    assert any(p.arch == "arm64" for p in arm.os)
    assert {p.name for p in arm.apt.base} == {p.name for p in host.base}  # same OS release
    layer = arm.apt.layers["omp"]
    assert isinstance(layer, list) and [(p.name, p.arch) for p in layer] == [
        ("libgomp1", "arm64")]
    assert not os_names & {p.name for p in arm.apt.base}  # the OS closure is below the base
    assert arm.apt.layers["bad"] == "E: Unable to locate package no-such-package-ngc"
    cache = open_cache(tmp_path / "cache")
    fetched = fetch_debs(cache, debian_mirror, layer, lambda _: None)  # hash-checked
    assert fetched.files == 1 and cache.missing_debs(layer) == []


def test_pip_resolves_aarch64_wheels_at_the_x86_64_versions() -> None:
    requirements = ["ml-dtypes"]  # numpy below it: both have wheels per machine
    # The host's lock took an older numpy than the newest: the pins must carry it over.
    host = resolve_pip([*requirements, "numpy<2.3"], Target("3.13", "2.41", "x86_64"), [])
    arm = resolve_pip(requirements, Target("3.13", "2.41", "aarch64"), [], pins=host)
    assert [(p.name, p.version) for p in arm] == [(p.name, p.version) for p in host]
    free = resolve_pip(requirements, Target("3.13", "2.41", "aarch64"), [])
    assert {p.name: p.version for p in free}["numpy"] != {p.name: p.version for p in arm}["numpy"]
    assert all("aarch64" in p.file for p in arm), [p.file for p in arm]
    assert all("x86_64" in p.file for p in host), [p.file for p in host]
