"""What each image's lock was resolved from, and whether the lock still matches the manifest.

An image's inputs are its requirements, its Debian packages, its target (Python, glibc,
machine) and the locked packages of every image below it: if any of them changed, its
resolution may differ, so the lock is stale for that image.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from ngc_builder.errors import Problem
from ngc_builder.files import DATA_LIMIT, read_text
from ngc_builder.lock.apt import AptResolution
from ngc_builder.lock.models import AptPackage, ImageLock, ReleaseLock
from ngc_builder.lock.where import value_line
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.platforms import HOST_PLATFORM, MACHINES
from ngc_builder.manifest.stacks import image_requirements
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import ImageSpec, ReleasePlan

ERROR_SHOWN = 200  # characters of a locked error quoted in a problem: one short line


def target_of(loaded: LoadedRelease, spec: ImageSpec, platform: str = HOST_PLATFORM) -> Target:
    base = loaded.bases[spec.base]
    return Target(base.python, base.glibc, MACHINES[platform])


def pip_requirements(loaded: LoadedRelease, spec: ImageSpec) -> list[str]:
    if spec.kind == "cuda":
        assert spec.stack is not None
        wheels = loaded.release.cuda_stacks[spec.stack].wheels
        return [f"{name}=={version}" for name, version in sorted(wheels.items())]
    if spec.kind == "framework":
        assert spec.entry is not None
        return image_requirements(loaded, spec.entry)
    if spec.kind == "devel":
        assert spec.stack is not None
        wheels = loaded.release.cuda_stacks[spec.stack].devel_wheels
        return [f"{name}=={version}" for name, version in sorted(wheels.items())]
    return []


def apt_requirements(loaded: LoadedRelease, spec: ImageSpec,
                     platform: str = HOST_PLATFORM) -> list[str]:
    if spec.kind == "base":
        return list(loaded.bases[spec.base].apt_packages)
    if spec.kind == "cuda":
        return list(loaded.bases[spec.base].cuda_apt_packages)
    if spec.kind == "framework":
        assert spec.entry is not None
        return loaded.frameworks[spec.entry.framework].spec.apt_for(spec.entry.variant,
                                                                     platform)
    if spec.kind == "devel":
        return list(loaded.bases[spec.base].devel_apt_packages)
    return []


def layer_apt_sets(loaded: LoadedRelease, plan: ReleasePlan, base_name: str,
                   platform: str = HOST_PLATFORM) -> dict[str, list[str]]:
    """What apt resolves for each layer on `base_name` beyond the base: its own packages after
    those of the layers between it and the base (a framework resolves on top of its CUDA
    stack's, so it locks only what the stack lacks; `minus_parents` takes those out again)."""
    layers: dict[str, list[str]] = {}
    for spec in plan.images:
        if spec.base != base_name or spec.kind == "base" or platform not in spec.platforms:
            continue
        chain = [plan.get(name) for name in reversed(ancestors(plan, spec))] + [spec]
        wanted = [package for node in chain if node.kind != "base"
                  for package in apt_requirements(loaded, node, platform)]
        if wanted:
            layers[spec.name] = wanted
    return layers


def minus_parents(plan: ReleasePlan, resolution: AptResolution) -> AptResolution:
    """`resolution` with each layer's packages that its parent layer already installs left
    out (the sets of `layer_apt_sets` repeat the parents' packages)."""
    layers: dict[str, list[AptPackage] | str] = {}
    for name, found in resolution.layers.items():
        parent = resolution.layers.get(plan.get(name).parent or "")
        if isinstance(found, str) or not isinstance(parent, list):
            layers[name] = found
            continue
        inherited = {package.pin() for package in parent}
        layers[name] = [package for package in found if package.pin() not in inherited]
    return AptResolution(resolution.base, layers)


def image_inputs(loaded: LoadedRelease, plan: ReleasePlan, spec: ImageSpec,
                 lock: ReleaseLock, platform: str = HOST_PLATFORM) -> dict[str, list[str]]:
    """The inputs of `spec` on `platform`, with the packages its ancestors have in `lock`
    for that platform; another platform's also name the host platform's lock of the same
    image, whose versions it keeps (when those move, it is stale)."""
    target = target_of(loaded, spec, platform)
    base = loaded.bases[spec.base]
    inputs = {"pip": pip_requirements(loaded, spec),
              "apt": apt_requirements(loaded, spec, platform),
              "target": [f"python {target.python}", f"glibc {target.glibc}", target.machine],
              "os": [base.name, base.os_version]}
    below = lock.of_platform(platform).images
    inputs["below"] = [f"{name} {_digest(below.get(name))}" for name in ancestors(plan, spec)]
    if platform != HOST_PLATFORM:
        inputs["versions"] = [f"{HOST_PLATFORM} {_digest(lock.for_image(spec.name))}"]
    return inputs


def with_locked_os(plan: ReleasePlan, lock: ReleaseLock) -> ReleasePlan:
    """The plan with each locked OS base named after its lock: another lock, another OS image
    (and so other keys for everything on it)."""
    refs = {name: f"{ref}-{lock.os[name].digest()[:12]}" if name in lock.os else ref
            for name, ref in plan.os_refs.items()}
    return replace(plan, os_refs=refs)


def ancestors(plan: ReleasePlan, spec: ImageSpec) -> list[str]:
    """`spec`'s parent, its parent, ... up to the base image."""
    names: list[str] = []
    node = spec.parent
    while node is not None:
        names.append(node)
        node = plan.get(node).parent
    return names


def _digest(image: ImageLock | None) -> str:
    if image is None:
        return "unlocked"
    rows = [p.requirement() for p in image.pip] + [f"{p.pin()} {p.sha256}" for p in image.apt]
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


def stale_problems(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock | None,
                   path: Path) -> list[Problem]:
    """Every image whose lock is missing or was resolved from other inputs, by name."""
    shown = shown_path(path, loaded.root)
    if lock is None:
        return [Problem(shown, 1, "lock", f"no lock for release {plan.release}: run "
                        "`ngc-builder lock MANIFEST`")]
    text = read_text(path, DATA_LIMIT) if path.is_file() else ""  # "": line 1
    problems = [Problem(shown, value_line(text, ("images", spec.name)), f"images.{spec.name}",
                        message)
                for spec in plan.images
                for message in _image_staleness(loaded, plan, spec, lock)]
    extra = sorted(set(lock.images) - {spec.name for spec in plan.images})
    problems += [Problem(shown, value_line(text, ("images", name)), f"images.{name}",
                         "locked but not in the manifest: lock again") for name in extra]
    return problems + _os_staleness(loaded, plan, lock, shown, text) + \
        _platform_staleness(loaded, plan, lock, shown, text) + \
        _unexpected_errors(plan, lock, shown, text)


def _unexpected_errors(plan: ReleasePlan, lock: ReleaseLock, shown: str,
                       text: str) -> list[Problem]:
    """Each image, on each platform, that the lock says could not be locked although the
    manifest expects it to work. `lock` never writes one (it fails instead), so the lock was
    edited, or the manifest's expect_failure taken away since; either way the release would
    fail the image only at its turn, and the lock's content check skips it."""
    problems = []
    for platform in [HOST_PLATFORM, *sorted(lock.platforms)]:
        prefix: tuple[str, ...] = () if platform == HOST_PLATFORM else ("platforms", platform)
        locked = lock.of_platform(platform).images
        for spec in plan.images:
            error = locked[spec.name].error if spec.name in locked else None
            if error is None or (spec.entry is not None and spec.entry.expect_failure):
                continue
            where = (*prefix, "images", spec.name, "error")
            shown_error = error if len(error) <= ERROR_SHOWN else error[:ERROR_SHOWN] + "…"
            problems.append(Problem(shown, value_line(text, where), ".".join(where),
                                    f"{spec.name} could not be locked ({shown_error!r}), but the "
                                    "manifest expects it to work (no expect_failure): lock again"))
    return problems


def _platform_staleness(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                        shown: str, text: str) -> list[Problem]:
    """Each other platform's images as the host's: missing, stale or not wanted any more."""
    problems = []
    shipped = {platform for spec in plan.images for platform in spec.platforms}
    for platform in sorted((shipped | set(lock.platforms)) - {HOST_PLATFORM}):
        locked = lock.of_platform(platform).images
        wanted = [spec for spec in plan.images if platform in spec.platforms]
        for spec in wanted:
            where = ("platforms", platform, "images", spec.name)
            problems += [Problem(shown, value_line(text, where), ".".join(where), message)
                         for message in _image_staleness(loaded, plan, spec, lock, platform)]
        if not wanted and not locked:  # an empty section: no image entry would name it
            problems.append(Problem(shown, value_line(text, ("platforms", platform)),
                                    f"platforms.{platform}",
                                    f"no image of the manifest ships {platform}: lock again"))
        for name in sorted(set(locked) - {spec.name for spec in wanted}):
            where = ("platforms", platform, "images", name)
            problems.append(Problem(shown, value_line(text, where), ".".join(where),
                                    f"locked for {platform} but the manifest does not ship it "
                                    "there: lock again"))
    return problems


def _os_staleness(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                  shown: str, text: str) -> list[Problem]:
    problems = []
    for name, entry in sorted(lock.os.items()):
        base = loaded.bases.get(name)
        suite = base.bootstrap.suite if base is not None and base.bootstrap else None
        if name not in plan.os_refs or suite != entry.suite:
            problems.append(Problem(shown, value_line(text, ("os", name)), f"os.{name}",
                                    f"lock is stale (suite "
                                    f"{entry.suite} locked, {suite or 'none'} wanted): lock again"))
    return problems


def _image_staleness(loaded: LoadedRelease, plan: ReleasePlan, spec: ImageSpec,
                     lock: ReleaseLock, platform: str = HOST_PLATFORM) -> list[str]:
    locked = lock.of_platform(platform).images.get(spec.name)
    if locked is None:
        return ["not in the lock: lock again" if platform == HOST_PLATFORM
                else f"not locked for {platform}: lock again"]
    wanted = image_inputs(loaded, plan, spec, lock, platform)
    changes = [_change(key, locked.inputs.get(key, []), wanted[key]) for key in sorted(wanted)
               if locked.inputs.get(key, []) != wanted[key]]
    return [f"lock is stale ({'; '.join(changes)}): lock again"] if changes else []


def _change(key: str, old: list[str], new: list[str]) -> str:
    removed = [item for item in old if item not in new]
    added = [item for item in new if item not in old]
    parts = [f"-{item}" for item in removed] + [f"+{item}" for item in added]
    return f"{key}: {' '.join(parts) or 'reordered'}"


def shown_path(path: Path, root: Path) -> str:
    """`path` as errors name it: relative to the project root when it lies inside."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
