"""What a catalog is made from, read once: the archived release (`archive/<YY.MM>/`: what
was published, the manifest, package manifests) and, when there is one, the release record of
the run that published it (validation, sizes, expected failures and their evidence).

Bad input is an InputError naming the file and the field (exit 2), never a traceback.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from ngc_builder.assemble import packages
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import DATA_LIMIT, read_text
from ngc_builder.manifest.models import RELEASE_ID_RE
from ngc_builder.manifest.platforms import Platform
from ngc_builder.manifest.source import load_yaml
from ngc_builder.records import archive
from ngc_builder.records.evidence import check_evidence, evidence_file
from ngc_builder.records.record import ImageRecord, ReleaseRecord, load_record
from ngc_builder.runner.report import RunReport

IMAGE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass(frozen=True)
class Row:
    """One image row of the archived manifest, as far as the catalog needs it."""

    name: str
    framework: str
    version: str
    stack: str | None
    base: str | None
    gpu_targets: tuple[str, ...]
    expect_failure: str | None
    platforms: tuple[str, ...] = ()  # those we build, as listed (the archive is not trusted)


@dataclass(frozen=True)
class Manifest:
    base: str
    gpu_targets: tuple[str, ...]
    stacks: dict[str, dict[str, Any]]
    rows: tuple[Row, ...]

    def row(self, name: str) -> Row | None:
        return next((row for row in self.rows if row.name == name), None)


@dataclass(frozen=True)
class Sources:
    release: str
    archive_dir: Path
    archived: archive.ArchivedRelease
    manifest: Manifest
    previous: str | None
    record: ReleaseRecord | None
    record_file: Path | None  # where the record was looked for

    def files(self) -> tuple[str, ...]:
        folder = archive.release_dir(self.archive_dir, self.release)
        found = [str(folder / "release.json"), str(folder / archive.MANIFEST_NAME)]
        return (*found, str(self.record_file)) if self.record is not None else tuple(found)

    def image_record(self, name: str) -> ImageRecord | None:
        """The record's entry for `name` when it is of the archived run (same digest)."""
        if self.record is None:
            return None
        found = self.record.images.get(name)
        published = self.archived.images.get(name)
        if found is None or published is None or found.push.digest == published.digest:
            return found
        return None

    def evidence(self, recorded: str | None, field: str) -> Path | None:
        """A file the record names (a log, a report, a package manifest), found beside the
        record: `logs/` and `reports/` of the run's folder, or of the archive's copy."""
        if self.record_file is None:
            return None
        return evidence_file(self.record_file.parent, recorded, self.record_file, field)


def load_sources(archive_dir: Path, release: str, record_file: Path | None,
                 record_required: bool) -> Sources:
    if not RELEASE_ID_RE.fullmatch(release):
        raise InputError([Problem("RELEASE", 1, "release",
                                  f"{release!r} is not a release id (YY.MM or YY.MM.N)")])
    folder = archive.release_dir(archive_dir, release)
    archived = archive.load(archive_dir, release)
    if archived is None:
        raise InputError([Problem(str(folder / "release.json"), 1, "(archive)",
                                  f"release {release} is not archived in {archive_dir} "
                                  "(`ngc-builder report` archives a release)")])
    _check_names(folder / "release.json", archived.images)
    record = _record(record_file, release, record_required, archived.registry)
    if record is not None and record_file is not None:
        check_evidence(record, record_file.parent, record_file)  # before a page is written
    return Sources(release, archive_dir, archived, _manifest(folder / archive.MANIFEST_NAME),
                   archive.previous_release(archive_dir, release), record,
                   record_file if record is not None else None)


def _check_names(path: Path, names: Any) -> None:
    for name in names:
        if not IMAGE_NAME.fullmatch(name):
            raise InputError([Problem(str(path), 1, f"images.{name}",
                                      "not an image name (a-z, 0-9, '.', '_', '-')")])


def _record(path: Path | None, release: str, required: bool,
            registry: str) -> ReleaseRecord | None:
    if path is None or (not path.is_file() and not required):
        return None
    if not path.is_file():
        raise InputError([Problem(str(path), 1, "(record)", "no such release record")])
    record = load_record(path)
    assert record is not None
    if record.release != release:
        raise InputError([Problem(str(path), 1, "release",
                                  f"a record of release {record.release}, not {release}")])
    found = record.for_registry(registry)
    if found is not None:
        _check_names(path, found.images)
    return found


def _manifest(path: Path) -> Manifest:
    if not path.is_file():
        raise InputError([Problem(str(path), 1, "(archive)", "the archived manifest is "
                                  "missing")])
    data, _ = load_yaml(path, str(path))  # the bounds of every manifest: git holds this one
    if not isinstance(data, dict) or not isinstance(data.get("images", []), list):
        raise InputError([Problem(str(path), 1, "images", "expected a list of images")])
    rows = tuple(_row(path, i, item) for i, item in enumerate(data.get("images") or []))
    stacks = data.get("cuda_stacks") or {}
    return Manifest(str(data.get("base") or "-"), _strings(data.get("gpu_targets")),
                    stacks if isinstance(stacks, dict) else {}, rows)


def _row(path: Path, index: int, item: Any) -> Row:
    if not isinstance(item, dict) or not item.get("framework"):
        raise InputError([Problem(str(path), 1, f"images[{index}]",
                                  "expected a mapping with a framework")])
    name = str(item.get("name") or item["framework"])
    if not IMAGE_NAME.fullmatch(name):
        raise InputError([Problem(str(path), 1, f"images[{index}].name",
                                  "not an image name (a-z, 0-9, '.', '_', '-')")])
    failure = item.get("expect_failure")
    return Row(name, str(item["framework"]), str(item.get("version") or "-"),
               _optional(item.get("stack")), _optional(item.get("base")),
               _strings(item.get("gpu_targets")), None if failure is None else str(failure),
               tuple(p for p in _strings(item.get("platforms")) if p in get_args(Platform)))


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def package_lists(path: Path) -> dict[str, dict[str, str]]:
    try:
        return packages.load(path)
    except (OSError, ValueError, AttributeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise InputError([Problem(str(path), 1, "(packages)", reason)]) from None


def run_report(path: Path) -> RunReport | str:
    """The runner's report, or why it cannot be read (shown on the page)."""
    try:
        return RunReport.from_dict(json.loads(read_text(path, DATA_LIMIT)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{path}: unreadable validation report ({str(exc).splitlines()[0]})"
