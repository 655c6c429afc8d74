"""A lock's content follows from its inputs: every wheel an image locks is asked for by one of
its requirements or, through the Requires-Dist metadata of a locked wheel, by another locked
wheel; everything those ask for is locked (in the image or below it). Its .debs are held to
the same rule through their control files (`deb_closure.py`).

The inputs check (`inputs.py`) says whether the lock was resolved from today's manifest; this
says whether the package lists are what that resolution gives. A wheel appended by hand to
an image's `pip` list, with a good hash, passed the first and was installed; here it is
named, with its image, before anything is built.
"""

from __future__ import annotations

import contextlib
import json
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import Marker, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from ngc_builder.errors import Problem
from ngc_builder.files import INPUT_LIMIT, read_text, write_atomic
from ngc_builder.lock.deb_closure import Controls, DebFindings, check_debs
from ngc_builder.lock.inputs import ancestors, apt_requirements, pip_requirements, target_of
from ngc_builder.lock.models import PipPackage, PlatformLock, ReleaseLock, normalise
from ngc_builder.lock.where import value_line
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.services.environment import xdg_home

# pip's `--python-version` picks wheels for the target, but it reads environment markers with
# the Python it runs under (the builder's own, when `lock` ran): a wheel that a marker asks for
# only there is in the lock although the target does not need it (`overrides` of Jupyter's
# `python_version < "3.12"` on a 3.13 image). Such a wheel is explained, not required.
RESOLVER_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
# A locked wheel's Requires-Dist, None when its metadata is not at hand (then nothing it
# might ask for can be ruled out, and unasked packages of that image are not named).
Requires = Callable[[PipPackage, Target], tuple[str, ...] | None]
MEMO_FORMAT = 1  # of the kept Requires-Dist; another number is read anew


def cached_requires(wheel_path: Callable[[PipPackage], Path],
                    memo_dir: Path | None = None) -> Requires:
    """Requires-Dist read from the cached wheel (its hash was checked when it entered), each
    wheel once: a no-op release used to spend seconds re-reading torch's zip directory. What
    was read is kept in `memo_dir` (default: this user's cache, not the shared package tree)."""
    read: dict[str, tuple[str, ...] | None] = {}
    folder = memo_dir or requires_memo_dir()

    def requires(package: PipPackage, target: Target) -> tuple[str, ...] | None:
        if package.sha256 not in read:
            path = wheel_path(package)
            read[package.sha256] = remembered_requires(path, package, folder) \
                if path.is_file() else None
        return read[package.sha256]
    return requires


def requires_memo_dir() -> Path:
    return xdg_home("XDG_CACHE_HOME", Path.home() / ".cache") / "ngc-builder" / "wheel-requires"


def remembered_requires(path: Path, package: PipPackage, folder: Path) -> tuple[str, ...] | None:
    """The wheel's Requires-Dist, kept by its sha256 after the first read: a wheel of that
    hash never changes. The memo lives outside the package cache that builds are served from
    (and that several users may share): whoever could edit it there could make a wheel appended
    to a lock by hand look asked for. A memo of another format or hash is read anew."""
    memo = folder / f"{package.sha256}.json"
    with contextlib.suppress(OSError, ValueError):
        kept = json.loads(read_text(memo, INPUT_LIMIT))
        if _memo_holds(kept, package.sha256):
            return tuple(kept["requires"])
    found = wheel_requires(path)
    if found is not None:
        with contextlib.suppress(OSError):  # a read-only home is read each time
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(memo, json.dumps({"format": MEMO_FORMAT, "sha256": package.sha256,
                                           "requires": list(found)}))
    return found


def _memo_holds(kept: object, sha256: str) -> bool:
    if not isinstance(kept, dict) or kept.get("format") != MEMO_FORMAT:
        return False
    lines = kept.get("requires")
    return kept.get("sha256") == sha256 and isinstance(lines, list) and \
        all(isinstance(line, str) for line in lines)


def wheel_requires(path: Path) -> tuple[str, ...] | None:
    try:
        with zipfile.ZipFile(path) as wheel:
            name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")
                        and n.count("/") == 1)
            text = wheel.read(name).decode("utf-8", errors="replace")
    except (OSError, zipfile.BadZipFile, StopIteration):
        return None
    return tuple(HeaderParser().parsestr(text).get_all("Requires-Dist") or ())


@dataclass(frozen=True)
class Closure:
    problems: list[Problem]
    unchecked: list[str]  # images with a package whose metadata was not at hand


@dataclass(frozen=True)
class Metadata:
    """Where the locked packages' own metadata comes from."""

    requires: Requires
    controls: Controls


@dataclass(frozen=True)
class LockText:
    """The lock as its file shows it: problems name the line of the package they are about."""

    shown: str
    text: str

    def problem(self, path: tuple[str | int, ...], message: str) -> Problem:
        field = path[:5] if path[:1] == ("platforms",) else path[:3]  # the image's entry
        return Problem(self.shown, value_line(self.text, path),
                       ".".join(str(step) for step in field), message)


def check_closure(loaded: LoadedRelease, plan: ReleasePlan, lock: ReleaseLock,
                  images: list[ImageSpec], metadata: Metadata, where: LockText) -> Closure:
    """Each of `images` whose locked wheels or .debs are not exactly its requirements'
    closure, on every platform it is locked for."""
    problems, unchecked = [], []
    for platform in [HOST_PLATFORM, *sorted(lock.platforms)]:
        closure = lock.of_platform(platform)
        prefix: tuple[str, ...] = () if platform == HOST_PLATFORM else ("platforms", platform)
        for spec in images:
            locked = closure.images.get(spec.name)
            if locked is None or locked.error is not None:
                continue
            walk = _walk(loaded, plan, closure, spec, metadata.requires, platform)
            debs = _deb_findings(loaded, plan, closure, spec, metadata.controls, platform)
            at = (*prefix, "images", spec.name)
            problems += [where.problem((*at, "pip", *step), message)
                         for step, message in walk.problems]
            problems += [where.problem((*at, "apt", *(() if index is None else (index,))),
                                       message) for index, message in debs.problems]
            if walk.unknown or debs.unknown:
                unchecked.append(spec.name if not prefix else f"{spec.name} ({platform})")
    return Closure(problems, unchecked)


def _deb_findings(loaded: LoadedRelease, plan: ReleasePlan, closure: PlatformLock,
                  spec: ImageSpec, controls: Controls, platform: str) -> DebFindings:
    own = closure.images[spec.name].apt
    if spec.base not in closure.os:  # an OS base pulled, not locked: what it holds is
        return DebFindings()  # unknown, so its images' .debs cannot be held to a closure

    below = [package for name in ancestors(plan, spec)
             if (entry := closure.images.get(name)) is not None for package in entry.apt]
    below += closure.os[spec.base].apt
    return check_debs(apt_requirements(loaded, spec, platform), own, below, controls)


def _walk(loaded: LoadedRelease, plan: ReleasePlan, closure: PlatformLock, spec: ImageSpec,
          requires: Requires, platform: str) -> _Walk:
    locked = closure.images[spec.name]
    own = {package.name: package for package in locked.pip}
    below = {package.name for name in ancestors(plan, spec)
             if (entry := closure.images.get(name)) is not None for package in entry.pip}
    walk = _Walk(own, below, target_of(loaded, spec, platform), requires)
    for text in pip_requirements(loaded, spec):
        walk.visit(Requirement(text), "the manifest")
    if not walk.unknown:  # with every wheel's metadata read, what was not reached is extra
        walk.problems += [((walk.index[name],), f"{name}=={own[name].version} is locked, but no "
                           "requirement of the image and no locked wheel's metadata asks for "
                           "it (lock again)") for name in sorted(set(own) - walk.reached)]
    return walk


class _Walk:
    """The requirements' closure over the locked wheels, depth first, each (name, extras)
    once."""

    def __init__(self, own: dict[str, PipPackage], below: set[str], target: Target,
                 requires: Requires) -> None:
        self.own, self.below, self.target, self.requires = own, below, target, requires
        self.index = {name: at for at, name in enumerate(own)}  # the wheel's place in the lock
        self.reached: set[str] = set()
        self.seen: set[tuple[str, frozenset[str]]] = set()
        self.unknown: list[str] = []
        self.problems: list[tuple[tuple[int, ...], str]] = []  # (at, message)

    def visit(self, requirement: Requirement, asked_by: str, strict: bool = True) -> None:
        """`strict`: the requirement applies on the target, so it must be met; otherwise it
        applied only as pip read it when locking, and explains a wheel without requiring it."""
        name = normalise(requirement.name)
        if name in self.below:
            return  # the parent's closure, checked with the parent
        package = self.own.get(name)
        if package is None:
            if strict:
                self.problems.append(((), f"{requirement} (asked by {asked_by}) is not locked"))
            return
        if strict and not requirement.specifier.contains(package.version, prereleases=True):
            self.problems.append(((self.index[name],), f"{name}=={package.version} is locked, "
                                  f"but {asked_by} asks for {requirement}"))
        key = (name, frozenset(requirement.extras))
        if key in self.seen:
            return
        self.seen.add(key)
        self.reached.add(name)
        self._visit_dependencies(package, requirement.extras)

    def _visit_dependencies(self, package: PipPackage, extras: set[str]) -> None:
        found = self.requires(package, self.target)
        if found is None:
            self.unknown.append(package.name)
            return
        for text in found:
            try:
                dependency = Requirement(text)
            except InvalidRequirement:
                continue  # pip skips what it cannot read too
            asked_by = f"{package.name} {package.version}"
            if applies(dependency.marker, self.target, extras):
                self.visit(dependency, asked_by)
            elif applies(dependency.marker, self.target, extras, RESOLVER_PYTHON):
                self.visit(dependency, asked_by, strict=False)


def applies(marker: Marker | None, target: Target, extras: set[str],
            python: str | None = None) -> bool:
    """The marker for the image's target, for any of the extras asked; `python`: with that
    Python version in place of the target's."""
    if marker is None:
        return True
    version = python or target.python
    environment = {"python_version": version, "python_full_version": f"{version}.0",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "implementation_version": f"{version}.0", "sys_platform": "linux",
                   "platform_system": "Linux", "platform_machine": target.machine,
                   "os_name": "posix", "platform_release": "", "platform_version": ""}
    try:
        return any(marker.evaluate({**environment, "extra": extra})
                   for extra in ("", *sorted(extras)))
    except UndefinedEnvironmentName:
        return False

