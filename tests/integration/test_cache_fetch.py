"""The cache filled from the real index: one release may lock a package at two versions (two
images resolved a month apart), and both wheels arrive, each checked by its hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.cache.fetch import fetch_wheels
from ngc_builder.cache.store import PackageCache
from ngc_builder.lock.models import PipPackage
from ngc_builder.manifest.wheels import Target

pytestmark = pytest.mark.integration
# The published wheels' hashes (PyPI's own, as a lock records them).
SIX = {"1.16.0": "8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254",
       "1.17.0": "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"}


def test_two_versions_of_one_package_are_both_fetched(tmp_path: Path) -> None:
    cache = PackageCache(tmp_path / "cache")
    wheels = [PipPackage(name="six", version=version, file=f"six-{version}-py2.py3-none-any.whl",
                         sha256=sha256) for version, sha256 in SIX.items()]
    said: list[str] = []
    fetched = fetch_wheels(cache, Target("3.13", "2.41"), wheels, said.append)
    assert fetched.files == 2 and fetched.bytes > 20_000
    assert all(cache.wheel_path(wheel).is_file() for wheel in wheels)
    assert cache.missing_wheels(wheels) == []
    assert said == ["fetching 2 wheels for Python 3.13"]
