"""Make the cache ready for a run: every file the lock names for the selected images present
(downloaded once by the host, or, offline, an error naming what is missing), the PEP 503
index and the images' apt repositories written."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ngc_builder.cache.apt_repo import DebError
from ngc_builder.cache.fetch import Fetched, fetch_debs, fetch_wheels
from ngc_builder.cache.simple_index import write_apt_repo, write_simple_index
from ngc_builder.cache.store import PackageCache
from ngc_builder.errors import StepError
from ngc_builder.lock.inputs import target_of
from ngc_builder.lock.models import AptPackage, PipPackage, PlatformLock, ReleaseLock
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.security.suite import SECURITY_POOL, security_mirror
from ngc_builder.services.mirror import host_debian_mirror
from ngc_builder.services.streams import LineSink


@dataclass(frozen=True)
class CacheFill:
    downloaded: int
    bytes: int

    def __add__(self, other: CacheFill) -> CacheFill:
        return CacheFill(self.downloaded + other.downloaded, self.bytes + other.bytes)


def fill_cache(cache: PackageCache, loaded: LoadedRelease, images: Iterable[ImageSpec],
               lock: ReleaseLock, sink: LineSink) -> CacheFill:
    """Download what the cache lacks for `images`, then write its indexes."""
    specs = list(images)
    filled = fill_debs(cache, loaded, specs, lock, sink) + fill_wheels(cache, loaded, specs,
                                                                      lock, sink)
    index_cache(cache, specs, lock)
    return filled


def fill_debs(cache: PackageCache, loaded: LoadedRelease, specs: list[ImageSpec],
              lock: ReleaseLock, sink: LineSink) -> CacheFill:
    """The .debs (the OS images are made from them: they come first)."""
    return _total([fetch_debs(cache, mirror, debs, sink)
                   for mirror, debs in _debs_by_mirror(loaded, specs, lock).items()])


def fill_wheels(cache: PackageCache, loaded: LoadedRelease, specs: list[ImageSpec],
                lock: ReleaseLock, sink: LineSink) -> CacheFill:
    return _total([fetch_wheels(cache, target, wheels, sink)
                   for target, wheels in _wheels_by_target(loaded, specs, lock).items()])


def _total(fetched: list[Fetched]) -> CacheFill:
    return CacheFill(sum(f.files for f in fetched), sum(f.bytes for f in fetched))


def missing_files(cache: PackageCache, loaded: LoadedRelease, images: Iterable[ImageSpec],
                  lock: ReleaseLock) -> list[str]:
    """The locked files of `images` that are not in the cache, by file name."""
    specs = list(images)
    wheels = [w for group in _wheels_by_target(loaded, specs, lock).values() for w in group]
    debs = [deb for _, group in _debs_by_base(specs, lock) for deb in group]
    return sorted({p.file for p in cache.missing_wheels(wheels)}
                  | {p.file.rsplit("/", 1)[-1] for p in cache.missing_debs(debs)})


def index_cache(cache: PackageCache, images: Iterable[ImageSpec], lock: ReleaseLock) -> None:
    write_simple_index(cache)
    specs = list(images)
    for platform, closure in _closures(lock):
        for spec in specs:
            locked = closure.images.get(spec.name)
            if locked is not None and locked.apt and platform in spec.platforms:
                try:
                    write_apt_repo(cache, locked.apt)
                except DebError as exc:  # its hash fit the lock: the lock names a damaged file
                    raise StepError(spec.name, "cache", str(exc)) from None


def _wheels_by_target(loaded: LoadedRelease, specs: list[ImageSpec],
                      lock: ReleaseLock) -> dict[Target, list[PipPackage]]:
    """Every platform's wheels of `specs`, by the target they were chosen for."""
    groups: dict[Target, list[PipPackage]] = {}
    for platform, closure in _closures(lock):
        for spec in specs:
            locked = closure.images.get(spec.name)
            if locked is not None and platform in spec.platforms:
                groups.setdefault(target_of(loaded, spec, platform), []).extend(locked.pip)
    return groups


def _closures(lock: ReleaseLock) -> list[tuple[str, PlatformLock]]:
    return [(platform, lock.of_platform(platform))
            for platform in [HOST_PLATFORM, *sorted(lock.platforms)]]


def _debs_by_base(specs: list[ImageSpec],
                  lock: ReleaseLock) -> list[tuple[str, list[AptPackage]]]:
    """(OS base, .debs) of each image's layer, and of each OS base the images stand on, on
    every platform they ship."""
    found: list[tuple[str, list[AptPackage]]] = []
    for platform, closure in _closures(lock):
        shipping = [spec for spec in specs if platform in spec.platforms]
        found += [(spec.base, closure.images[spec.name].apt) for spec in shipping
                  if spec.name in closure.images]
        bases = sorted({spec.base for spec in shipping} & set(closure.os))
        found += [(name, closure.os[name].apt) for name in bases]
    return found


def _debs_by_mirror(loaded: LoadedRelease, specs: list[ImageSpec],
                    lock: ReleaseLock) -> dict[str, list[AptPackage]]:
    groups: dict[str, list[AptPackage]] = {}
    for base_name, debs in _debs_by_base(specs, lock):
        for mirror, own in by_mirror(loaded, base_name, debs).items():
            groups.setdefault(mirror, []).extend(own)
    return groups


def by_mirror(loaded: LoadedRelease, base_name: str,
              debs: list[AptPackage]) -> dict[str, list[AptPackage]]:
    """Where each .deb of a base comes from: the base's own mirror (its bootstrap section),
    else the host's; a security fix a patch release locked (`pool/updates/...`,
    docs/security.md) from the security mirror."""
    groups: dict[str, list[AptPackage]] = {}
    for deb in debs:
        mirror = security_mirror() if deb.file.startswith(SECURITY_POOL) else \
            base_mirror(loaded, base_name)
        groups.setdefault(mirror, []).append(deb)
    return groups


def base_mirror(loaded: LoadedRelease, base_name: str) -> str:
    bootstrap = loaded.bases[base_name].bootstrap
    mirror = (bootstrap.mirror if bootstrap is not None else None) or host_debian_mirror()
    if mirror is None:
        raise StepError("cache", "fetch", "no Debian mirror known: set NGC_DEBIAN_MIRROR")
    return mirror
