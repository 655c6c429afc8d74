"""`release --on slurm`, the way back: what each image's job left (its own release record and
the files it names, in the job's build folder on the shared filesystem) taken into the
submitting run's record, so that it promotes, signs and reports as if it had built the image.

A job's folder is input like any build folder: the record is read through its model, only the
files it names in its own `logs/` and `reports/` are copied (records/evidence.py), an entry is
taken only for this image's content key, and the digest it names only when the registry's
staged tag holds that very digest.
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

from ngc_builder.errors import InputError
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.evidence import evidence_file
from ngc_builder.records.record import (
    BuildRecord,
    ImageRecord,
    PlatformRecord,
    ValidationRecord,
    load_record,
    record_path,
)
from ngc_builder.services.registry import RegistryError


class JobRecordError(Exception):
    """What the job left cannot be taken (the message says why)."""


def job_entry(run: Run, spec: ImageSpec, build_dir: Path) -> ImageRecord:
    """The image's entry in its job's record, for this run's key; JobRecordError if none."""
    path = record_path(build_dir, run.inputs.plan.release)
    try:
        theirs = load_record(path)
    except InputError as exc:
        raise JobRecordError(f"its record is unreadable: {exc}") from None
    entry = None if theirs is None else theirs.images.get(spec.name)
    if entry is None:
        raise JobRecordError(f"it left no record of the image ({path})")
    if entry.build.key is None:  # its run opened the record, then stopped before the build
        raise JobRecordError("it stopped before building the image")
    if entry.build.key != run.inputs.keys[spec.name].key:
        raise JobRecordError("its record is of other inputs (another content key)")
    return entry


def staged_digest(run: Run, spec: ImageSpec, entry: ImageRecord) -> str:
    """The digest the job staged, as the registry holds it under the image's staged key."""
    staged = run.inputs.keys[spec.name].staged_tag
    if entry.push.status != "ok" or entry.push.staged != staged or entry.push.digest is None:
        raise JobRecordError("it did not stage the image by its key")
    try:
        held = run.registry.manifest_digest(spec.name, staged)
    except RegistryError as exc:
        raise JobRecordError(f"cannot ask the registry for the staged key: {exc}") from None
    if held != entry.push.digest:
        raise JobRecordError(f"its record names {entry.push.digest}, but the registry's "
                             f"{staged[:20]}... holds {held}")
    return held


def take_entry(run: Run, record: ImageRecord, entry: ImageRecord, build_dir: Path) -> None:
    """`entry` (the job's) into `record` (this run's), each file it names copied beside this
    run's record, the paths recorded as this run's."""
    source = record_path(build_dir, run.inputs.plan.release)
    target = run.state.record_file.parent
    copy = _Copier(source, target)
    record.labels = dict(entry.labels)
    record.build = _build(entry.build, copy, f"images.{entry.name}.build")
    record.validation = _validation(entry.validation, copy, f"images.{entry.name}.validation")
    record.push = entry.push.model_copy()
    record.platforms = {
        platform: PlatformRecord(
            build=_build(each.build, copy, f"images.{entry.name}.platforms.{platform}.build"),
            validation=_validation(each.validation, copy,
                                   f"images.{entry.name}.platforms.{platform}.validation"),
            digest=each.digest, labels=dict(each.labels), emulated=each.emulated,
            left_out=each.left_out)
        for platform, each in entry.platforms.items()}


class _Copier:
    """Copies the files a job's record names (only from its own logs/ and reports/) into the
    same folders beside this run's record, a log after the lines this run wrote there (the
    job's submission); returns their new paths."""

    def __init__(self, source: Path, target: Path) -> None:
        self.source, self.target = source, target

    def __call__(self, recorded: str | None, field: str) -> str | None:
        try:
            found = evidence_file(self.source.parent, recorded, self.source, field)
        except InputError as exc:
            raise JobRecordError(str(exc)) from None
        if found is None or recorded is None:
            return None
        name = PurePosixPath(recorded)
        copied = self.target / name.parent.name / name.name
        copied.parent.mkdir(parents=True, exist_ok=True)
        if name.parent.name == "logs":  # after what this run said of the image (its job)
            with found.open("rb") as job_log, copied.open("ab") as log:
                shutil.copyfileobj(job_log, log)
        else:
            shutil.copyfile(found, copied)
        return str(copied)


def _build(build: BuildRecord, copy: _Copier, field: str) -> BuildRecord:
    return build.model_copy(update={"log": copy(build.log, f"{field}.log"),
                                    "packages": copy(build.packages, f"{field}.packages")})


def _validation(validation: ValidationRecord, copy: _Copier, field: str) -> ValidationRecord:
    return validation.model_copy(update={
        "report": copy(validation.report, f"{field}.report"),
        "junit": copy(validation.junit, f"{field}.junit")})
