"""What the cache serves besides its files: a PEP 503 index of the wheels (`simple/`) and
one flat apt repository per locked package set (`apt/<hash>/Packages`). Both are static
files regenerated from the store, so any plain HTTP server can serve them."""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path

from ngc_builder.cache.apt_repo import deb_stanza, packages_index, repo_path
from ngc_builder.cache.store import PackageCache
from ngc_builder.files import INPUT_LIMIT, read_text, write_atomic
from ngc_builder.lock.models import AptPackage, normalise


def write_simple_index(cache: PackageCache) -> int:
    """`simple/<project>/index.html` for every cached wheel; returns the project count."""
    projects: dict[str, list[Path]] = defaultdict(list)
    for wheel in sorted((cache.root / "files").glob("*/*.whl")):
        projects[normalise(wheel.name.split("-", 1)[0])].append(wheel)
    for name, wheels in projects.items():
        links = "".join(_link(wheel) for wheel in wheels)
        write_atomic(cache.root / "simple" / name / "index.html", _page(name, links))
    top = "".join(f'<a href="{name}/">{name}</a>\n' for name in sorted(projects))
    write_atomic(cache.root / "simple" / "index.html", _page("ngc-builder cache", top))
    return len(projects)


def _link(wheel: Path) -> str:
    sha256 = wheel.parent.name
    name = html.escape(wheel.name)
    return f'<a href="../../files/{sha256}/{name}#sha256={sha256}">{name}</a>\n'


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" "
            f"content=\"1.0\"><title>{html.escape(title)}</title></head><body>\n{body}"
            "</body></html>\n")


def write_apt_repo(cache: PackageCache, packages: list[AptPackage]) -> str:
    """The flat repository of exactly `packages` (all in the cache); returns its path."""
    path = repo_path(packages)
    index = cache.root / path / "Packages"
    if not index.is_file():
        entries = [(package, _stanza(cache, package)) for package in packages]
        write_atomic(index, packages_index(entries))
    return path


def _stanza(cache: PackageCache, package: AptPackage) -> str:
    """The .deb's control stanza, read once and kept beside it."""
    kept = cache.deb_path(package).with_name("control")
    if not kept.is_file():
        write_atomic(kept, deb_stanza(cache.deb_path(package)))
    return read_text(kept, INPUT_LIMIT)
