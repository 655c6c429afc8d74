"""Locks for unit tests: the real lock builder with resolvers that answer from the manifest
alone (every requirement pinned as asked, every Debian package at 1.0), no index, no engine."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from ngc_builder.lock.apt import AptResolution
from ngc_builder.lock.foreign import ForeignResolution
from ngc_builder.lock.inputs import apt_requirements
from ngc_builder.lock.models import (
    AptPackage,
    OsLock,
    PipPackage,
    ReleaseLock,
    dump_lock,
    lock_path,
)
from ngc_builder.lock.platforms import ForeignAptResolver, lock_platforms
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
            spec.name: [deb(n) for n in apt_requirements(loaded, spec)]
            for spec in plan.images if spec.base == base_name and spec.kind != "base"}
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


def arm(name: str) -> AptPackage:
    return deb(name).model_copy(update={"arch": "arm64", "sha256": sha(f"{name}=1.0 arm64"),
                                        "file": f"pool/main/{name[0]}/{name}_1.0_arm64.deb"})


def foreign_apt(loaded: LoadedRelease) -> ForeignAptResolver:
    """linux/arm64's resolver: the OS base is libc6, each layer's packages for arm64 at 1.0."""
    def resolve(base_name: str, platform: str) -> ForeignResolution:
        assert platform == "linux/arm64"
        return ForeignResolution([arm("libc6")], AptResolution(
            [arm(name) for name in loaded.bases[base_name].apt_packages],
            {spec.name: [arm(name) for name in apt_requirements(loaded, spec, platform)]
             for spec in plan_release(loaded).images if spec.kind != "base"}))
    return resolve


def host_lock(loaded: LoadedRelease, plan: ReleasePlan) -> ReleaseLock:
    """The fake lock with a bootstrapped OS base (another platform needs one)."""
    return fake_lock(loaded, plan).model_copy(update={"os": {"debian-trixie": OsLock(
        suite="trixie", epoch=86400, apt=[deb("libc6")])}})


def pinned_for(requirements: list[str], target: Target, parent: list[PipPackage],
               pins: list[PipPackage]) -> list[PipPackage]:
    return pinned(requirements, target, parent)


def write_platform_lock(manifest: Path) -> Path:
    """The lock of a release with rows on linux/arm64 too, as `ngc-builder lock` writes it."""
    loaded = load_release(manifest)
    plan = plan_release(loaded)
    lock = host_lock(loaded, plan)
    lock = lock.model_copy(update={"platforms": lock_platforms(
        loaded, plan, lock, foreign_apt(loaded), lambda _: None, pinned_for)})
    lock_path(manifest).write_text(dump_lock(lock), encoding="utf-8")
    return lock_path(manifest)
