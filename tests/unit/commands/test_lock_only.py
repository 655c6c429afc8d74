"""`lock --only` keeps the OS lock: the OS image it resolves in must hold what that lock holds.

The real case (2026-11-27): trixie's OS image was bootstrapped again after a point release
(libc6 2.41-12+deb13u5) while the lock kept deb13u4; a devel layer resolved there locked
libc6-dev deb13u5 without the libc6 it needs, and the build's closure check refused it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ngc_builder.cache import fill
from ngc_builder.cache.store import open_cache
from ngc_builder.commands import lock
from ngc_builder.commands.lock import os_drift
from ngc_builder.errors import StepError
from ngc_builder.lock.models import OsLock
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


class Made:
    """What `_make_locked_os` asked of the OS-image step."""

    def __init__(self) -> None:
        self.refs: list[str] = []

    def __call__(self, engine: Any, base: Any, ref: str, strategy: str, sink: Any,
                 locked: Any = None) -> tuple[str, str]:
        assert strategy == "bootstrap" and locked is not None  # from the lock, never pulled
        self.refs.append(ref)
        return "sha256:made", "locked trixie"


class Loaded:
    def __init__(self) -> None:
        self.bases = {"debian-trixie": object()}


def cache_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *present: str) -> OsLock:
    """An OS lock of two .debs, of which `present` are in a fresh package cache."""
    monkeypatch.setenv("NGC_CACHE_DIR", str(tmp_path / "cache"))
    cache = open_cache(tmp_path / "cache")
    entry = OsLock(suite="trixie", epoch=1, apt=[deb("libc6", "2.41"), deb("bash", "5.2")])
    for package in entry.apt:
        if package.name in present:
            cache.deb_path(package).parent.mkdir(parents=True, exist_ok=True)
            cache.deb_path(package).write_bytes(b"deb")
    return entry


def test_a_missing_locked_os_image_is_made_from_the_debs_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A machine that never released this lock (or pruned its OS images) has no such image;
    a bump's `lock --only` used to refuse there, on a drifted plain OS image."""
    entry = cache_with(tmp_path, monkeypatch, "libc6", "bash")
    made = Made()
    monkeypatch.setattr(lock, "obtain_os_image", made)
    lock._make_locked_os(object(), Loaded(), "debian-trixie", "ngc-local/os:13-k", entry)  # type: ignore[arg-type]
    assert made.refs == ["ngc-local/os:13-k"]


def test_the_debs_the_cache_lacks_are_fetched_then_the_image_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fresh machine (CI's): an empty cache, the lock's .debs still on the mirror."""
    entry = cache_with(tmp_path, monkeypatch, "libc6")
    fetched: list[list[str]] = []

    def fetch(cache: Any, mirror: str, packages: Any, sink: Any) -> None:
        missing = cache.missing_debs(packages)
        fetched.append([package.name for package in missing])
        for package in missing:  # what the download leaves: the file, hash-checked
            cache.deb_path(package).parent.mkdir(parents=True, exist_ok=True)
            cache.deb_path(package).write_bytes(b"deb")
    made = Made()
    monkeypatch.setattr(lock, "fetch_debs", fetch)
    monkeypatch.setattr(fill, "base_mirror", lambda loaded, name: "http://mirror.test/debian")
    monkeypatch.setattr(lock, "obtain_os_image", made)
    lock._make_locked_os(object(), Loaded(), "debian-trixie", "ngc-local/os:13-k", entry)  # type: ignore[arg-type]
    assert fetched == [["bash"]] and made.refs == ["ngc-local/os:13-k"]


def test_a_deb_the_mirror_dropped_makes_nothing_and_the_drift_check_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    entry = cache_with(tmp_path, monkeypatch, "libc6")

    def fetch(*args: Any) -> None:
        raise StepError("cache", "fetch bash=5.2", "404, the mirror no longer has this version")
    made = Made()
    monkeypatch.setattr(lock, "fetch_debs", fetch)
    monkeypatch.setattr(fill, "base_mirror", lambda loaded, name: "http://mirror.test/debian")
    monkeypatch.setattr(lock, "obtain_os_image", made)
    lock._make_locked_os(object(), Loaded(), "debian-trixie", "ngc-local/os:13-k", entry)  # type: ignore[arg-type]
    assert made.refs == []
    assert "could not be made from the lock: fetch bash=5.2: 404" in capsys.readouterr().err
