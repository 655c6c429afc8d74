"""`lock --only` keeps the OS lock: the OS image it resolves in must hold what that lock holds.

The real case (2026-11-27): trixie's OS image was bootstrapped again after a point release
(libc6 2.41-12+deb13u5) while the lock kept deb13u4; a devel layer resolved there locked
libc6-dev deb13u5 without the libc6 it needs, and the build's closure check refused it."""

from __future__ import annotations

import pytest

from ngc_builder.commands.lock import os_drift
from tests.unit.locks import deb

pytestmark = pytest.mark.unit


def test_an_os_image_at_the_locked_versions_has_no_drift() -> None:
    locked = [deb("libc6", "2.41-12+deb13u4"), deb("bash", "5.2")]
    held = [("bash", "5.2", "amd64"), ("libc6", "2.41-12+deb13u4", "amd64"),
            ("extra-in-image", "1", "all")]
    assert os_drift(locked, held) == []


def test_each_package_at_another_version_is_named_with_the_version_held() -> None:
    locked = [deb("libc6", "2.41-12+deb13u4"), deb("libc-bin", "2.41-12+deb13u4"),
              deb("bash", "5.2")]
    held = [("libc6", "2.41-12+deb13u5", "amd64"), ("libc-bin", "2.41-12+deb13u5", "amd64"),
            ("bash", "5.2", "amd64")]
    assert os_drift(locked, held) == ["libc-bin 2.41-12+deb13u5", "libc6 2.41-12+deb13u5"]
