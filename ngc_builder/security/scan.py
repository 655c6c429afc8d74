"""Which of a release's locked .debs its OS's security suite has fixed since the lock: every
platform's OS bases and images (`lock.os`, `lock.images`, `lock.platforms`), each package
against the newest of its name and architecture in `<suite>-security`.

Plain data in, plain data out: the suite's packages are fetched by `security/suite.py`, the
changelogs read by `security/changelog.py`, and the command ties them together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ngc_builder.lock.debian import compare_versions
from ngc_builder.lock.models import AptPackage, ImageLock, OsLock, ReleaseLock
from ngc_builder.manifest.platforms import DEB_ARCHES, HOST_PLATFORM
from ngc_builder.security.changelog import Entry, changelog_text, entries_after
from ngc_builder.security.suite import SuitePackage


@dataclass(frozen=True)
class Held:
    """A locked .deb and where the lock holds it (OS bases and images, per platform)."""

    codename: str  # the security suite's: `bookworm-security`
    arch: str
    name: str
    version: str
    where: tuple[str, ...]


@dataclass(frozen=True)
class Update:
    """A locked .deb that the security suite has a newer version of, and what it fixes."""

    held: Held
    fixed: SuitePackage
    entries: tuple[Entry, ...] = ()
    unread: str | None = None  # why the changelog could not be read, when it could not

    @property
    def cves(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(cve for entry in self.entries for cve in entry.cves))


@dataclass
class Holdings:
    """Every locked .deb, once per suite, architecture and name."""

    found: dict[tuple[str, str, str], dict[str, list[str]]] = field(default_factory=dict)

    def add(self, codename: str, packages: Iterable[AptPackage], place: str) -> None:
        for package in packages:
            versions = self.found.setdefault((codename, package.arch, package.name), {})
            versions.setdefault(package.version, []).append(place)

    def held(self) -> list[Held]:
        return [Held(codename, arch, name, version, tuple(places))
                for (codename, arch, name), versions in sorted(self.found.items())
                for version, places in versions.items()]


@dataclass(frozen=True)
class LockedSet:
    """One OS base's or image's locked .debs (`owner.apt`), from `codename`'s suite."""

    codename: str
    place: str  # `debian-trixie`, `pytorch (arm64)`
    owner: OsLock | ImageLock


def security_codename(os_lock: OsLock) -> str:
    return f"{os_lock.suite}-security"


def locked_sets(lock: ReleaseLock, base_of: dict[str, str]) -> Iterator[LockedSet]:
    """Every list of locked .debs: each platform's OS bases and images, with the security
    suite it comes from (an image's is its OS base's) and where it is held."""
    closures: list[tuple[str, dict[str, OsLock], dict[str, ImageLock]]] = [
        (HOST_PLATFORM, lock.os, lock.images),
        *((platform, closure.os, closure.images) for platform, closure in lock.platforms.items())]
    for platform, bases, images in closures:
        shown = "" if platform == HOST_PLATFORM else f" ({DEB_ARCHES.get(platform, platform)})"
        for name, os_lock in bases.items():
            yield LockedSet(security_codename(os_lock), f"{name}{shown}", os_lock)
        for name, image in images.items():
            below = bases.get(base_of.get(name, ""))
            if below is not None:
                yield LockedSet(security_codename(below), f"{name}{shown}", image)


def holdings(lock: ReleaseLock, base_of: dict[str, str]) -> list[Held]:
    """The locked .debs of every platform, once per suite, architecture, name and version."""
    found = Holdings()
    for locked in locked_sets(lock, base_of):
        found.add(locked.codename, locked.owner.apt, locked.place)
    return found.held()


def newest(packages: Iterable[SuitePackage]) -> dict[tuple[str, str], SuitePackage]:
    """The newest version of each (name, architecture) the suite offers."""
    best: dict[tuple[str, str], SuitePackage] = {}
    for package in packages:
        known = best.get((package.name, package.arch))
        if known is None or compare_versions(package.version, known.version) > 0:
            best[package.name, package.arch] = package
    return best


def updates(held: list[Held],
            suites: dict[tuple[str, str], dict[tuple[str, str], SuitePackage]]) -> list[Update]:
    """The held .debs the suite has newer versions of. `suites`: (codename, arch) -> its
    newest packages; an `all` package is looked up in each architecture's index."""
    found = []
    for package in held:
        offered = next((index[package.name, package.arch]
                        for (codename, _arch), index in sorted(suites.items())
                        if codename == package.codename
                        and (package.name, package.arch) in index), None)
        if offered is not None and compare_versions(offered.version, package.version) > 0:
            found.append(Update(package, offered))
    return found


def with_changelogs(found: list[Update], deb_of: Callable[[SuitePackage], Path]) -> list[Update]:
    """Each update with the changelog entries since its locked version. A package whose doc
    folder links to another binary of its source is read from that one's."""
    texts: dict[tuple[str, str], str | None] = {}
    for update in found:
        key = (update.held.codename, update.fixed.source)
        if texts.get(key) is None:
            texts[key] = changelog_text(deb_of(update.fixed), update.fixed.name,
                                        update.fixed.source)
    return [_read(update, texts[update.held.codename, update.fixed.source])
            for update in found]


def _read(update: Update, text: str | None) -> Update:
    if text is None:
        return replace(update, unread=f"no binary of {update.fixed.source} "
                       f"{update.fixed.version} in the suite holds its Debian changelog")
    return replace(update, entries=tuple(entries_after(text, update.held.version)))
