"""An image's locked .debs follow from its Debian packages: each is asked for by the manifest
or, through the Pre-Depends/Depends of a locked .deb's own control file, by another locked
package; everything those ask for is locked, in the image or below it (its parents and its
OS base), at a version that meets the relation.

Read as apt installs with `--no-install-recommends`: a relation already met below installs
nothing, a virtual name is met by a package that provides it, and a package below that the
image locks again at another version is an upgrade apt made (a `Breaks` can ask for one), so
it is explained without a Depends reaching it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ngc_builder.lock.debian import DebControl, Relation, deb_control, satisfies
from ngc_builder.lock.models import AptPackage

# A locked .deb's control, None when the .deb is not at hand (then nothing it asks for is
# known, and the image's Debian packages are left unchecked).
Controls = Callable[[AptPackage], DebControl | None]


def cached_controls(deb_path: Callable[[AptPackage], Path]) -> Controls:
    """Controls read from the cached .deb (its hash was checked when it entered)."""
    def control(package: AptPackage) -> DebControl | None:
        path = deb_path(package)
        return deb_control(path) if path.is_file() else None
    return control


Read = list[tuple[AptPackage, DebControl]]


@dataclass
class DebFindings:
    """What is wrong, as (index of the image's own package or None, message)."""

    problems: list[tuple[int | None, str]] = field(default_factory=list)
    unknown: bool = False  # a .deb was not at hand: nothing was checked


def check_debs(requested: list[str], own: list[AptPackage], below: list[AptPackage],
               controls: Controls) -> DebFindings:
    own_read, below_read = _read(own, controls), _read(below, controls)
    if own_read is None or below_read is None:
        return DebFindings(unknown=True)
    walk = _DebWalk(own_read, below_read)
    for name in requested:
        walk.visit((Relation(name),), "the manifest")
    walk.findings.problems += _unasked(own, below, walk.reached)
    return walk.findings


def _read(packages: list[AptPackage], controls: Controls) -> Read | None:
    """Each package with its control; None when any is not at hand."""
    read = [(package, controls(package)) for package in packages]
    known = [(package, control) for package, control in read if control is not None]
    return known if len(known) == len(read) else None


def _unasked(own: list[AptPackage], below: list[AptPackage],
             reached: set[str]) -> list[tuple[int | None, str]]:
    """Own packages nothing reached, but for upgrades of a package below."""
    below_versions = {package.name: package.version for package in below}
    upgrades = {package.name for package in own
                if below_versions.get(package.name, package.version) != package.version}
    return [(index, f"{package.pin()} is locked, but no Debian package of the image and no "
                    "locked package's Depends asks for it (lock again)")
            for index, package in enumerate(own)
            if package.name not in reached and package.name not in upgrades]


class _DebWalk:
    def __init__(self, own: Read, below: Read) -> None:
        self.own = {package.name: package for package, _ in own}
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
                self._reach(package)
            return
        self.findings.problems.append((None, self._unmet(group, asked_by)))
        for relation in group:
            if relation.name in self.own:
                self._reach(self.own[relation.name])

    def _meeting(self, relation: Relation) -> list[tuple[AptPackage, bool]]:
        """Every locked package that meets `relation`, and whether it is the image's own."""
        found = []
        if (mine := self.own.get(relation.name)) and satisfies(mine.version, relation):
            found.append((mine, True))
        if (inherited := self.below.get(relation.name)) and satisfies(inherited.version,
                                                                       relation):
            found.append((inherited, False))
        for package, provided, is_own in self.providers.get(relation.name, []):
            if relation.op is None or (provided.op == "=" and provided.version is not None
                                       and satisfies(provided.version, relation)):
                found.append((package, is_own))
        return found

    def _unmet(self, group: tuple[Relation, ...], asked_by: str) -> str:
        for relation in group:
            present = self.own.get(relation.name) or self.below.get(relation.name)
            if present is not None:
                return f"{present.pin()} is locked, but {asked_by} asks for {relation}"
        alternatives = " | ".join(str(relation) for relation in group)
        return f"{alternatives} (asked by {asked_by}) is not locked"

    def _reach(self, package: AptPackage) -> None:
        if package.name in self.reached:
            return
        self.reached.add(package.name)
        for group in self.own_controls[package.name].depends:
            self.visit(group, f"{package.name} {package.version}")
