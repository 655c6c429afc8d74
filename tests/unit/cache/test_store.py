"""The content-addressed store and the static index pip reads."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ngc_builder.cache.fetch import one_version_each
from ngc_builder.cache.simple_index import write_simple_index
from ngc_builder.cache.store import HashMismatch, PackageCache, default_root
from ngc_builder.lock.models import PipPackage
from tests.unit.locks import deb

pytestmark = pytest.mark.unit


def a_wheel(tmp_path: Path, name: str, content: bytes) -> tuple[Path, PipPackage]:
    source = tmp_path / name
    source.write_bytes(content)
    version = name.split("-")[1]
    package = PipPackage(name=name.split("-")[0].lower().replace("_", "-"), version=version,
                         file=name, sha256=hashlib.sha256(content).hexdigest())
    return source, package


def test_files_enter_only_with_their_hash(tmp_path: Path) -> None:
    cache = PackageCache(tmp_path / "cache")
    source, package = a_wheel(tmp_path, "six-1.17.0-py2.py3-none-any.whl", b"six")
    assert cache.missing_wheels([package, package]) == [package]
    with pytest.raises(HashMismatch, match=r"six-1\.17\.0"):
        cache.add(source, "0" * 64, cache.wheel_path(package))
    assert source.exists() and not cache.wheel_path(package).exists()
    cache.add(source, package.sha256, cache.wheel_path(package))
    assert cache.wheel_path(package).read_bytes() == b"six"
    assert cache.missing_wheels([package]) == []
    assert cache.deb_path(deb("libgomp1")).name == "libgomp1_1.0_amd64.deb"


def test_the_cache_is_the_users_unless_told(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.delenv("NGC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_root() == tmp_path / "ngc-builder" / "packages"
    monkeypatch.setenv("NGC_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert default_root() == tmp_path / "elsewhere"


def test_simple_index_links_each_file_with_its_hash(tmp_path: Path) -> None:
    cache = PackageCache(tmp_path / "cache")
    for name in ("ml_dtypes-0.6.0-cp313-cp313-manylinux_2_27_x86_64.whl",
                 "ml_dtypes-0.5.0-cp313-cp313-manylinux_2_27_x86_64.whl",
                 "six-1.17.0-py2.py3-none-any.whl"):
        source, package = a_wheel(tmp_path, name, name.encode())
        cache.add(source, package.sha256, cache.wheel_path(package))
    assert write_simple_index(cache) == 2
    page = (cache.root / "simple" / "ml-dtypes" / "index.html").read_text()
    digest = hashlib.sha256(b"ml_dtypes-0.6.0-cp313-cp313-manylinux_2_27_x86_64.whl").hexdigest()
    assert (f'href="../../files/{digest}/ml_dtypes-0.6.0-cp313-cp313-manylinux_2_27_x86_64.whl'
            f'#sha256={digest}"') in page
    assert page.count("<a ") == 2
    assert '<a href="six/">six</a>' in (cache.root / "simple" / "index.html").read_text()


def test_wheels_are_fetched_in_batches_naming_each_package_once() -> None:
    def wheel(name: str, version: str) -> PipPackage:
        return PipPackage(name=name, version=version, file=f"{name}-{version}-py3-none-any.whl",
                          sha256="0" * 64)

    packages = [wheel("filelock", "4.2.11"), wheel("six", "1.17.0"),
                wheel("filelock", "4.2.12"), wheel("filelock", "4.2.13")]
    batches = one_version_each(packages)
    assert [[f"{p.name}=={p.version}" for p in batch] for batch in batches] == [
        ["filelock==4.2.11", "six==1.17.0"], ["filelock==4.2.12"], ["filelock==4.2.13"]]
    assert one_version_each([]) == []
