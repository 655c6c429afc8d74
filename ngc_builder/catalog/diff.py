"""An image's packages (pip + dpkg, as recorded at build time) and what changed against the
same image of the previous archived release (the release notes' diff, `build.packages.diff`,
kept as rows instead of sentences)."""

from __future__ import annotations

from pathlib import Path

from ngc_builder.assemble import packages as package_sets
from ngc_builder.catalog.model import Component, PackageChange, PackageDiff, Packages
from ngc_builder.catalog.source import Sources, package_lists
from ngc_builder.records import archive
from ngc_builder.records.record import ImageRecord

KINDS = ("pip", "dpkg")


def manifest_file(sources: Sources, name: str, image: ImageRecord | None) -> Path | None:
    """The archived package manifest, else the one the release record points at."""
    archived = archive.packages_of(sources.archive_dir, sources.release, name)
    if archived is not None:
        return archived
    return (sources.evidence(image.build.packages, f"images.{name}.build.packages")
            if image is not None else None)


def listed(path: Path | None) -> Packages | None:
    if path is None:
        return None
    sets = package_lists(path)
    return Packages(*(tuple(Component(n, v) for n, v in sorted(sets[kind].items()))
                      for kind in KINDS))


def against_previous(sources: Sources, name: str, current: Path | None) -> PackageDiff:
    previous = sources.previous
    if previous is None:
        return PackageDiff(None, f"No previous release: {sources.release} is the oldest "
                           "release in the archive, so there is nothing to compare with.")
    if current is None:
        return PackageDiff(previous, "This image has no package manifest in this release: "
                           "nothing to compare.")
    before = archive.packages_of(sources.archive_dir, previous, name)
    if before is None:
        return PackageDiff(previous, f"New in this release: release {previous} archived no "
                           f"{name} image.")
    old, new = package_lists(before), package_lists(current)
    changes = tuple(change for kind in KINDS for change in _changes(kind, old[kind], new[kind]))
    note = (f"Against {name} in release {previous}: {len(changes)} packages added, removed "
            "or changed." if changes else
            f"Against {name} in release {previous}: the same pip and dpkg packages.")
    return PackageDiff(previous, note, changes)


def _changes(kind: str, before: dict[str, str],
             after: dict[str, str]) -> list[PackageChange]:
    change = package_sets.diff(before, after)
    rows = [PackageChange(kind, n, None, v) for n, v in change.added.items()]
    rows += [PackageChange(kind, n, v, None) for n, v in change.removed.items()]
    rows += [PackageChange(kind, n, a, b) for n, (a, b) in change.changed.items()]
    return sorted(rows, key=lambda row: row.name.lower())
