"""A patch release between months (`26.12.1`, docs/security.md): the monthly release's
manifest with `patch: N`, and its lock with only the fixed .debs moved to their security
suite's versions. Every other package stays as locked, so every image that holds no fixed
.deb (nor stands on one that does) keeps its content key: the release adopts the published
image and tags it `<YY.MM>.<N>-py3`; the others are built again.

A fixed .deb that asks for more than the lock holds (`Depends: libc6 (>= 2.41)` where 2.36 is
locked) is refused, naming both: such a fix needs `ngc-builder lock`, not a patch.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ngc_builder.bump.edit import round_trip
from ngc_builder.errors import InputError, Problem
from ngc_builder.lock.debian import deb_control, satisfies
from ngc_builder.lock.inputs import image_inputs
from ngc_builder.lock.models import AptPackage, ImageLock, PlatformLock, ReleaseLock
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.plan.dag import ReleasePlan
from ngc_builder.security.scan import Update, locked_sets, security_codename
from ngc_builder.security.suite import apt_package

Fixed = dict[tuple[str, str, str, str], AptPackage]  # (suite, arch, name, locked version)


def patch_id(loaded: LoadedRelease) -> str:
    """The next patch of the manifest's release: `26.12` -> `26.12.1` -> `26.12.2`."""
    return f"{loaded.release.release}.{(loaded.release.patch or 0) + 1}"


def patched_lock(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                 found: list[Update], release_id: str) -> ReleaseLock:
    """`lock` with each found .deb at its fixed version, on every platform, and every image's
    inputs made again (they name the locked packages below it)."""
    fixed: Fixed = {(u.held.codename, u.held.arch, u.held.name, u.held.version):
                    apt_package(u.fixed) for u in found}
    base_of = {spec.name: spec.base for spec in plan.images}
    host = _moved(lock.of_platform(HOST_PLATFORM), base_of, fixed)
    moved = ReleaseLock(release=release_id, images=host.images, os=host.os, platforms={
        platform: _moved(closure, base_of, fixed) for platform, closure in lock.platforms.items()})
    return moved.model_copy(update={
        "images": _with_inputs(loaded, plan, moved, HOST_PLATFORM),
        "platforms": {platform: closure.model_copy(update={
            "images": _with_inputs(loaded, plan, moved, platform)})
            for platform, closure in moved.platforms.items()}})


def _moved(closure: PlatformLock, base_of: dict[str, str], fixed: Fixed) -> PlatformLock:
    def swap(codename: str, packages: list[AptPackage]) -> list[AptPackage]:
        return [fixed.get((codename, p.arch, p.name, p.version), p) for p in packages]
    bases = {name: os_lock.model_copy(update={"apt": swap(security_codename(os_lock),
                                                          os_lock.apt)})
             for name, os_lock in closure.os.items()}
    images = {name: image.model_copy(update={"apt": swap(
                  security_codename(closure.os[base_of[name]]), image.apt)})
              if base_of.get(name) in closure.os else image
              for name, image in closure.images.items()}
    return PlatformLock(images=images, os=bases)


def _with_inputs(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                 platform: str) -> dict[str, ImageLock]:
    """The platform's image locks with their inputs made again from `lock`."""
    images = lock.of_platform(platform).images
    specs = {spec.name: spec for spec in plan.images}
    return {name: image.model_copy(update={"inputs": image_inputs(
                loaded, plan, specs[name], lock, platform)}) if name in specs else image
            for name, image in images.items()}


def unmet(patched: ReleaseLock, found: list[Update], deb_of: Callable[[Any], Path],
          base_of: dict[str, str]) -> list[str]:
    """Each relation of a fixed .deb that the versions locked beside it do not satisfy (a
    relation on a package the lock does not hold is apt's to judge: it is left alone)."""
    held: dict[tuple[str, str], list[str]] = {}
    for locked in locked_sets(patched, base_of):
        for package in locked.owner.apt:
            held.setdefault((locked.codename, package.name), []).append(package.version)
    problems = []
    for update in found:
        control = deb_control(deb_of(update.fixed))
        for group in control.depends if control is not None else ():
            versions = [(relation, held.get((update.held.codename, relation.name), []))
                        for relation in group]
            if any(not known for _relation, known in versions):
                continue
            if not any(satisfies(version, relation) for relation, known in versions
                       for version in known):
                asked = " | ".join(str(relation) for relation in group)
                problems.append(f"{update.fixed.name} {update.fixed.version} needs {asked}; "
                                f"the lock holds {', '.join(versions[0][1])}")
    return sorted(set(problems))


def patched_manifest(text: str, patch: int, follow: bool, release: str) -> str:
    """The manifest with `patch: N` after its release id; with `follow`, `<YY.MM>-py3` among
    its aliases, so that the monthly tag moves to this patch's images (the release engineer's
    choice, written where it is reviewed)."""
    yaml = round_trip()
    data: CommentedMap = yaml.load(text)
    if "patch" in data:
        data["patch"] = patch
    else:
        data.insert(list(data).index("release") + 1, "patch", patch,
                    comment="security fixes between months: ngc-builder security --patch")
    aliases = data.setdefault("aliases", CommentedSeq())
    monthly = f"{release}-py3"
    if follow and monthly not in aliases:
        aliases.append(monthly)
    if not follow and monthly in aliases:
        aliases.remove(monthly)
    if not aliases:
        del data["aliases"]
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def refuse_unmet(problems: list[str], lock_file: Path) -> None:
    if problems:
        raise InputError([Problem(str(lock_file), 1, "apt", f"{problem}: relock with "
                                  "`ngc-builder lock` instead of a patch")
                          for problem in problems])
