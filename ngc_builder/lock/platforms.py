"""`lock` for the platforms beyond the build host's (`platforms:` in the manifest).

Each such platform gets its own closure in the lock (`platforms.<os/arch>`): the images that
ship it, parent first, their wheels resolved by pip for its machine at the versions the host
platform's lock of the same image chose (a package only one platform has is resolved freely),
and their `.deb`s and OS base by apt told the platform is native (lock/foreign.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ngc_builder.errors import StepError
from ngc_builder.lock.apt import AptResolution
from ngc_builder.lock.foreign import ForeignResolution, resolve_foreign_apt
from ngc_builder.lock.inputs import (
    ancestors,
    image_inputs,
    layer_apt_sets,
    minus_parents,
    pip_requirements,
    target_of,
)
from ngc_builder.lock.models import (
    AptPackage,
    ImageLock,
    OsLock,
    PipPackage,
    PlatformLock,
    ReleaseLock,
)
from ngc_builder.lock.pip import ResolutionError, resolve_pip
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.platforms import DEB_ARCHES, others
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.services.engine import Engine
from ngc_builder.services.streams import LineSink

ForeignAptResolver = Callable[[str, str], ForeignResolution]  # (OS base, platform) -> it
PipOf = Callable[..., list[PipPackage]]


def platforms_of(plan: ReleasePlan) -> list[str]:
    """The platforms beyond the host's that some image of `plan` ships."""
    return others([platform for spec in plan.images for platform in spec.platforms])


def engine_apt(loaded: LoadedRelease, plan: ReleasePlan, engine: Engine,
               sink: LineSink) -> ForeignAptResolver:
    """The resolver that runs apt in each OS base's host-platform image in `engine`."""
    def resolve(base_name: str, platform: str) -> ForeignResolution:
        found = resolve_foreign_apt(engine, plan.os_refs[base_name], DEB_ARCHES[platform],
                                    list(loaded.bases[base_name].apt_packages),
                                    layer_apt_sets(loaded, plan, base_name, platform), sink)
        return replace(found, apt=minus_parents(plan, found.apt))
    return resolve


def lock_platforms(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                   apt_of: ForeignAptResolver, sink: LineSink, pip_of: PipOf = resolve_pip,
                   kept: dict[str, PlatformLock] | None = None,
                   ) -> dict[str, PlatformLock]:
    """Every other platform's closure, on top of `lock` (the host platform's, OS included);
    `kept[platform]`'s images and OS bases are taken as they are (`lock --only`)."""
    found: dict[str, PlatformLock] = {}
    for platform in platforms_of(plan):
        resolving = lock.model_copy(update={"platforms": {**found}})
        found[platform] = _lock_platform(loaded, plan, platform, resolving, apt_of, sink,
                                         pip_of, (kept or {}).get(platform))
    return found


def _lock_platform(loaded: LoadedRelease, plan: ReleasePlan, platform: str,
                   lock: ReleaseLock, apt_of: ForeignAptResolver, sink: LineSink,
                   pip_of: PipOf, kept: PlatformLock | None) -> PlatformLock:
    kept = kept or PlatformLock(images={})
    specs = [spec for spec in plan.images if platform in spec.platforms]
    bases = sorted({spec.base for spec in specs if spec.name not in kept.images})
    apt = {base: apt_of(base, platform) for base in bases}
    fresh = {base: OsLock(suite=lock.os[base].suite, epoch=lock.os[base].epoch,
                          apt=apt[base].os) for base in bases if base in lock.os}
    used = {spec.base for spec in specs}
    closure = PlatformLock(images={}, os={**fresh, **{name: entry for name, entry
                                                      in kept.os.items() if name in used}})
    lock = lock.model_copy(update={"platforms": {**lock.platforms, platform: closure}})
    for spec in specs:  # parents first: an image's inputs name its parents' locks
        closure.images[spec.name] = kept.images.get(spec.name) or _image_lock(
            loaded, plan, spec, platform, lock, apt, sink, pip_of)
    return closure


def _image_lock(loaded: LoadedRelease, plan: ReleasePlan, spec: ImageSpec, platform: str,
                lock: ReleaseLock, apt: dict[str, ForeignResolution], sink: LineSink,
                pip_of: PipOf) -> ImageLock:
    inputs = image_inputs(loaded, plan, spec, lock, platform)
    problems = [] if spec.base in lock.os else [
        f"{platform} needs an OS base that ngc-builder bootstraps ({spec.base} is pulled)"]
    parent = lock.of_platform(platform).images.get(spec.parent or "")
    if parent is not None and parent.error is not None:
        problems.append(f"{spec.parent} could not be locked for {platform}")
    if problems:
        return ImageLock(inputs=inputs, error="; ".join(problems))
    debs = _debs(spec, apt[spec.base].apt)
    wheels = _wheels(loaded, plan, spec, platform, lock, sink, pip_of)
    errors = [value for value in (wheels, debs) if isinstance(value, str)]
    if errors:
        return ImageLock(inputs=inputs, error="; ".join(errors))
    assert not isinstance(wheels, str) and not isinstance(debs, str)
    return ImageLock(inputs=inputs, pip=wheels, apt=debs)


def _debs(spec: ImageSpec, apt: AptResolution) -> list[AptPackage] | str:
    return apt.base if spec.kind == "base" else apt.layers.get(spec.name, [])


def _wheels(loaded: LoadedRelease, plan: ReleasePlan, spec: ImageSpec, platform: str,
            lock: ReleaseLock, sink: LineSink, pip_of: PipOf) -> list[PipPackage] | str:
    requirements = pip_requirements(loaded, spec)
    if not requirements:
        return []
    sink(f"resolving Python packages of {spec.name} for {platform}")
    locked = lock.of_platform(platform).images
    below = [package for name in ancestors(plan, spec) if name in locked
             for package in locked[name].pip]
    host = lock.for_image(spec.name)
    try:
        return pip_of(requirements, target_of(loaded, spec, platform), below,
                      pins=host.pip if host is not None else [])
    except ResolutionError as exc:
        return f"pip: {exc}"


def platform_errors(plan: ReleasePlan, lock: ReleaseLock) -> list[StepError]:
    """Images that cannot be locked for a platform although the manifest expects them to."""
    return [StepError(spec.name, f"lock {platform}", locked.error)
            for platform, closure in sorted(lock.platforms.items()) for spec in plan.images
            if (locked := closure.images.get(spec.name)) is not None and locked.error
            and not (spec.entry is not None and spec.entry.expect_failure)]
