"""Locks for unit tests: the real lock builder with resolvers that answer from the manifest
alone (every requirement pinned as asked, every Debian package at 1.0), no index, no engine."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from ngc_builder.lock.apt import AptResolution
from ngc_builder.lock.models import AptPackage, PipPackage, ReleaseLock, dump_lock, lock_path
from ngc_builder.lock.resolve import build_lock
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import ReleasePlan, plan_release

_PIN = re.compile(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?==(\S+)")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def wheel(name: str, version: str) -> PipPackage:
    return PipPackage(name=name.lower().replace("_", "-"), version=version,
                      file=f"{name.replace('-', '_')}-{version}-py3-none-any.whl",
                      sha256=sha(f"{name}=={version}"))


def deb(name: str, version: str = "1.0") -> AptPackage:
    return AptPackage(name=name, version=version, arch="amd64",
                      file=f"pool/main/{name[0]}/{name}/{name}_{version}_amd64.deb",
                      sha256=sha(f"{name}={version}"), size=1000)


def pinned(requirements: list[str], target: Target, parent: list[PipPackage]
           ) -> list[PipPackage]:
    found = [_PIN.fullmatch(line) for line in requirements]
    return [wheel(match[1], match[3]) for match in found if match]


def apt_of(loaded: LoadedRelease, plan: ReleasePlan) -> Callable[[str], AptResolution]:
    def resolve(base_name: str) -> AptResolution:
        layers: dict[str, list[AptPackage] | str] = {
            spec.name: [deb(n) for n in loaded.frameworks[spec.entry.framework].spec
                        .apt_for(spec.entry.variant)]
            for spec in plan.images if spec.base == base_name and spec.entry is not None}
        return AptResolution(base=[deb(n) for n in loaded.bases[base_name].apt_packages],
                             layers=layers)
    return resolve


def fake_lock(loaded: LoadedRelease, plan: ReleasePlan) -> ReleaseLock:
    return build_lock(loaded, plan, apt_of(loaded, plan), lambda _: None, pip_of=pinned)


def write_fake_lock(manifest: Path) -> Path:
    """The lock beside `manifest`, as `ngc-builder lock` would write it with these resolvers."""
    loaded = load_release(manifest)
    path = lock_path(manifest)
    path.write_text(dump_lock(fake_lock(loaded, plan_release(loaded))), encoding="utf-8")
    return path
