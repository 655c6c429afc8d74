"""The release archive the project keeps (`archive/<YY.MM>/`): the manifest, what was
published (key, digest, labels per image) and each image's package manifest. Release notes
diff against the previous archive; `rebuild` starts from one."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from ngc_builder.errors import InputError, Problem, os_problem
from ngc_builder.files import DATA_LIMIT, read_text, write_atomic
from ngc_builder.lock.models import lock_path
from ngc_builder.manifest.models import RELEASE_ID_RE
from ngc_builder.plan.dag import LABEL_PREFIX
from ngc_builder.records.evidence import KINDS, check_evidence, evidence_file
from ngc_builder.records.record import ReleaseRecord

DEFAULT_DIR = Path("archive")
MANIFEST_NAME = "manifest.yaml"
RELEASE_LABEL = f"{LABEL_PREFIX}.release"
REVISION_LABEL = "org.opencontainers.image.revision"


class ArchivedImage(BaseModel):
    key: str | None = None
    digest: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class PackageCheck(BaseModel):
    """A rebuild's pip and dpkg package sets held against the archived ones."""

    at: str
    images: list[str]  # compared: rebuilt, and archived with a package manifest
    differences: list[str] = Field(default_factory=list)  # one line per image and kind


class ArchivedRelease(BaseModel):
    release: str
    registry: str
    revision: str | None = None
    images: dict[str, ArchivedImage] = Field(default_factory=dict)
    rebuilds: list[dict[str, str]] = Field(default_factory=list)
    package_checks: list[PackageCheck] = Field(default_factory=list)


RECORD_DIR = "record"  # archive/<YY.MM>/record/: the release record and its evidence


def release_dir(archive: Path, release: str) -> Path:
    """`archive/<YY.MM>`: the one place an archive path is made, so a release id from the
    command line or a record (`../x`) never leads out of the archive."""
    if not RELEASE_ID_RE.fullmatch(release):
        raise InputError([Problem("RELEASE", 1, "release",
                                  f"{release[:40]!r} is not a release id (YY.MM or YY.MM.N)")])
    return archive / release


def write(archive: Path, manifest: Path, record: ReleaseRecord, record_file: Path) -> Path:
    """Archive a release: manifest and its lock, published digests, package manifests, and
    the record (`record_file`, read into `record`) with its evidence. Every path the record
    names is checked before anything is written (records/evidence.py)."""
    check_evidence(record, record_file.parent, record_file)
    target = release_dir(archive, record.release)
    (target / "packages").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(manifest, target / MANIFEST_NAME)
    if lock_path(manifest).is_file():  # a rebuild installs exactly what was locked then
        shutil.copyfile(lock_path(manifest), lock_path(target / MANIFEST_NAME))
    previous = load(archive, record.release)
    images = {}
    for name, image in record.images.items():
        if image.push.status != "ok" or image.expect_failure:
            continue
        images[name] = ArchivedImage(key=image.build.key, digest=image.push.digest,
                                     labels=image.labels)
        packages = evidence_file(record_file.parent, image.build.packages, record_file,
                                 f"images.{name}.build.packages")
        if packages is not None:
            shutil.copyfile(packages, target / "packages" / f"{name}.json")
    archived = ArchivedRelease(release=record.release, registry=record.registry,
                               revision=release_revision(images, record.release), images=images,
                               rebuilds=previous.rebuilds if previous else [],
                               package_checks=previous.package_checks if previous else [])
    write_atomic(target / "release.json", archived.model_dump_json(indent=2) + "\n")
    keep_record(target / RECORD_DIR, record, record_file)
    return target


def release_revision(images: dict[str, ArchivedImage], release: str) -> str | None:
    """The project revision this release was built from: its framework images' (the shared
    layers may have been built by an earlier release, from an earlier revision); the most
    frequent one when a rerun after a commit built some of them. A patch release's images
    carry their monthly release's label (docs/security.md)."""
    monthly = ".".join(release.split(".")[:2])  # a patch's images say their month's
    found = [image.labels.get(REVISION_LABEL) for image in images.values()
             if image.labels.get(RELEASE_LABEL) == monthly]
    counted = Counter(revision for revision in found if revision)
    return max(sorted(counted), key=counted.__getitem__, default=None)


def keep_record(folder: Path, record: ReleaseRecord, record_file: Path) -> None:
    """The release record with each image's validation report and each failed build's log:
    the evidence the catalog shows, kept when build/ is long gone."""
    wanted = [(f"images.{name}.validation.report", image.validation.report)
              for name, image in record.images.items()]
    wanted += [(f"images.{name}.build.log", image.build.log)
               for name, image in record.images.items() if image.build.status == "failed"]
    for kind in KINDS:
        (folder / kind).mkdir(parents=True, exist_ok=True)
    for field, recorded in wanted:
        found = evidence_file(record_file.parent, recorded, record_file, field)
        if found is not None:
            shutil.copyfile(found, folder / found.parent.name / found.name)
    # The manifest as archived beside it, not the build machine's path to it.
    kept = record.model_copy(update={"manifest": f"../{MANIFEST_NAME}"})
    write_atomic(folder / "release.json", kept.model_dump_json(indent=2) + "\n")


def load(archive: Path, release: str) -> ArchivedRelease | None:
    path = release_dir(archive, release) / "release.json"
    if not path.is_file():
        return None
    try:
        return ArchivedRelease.model_validate_json(read_text(path, DATA_LIMIT))
    except OSError as exc:
        raise InputError([Problem(str(path), 1, "(archive)", os_problem(exc))]) from None
    except ValueError as exc:
        raise InputError([Problem(str(path), 1, "(archive)", str(exc).splitlines()[0])]) \
            from None


def previous_release(archive: Path, release: str) -> str | None:
    """The newest archived release before ``release``."""
    if not archive.is_dir():
        return None
    older = [path.name for path in archive.iterdir() if RELEASE_ID_RE.fullmatch(path.name)
             and release_order(path.name) < release_order(release)
             and (path / "release.json").is_file()]
    return max(older, key=release_order, default=None)


def release_order(release: str) -> tuple[int, ...]:
    """`26.12` < `26.12.1` < `26.12.10` < `27.01`: numbers, not text."""
    return tuple(int(part) for part in release.split(".") if part.isdigit())


def packages_of(archive: Path, release: str, image: str) -> Path | None:
    path = release_dir(archive, release) / "packages" / f"{image}.json"
    return path if path.is_file() else None


def note_rebuild(archive: Path, release: str, moves: list[dict[str, str]],
                 check: PackageCheck | None = None) -> None:
    archived = load(archive, release)
    if archived is None:
        return
    archived.rebuilds.extend(moves)
    if check is not None:
        archived.package_checks.append(check)
    path = release_dir(archive, release) / "release.json"
    write_atomic(path, json.dumps(archived.model_dump(), indent=2) + "\n")
