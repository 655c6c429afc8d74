"""An image's locked .debs follow from its Debian packages: each is asked for by the manifest
or, through the Pre-Depends/Depends of a locked .deb's own control file, by another locked
package; everything those ask for is locked, in the image or below it (its parents and its
OS base), at a version that meets the relation.

Read as apt installs with `--no-install-recommends`: a relation already met below installs
nothing; a name that a real locked package has is met by that package only, a purely virtual
name by a package that provides it; and a package below that the image locks again at a
newer version is an upgrade apt made (a `Breaks` can ask for one), so it is explained without
a Depends reaching it (its own Depends are still followed). A downgrade, a name listed twice
and a .deb whose control cannot be read are named, never explained.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ngc_builder.lock.debian import (
    DebControl,
    Relation,
    compare_versions,
    deb_control,
    satisfies,
)
from ngc_builder.lock.models import AptPackage


@dataclass(frozen=True)
class Unreadable:
    """A cached .deb whose control file cannot be read within bounds: a problem, not an
    unknown (one such .deb must not switch the check off for its image)."""


# A locked .deb's control; None when the .deb is not at hand (then nothing it asks for is
# known, and the image's Debian packages are left unchecked).
Controls = Callable[[AptPackage], DebControl | Unreadable | None]


def cached_controls(deb_path: Callable[[AptPackage], Path]) -> Controls:
    """Controls read from the cached .deb (its hash was checked when it entered), each file
    once: the OS lock's .debs are below every image on that OS."""
    read: dict[Path, DebControl | Unreadable] = {}

    def control(package: AptPackage) -> DebControl | Unreadable | None:
        path = deb_path(package)
        if path not in read:
            if not path.is_file():
                return None
            read[path] = deb_control(path) or Unreadable()
        return read[path]
    return control


Read = list[tuple[AptPackage, DebControl]]
Found = list[tuple[int | None, str]]  # (index of the image's own package or None, message)


@dataclass
class DebFindings:
    problems: Found = field(default_factory=list)
    unknown: bool = False  # a .deb was not at hand: nothing was checked


def check_debs(requested: list[str], own: list[AptPackage], below: list[AptPackage],
               controls: Controls) -> DebFindings:
    """`below`: the packages of the parents and the OS lock."""
    own_read, below_read = _read(own, controls), _read(below, controls)
    if own_read is None or below_read is None:
        return DebFindings(unknown=True)
    found = _listed_twice(own) + [
        (index, f"{package.pin()}: its .deb's control file cannot be read (lock again)")
        for index, (package, control) in enumerate(own_read) if control is None]
    walk = _DebWalk(own, _known(own_read), _known(below_read))
    for name in requested:
        walk.visit((Relation(name),), "the manifest")
    upgrades = _upgrades(own, below)
    for package in upgrades.values():
        walk.reach(package)
    walk.findings.problems = found + walk.findings.problems + _unasked(own, walk.reached,
                                                                      upgrades)
    return walk.findings


def _read(packages: list[AptPackage],
          controls: Controls) -> list[tuple[AptPackage, DebControl | None]] | None:
    """Each package with its control (None: unreadable); None when one is not at hand."""
    read = [(package, controls(package)) for package in packages]
    if any(control is None for _, control in read):
        return None
    return [(package, control if isinstance(control, DebControl) else None)
            for package, control in read]


def _known(read: list[tuple[AptPackage, DebControl | None]]) -> Read:
    return [(package, control) for package, control in read if control is not None]


def _listed_twice(own: list[AptPackage]) -> Found:
    seen: set[tuple[str, str]] = set()
    found: Found = []
    for index, package in enumerate(own):
        if (package.name, package.arch) in seen:
            found.append((index, f"{package.name} is listed twice (lock again)"))
        seen.add((package.name, package.arch))
    return found


def _upgrades(own: list[AptPackage], below: list[AptPackage]) -> dict[str, AptPackage]:
    """Own packages that lock a package below at a newer version."""
    below_versions = {package.name: package.version for package in below}
    return {package.name: package for package in own if package.name in below_versions
            and compare_versions(package.version, below_versions[package.name]) > 0}


def _unasked(own: list[AptPackage], reached: set[str], upgrades: dict[str, AptPackage]) -> Found:
    """Own packages nothing reached, but for upgrades of a package below."""
    return [(index, f"{package.pin()} is locked, but no Debian package of the image and no "
                    "locked package's Depends asks for it (lock again)")
            for index, package in enumerate(own)
            if package.name not in reached and package.name not in upgrades]


class _DebWalk:
    def __init__(self, listed: list[AptPackage], own: Read, below: Read) -> None:
        self.own = {package.name: package for package in listed}  # readable or not
        self.own_controls = {package.name: control for package, control in own}
        self.below = {package.name: package for package, _ in below}
        self.providers: dict[str, list[tuple[AptPackage, Relation, bool]]] = {}
        for read, is_own in ((own, True), (below, False)):
            for package, control in read:
                for provided in control.provides:
                    self.providers.setdefault(provided.name, []).append(
                        (package, provided, is_own))
        self.reached: set[str] = set()
        self.findings = DebFindings()

    def visit(self, group: tuple[Relation, ...], asked_by: str) -> None:
        """apt's reading of `a | b`: met below installs nothing, else the first alternative
        that is locked is what apt installed; one locked at a refused version is named (and
        still followed, so that its own dependencies are not called extra)."""
        met = [found for found in map(self._meeting, group) if found]
        if any(not is_own for found in met for _, is_own in found):
            return
        if met:
            for package, _ in met[0]:
                self.reach(package)
            return
        self.findings.problems.append((None, self._unmet(group, asked_by)))
        for relation in group:
            if relation.name in self.own:
                self.reach(self.own[relation.name])

    def _meeting(self, relation: Relation) -> list[tuple[AptPackage, bool]]:
        """Every locked package that meets `relation`, and whether it is the image's own: a
        real package of that name when one is locked, else the packages providing it."""
        real = [(package, is_own) for package, is_own in
                ((self.own.get(relation.name), True), (self.below.get(relation.name), False))
                if package is not None]
        if real:
            return [(package, is_own) for package, is_own in real
                    if satisfies(package.version, relation)]
        return [(package, is_own)
                for package, provided, is_own in self.providers.get(relation.name, [])
                if relation.op is None or (provided.op == "=" and provided.version is not None
                                           and satisfies(provided.version, relation))]

    def _unmet(self, group: tuple[Relation, ...], asked_by: str) -> str:
        for relation in group:
            present = self.own.get(relation.name) or self.below.get(relation.name)
            if present is not None:
                return f"{present.pin()} is locked, but {asked_by} asks for {relation}"
        alternatives = " | ".join(str(relation) for relation in group)
        return f"{alternatives} (asked by {asked_by}) is not locked"

    def reach(self, package: AptPackage) -> None:
        if package.name in self.reached or package.name not in self.own_controls:
            return
        self.reached.add(package.name)
        for group in self.own_controls[package.name].depends:
            self.visit(group, f"{package.name} {package.version}")
