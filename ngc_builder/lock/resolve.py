"""`lock`: resolve every image of a release into a ReleaseLock.

Debian packages are resolved by apt inside each OS image (the target's own resolver and
mirror); Python packages by pip for each image's target, on top of its parent's locked set.
Images are resolved parent first; rows that cannot resolve keep the reason in the lock.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ngc_builder.errors import StepError
from ngc_builder.lock.apt import AptResolution, resolve_apt
from ngc_builder.lock.inputs import (
    image_inputs,
    layer_apt_sets,
    minus_parents,
    pip_requirements,
    target_of,
)
from ngc_builder.lock.models import AptPackage, ImageLock, PipPackage, ReleaseLock
from ngc_builder.lock.pip import ResolutionError, resolve_pip
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.services.engine import Engine
from ngc_builder.services.streams import LineSink

PARALLEL = 4
AptResolver = Callable[[str], AptResolution]  # OS base name -> its resolution
PipResolver = Callable[[list[str], Target, list[PipPackage]], list[PipPackage]]


def lock_release(loaded: LoadedRelease, plan: ReleasePlan, engine: Engine,
                 sink: LineSink, kept: dict[str, ImageLock] | None = None) -> ReleaseLock:
    """The lock of every image in `plan` but those `kept` as they are (OS images must be
    present in `engine`)."""
    def apt_of(base_name: str) -> AptResolution:
        return _resolve_base_apt(loaded, plan, engine, base_name, sink)

    return build_lock(loaded, plan, apt_of, sink, kept=kept)


def build_lock(loaded: LoadedRelease, plan: ReleasePlan, apt_of: AptResolver,
               sink: LineSink, pip_of: PipResolver = resolve_pip,
               kept: dict[str, ImageLock] | None = None) -> ReleaseLock:
    """The lock from the two resolvers (tests hand in their own); `kept` entries are taken
    as they are, the others resolved anew."""
    kept = kept or {}
    bases = sorted({spec.base for spec in plan.images if spec.name not in kept})
    with ThreadPoolExecutor(PARALLEL) as pool:
        apt = dict(zip(bases, pool.map(apt_of, bases), strict=True))
        pip = _resolve_pip_layers(loaded, plan, pool, sink, pip_of, kept)
    lock = ReleaseLock(release=plan.release, images={})
    for spec in plan.images:  # parents first: an image's inputs name its parents' locks
        if spec.name in kept:
            lock.images[spec.name] = kept[spec.name]
            continue
        packages, error = _packages(spec, apt[spec.base], pip)
        lock.images[spec.name] = ImageLock(
            inputs=image_inputs(loaded, plan, spec, lock), pip=packages[0], apt=packages[1],
            error=error)
    return lock


def _resolve_base_apt(loaded: LoadedRelease, plan: ReleasePlan, engine: Engine,
                      base_name: str, sink: LineSink) -> AptResolution:
    sink(f"resolving Debian packages on {base_name}")
    return minus_parents(plan, resolve_apt(engine, plan.os_refs[base_name],
                                           list(loaded.bases[base_name].apt_packages),
                                           layer_apt_sets(loaded, plan, base_name), sink))


PipResult = dict[str, list[PipPackage] | str]


def _resolve_pip_layers(loaded: LoadedRelease, plan: ReleasePlan, pool: ThreadPoolExecutor,
                        sink: LineSink, pip_of: PipResolver,
                        kept: dict[str, ImageLock]) -> PipResult:
    """CUDA layers first (their wheels constrain the frameworks on them), then frameworks,
    then their devel images."""
    found: PipResult = {name: image.error or image.pip for name, image in kept.items()}
    for kind in ("cuda", "framework", "devel"):
        specs = [spec for spec in plan.images if spec.kind == kind and spec.name not in kept]
        answers = pool.map(lambda spec: _pip_layer(loaded, plan, spec, found, sink, pip_of),
                           specs)
        found.update(zip([spec.name for spec in specs], answers, strict=True))
    return found


def _pip_layer(loaded: LoadedRelease, plan: ReleasePlan, spec: ImageSpec, found: PipResult,
               sink: LineSink, pip_of: PipResolver) -> list[PipPackage] | str:
    below: list[PipPackage] = []
    node = spec.parent
    while node:  # every layer below is installed: a devel image's is its framework's and stack's
        parent = found.get(node, [])
        if isinstance(parent, str):
            return f"{node} could not be locked"
        below += parent
        node = plan.get(node).parent
    sink(f"resolving Python packages of {spec.name}")
    try:
        return pip_of(pip_requirements(loaded, spec), target_of(loaded, spec), below)
    except ResolutionError as exc:
        return f"pip: {exc}"


def _packages(spec: ImageSpec, apt: AptResolution, pip: PipResult,
              ) -> tuple[tuple[list[PipPackage], list[AptPackage]], str | None]:
    wheels = pip.get(spec.name, [])
    debs: list[AptPackage] | str = apt.base if spec.kind == "base" else apt.layers.get(
        spec.name, [])
    errors = [value for value in (wheels, debs) if isinstance(value, str)]
    if errors:
        return ([], []), "; ".join(errors)
    assert not isinstance(wheels, str) and not isinstance(debs, str)
    return (wheels, debs), None


def unexpected_errors(plan: ReleasePlan, lock: ReleaseLock) -> list[StepError]:
    """Images that cannot be locked although the manifest expects them to work."""
    return [StepError(spec.name, "lock", locked.error) for spec in plan.images
            if (locked := lock.images[spec.name]).error is not None
            and not (spec.entry is not None and spec.entry.expect_failure)]
