"""The cache's files, addressed by content: `files/<sha256>/<wheel>` and
`debs/<sha256>/<deb>`. A file enters only after its hash was checked, so what a build gets
from the cache is what the lock names; the same file is never downloaded twice."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TypeVar

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import file_sha256 as file_sha256
from ngc_builder.files import write_atomic
from ngc_builder.lock.models import AptPackage, PipPackage
from ngc_builder.services.environment import setting, xdg_home

Package = TypeVar("Package", PipPackage, AptPackage)


def default_root() -> Path:
    """$NGC_CACHE_DIR, else ~/.cache/ngc-builder/packages (kept across clones and runs)."""
    configured = setting("NGC_CACHE_DIR")
    if configured:
        return Path(configured)
    base = xdg_home("XDG_CACHE_HOME", Path.home() / ".cache")
    return base / "ngc-builder" / "packages"


MARKER = "ngc-cache.txt"  # written by the builder into every cache it makes
SERVED_TREES = ("simple", "files", "debs", "apt")  # what the cache server may answer for
OWN_TREES = (*SERVED_TREES, "logs")


def open_cache(root: Path) -> PackageCache:
    """The cache at `root`, made there if the folder is new or empty. A folder without the
    builder's marker that holds anything but the cache's own trees is refused: the cache is
    served to every build container, and `NGC_CACHE_DIR=$HOME` must not serve ~/.ssh."""
    if (root / MARKER).is_file():
        return PackageCache(root)
    strangers = sorted(entry.name for entry in root.iterdir()
                       if entry.name not in OWN_TREES) if root.is_dir() else []
    if strangers:
        raise InputError([Problem(str(root), 1, "(cache)", f"not a package cache: no {MARKER} "
                                  f"and it holds {strangers[0]!r}; set NGC_CACHE_DIR (or "
                                  "--cache-dir) to an empty folder or to a cache")])
    root.mkdir(parents=True, exist_ok=True)
    write_atomic(root / MARKER, f"ngc-builder package cache {secrets.token_hex(8)}\n")
    return PackageCache(root)


class HashMismatch(Exception):
    """A downloaded file is not the one the lock names."""


@dataclass(frozen=True)
class PackageCache:
    root: Path

    def wheel_path(self, package: PipPackage) -> Path:
        return self.root / "files" / package.sha256 / package.file

    def deb_path(self, package: AptPackage) -> Path:
        return self.root / "debs" / package.sha256 / PurePosixPath(package.file).name

    def missing_wheels(self, packages: Iterable[PipPackage]) -> list[PipPackage]:
        return _unique([p for p in packages if not self.wheel_path(p).is_file()])

    def missing_debs(self, packages: Iterable[AptPackage]) -> list[AptPackage]:
        return _unique([p for p in packages if not self.deb_path(p).is_file()])

    def add(self, source: Path, sha256: str, destination: Path) -> None:
        """Move `source` to `destination` once its hash is checked (atomic: a reader never
        sees half a file)."""
        found = file_sha256(source)
        if found != sha256:
            raise HashMismatch(f"{destination.name}: sha256 {found} instead of {sha256}")
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = destination.with_name(f".{destination.name}.partial")
        shutil.move(str(source), partial)
        partial.chmod(0o644)
        os.replace(partial, destination)


def _unique(packages: list[Package]) -> list[Package]:
    seen: dict[str, Package] = {}
    for package in packages:
        seen.setdefault(package.sha256, package)
    return [seen[key] for key in sorted(seen)]
