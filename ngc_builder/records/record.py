"""The release record, `build/<release>/release.json`: what happened to each image.

Written after every step (atomically), so an interrupted run resumes where it stopped and
reports are made from records, not from memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, Field, ValidationError, field_validator

from ngc_builder.clock import now
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import DATA_LIMIT, read_text, write_atomic
from ngc_builder.manifest.platforms import OtherPlatform

StepStatus = Literal["pending", "ok", "failed", "skipped", "blocked"]
# A manifest digest the run pulls or points an index at: nothing else may reach a URL.
Digest = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]


class BuildRecord(BaseModel):
    status: StepStatus = "pending"
    key: str | None = None
    image_id: str | None = None
    # The builder's own image, before its config was written again (assemble/imageconfig.py):
    # untagged, the same layers; tidy drops it with the image.
    built_id: str | None = None
    created: str | None = None
    seconds: float | None = None
    ended: str | None = None  # when: with `seconds`, the step on the run's timeline
    size_bytes: int | None = None
    error: str | None = None
    log: str | None = None
    reused: bool = False
    # Where the image came from when not built here: "local" (an earlier build), "registry".
    source: str | None = None
    # The key's components (keys.ImageKey), so `plan` can say which input changed.
    inputs: dict[str, Any] | None = None
    packages: str | None = None  # the package manifest file written at build time
    slurm_job: str | None = None  # built as this job of the site's cluster (release --on slurm)


# A platform built and staged by a `--no-promote --defer-validation` job, its validation left
# to a job on that platform's own nodes: never promoted before that job's verdict replaced it.
DEFERRED = "deferred"


class ValidationRecord(BaseModel):
    status: StepStatus = "pending"
    verdict: str | None = None
    image_id: str | None = None
    gpu_mode: str | None = None
    summary: dict[str, int] = Field(default_factory=dict)
    tiers: dict[str, str] = Field(default_factory=dict)
    failed_checks: list[str] = Field(default_factory=list)
    report: str | None = None
    junit: str | None = None
    seconds: float | None = None
    ended: str | None = None  # when: with `seconds`, the step on the run's timeline
    error: str | None = None
    reused: bool = False
    slurm_job: str | None = None  # validated as this job of the site's cluster
    # "full", or "emulated": the emulated tier only, another platform's image under QEMU
    # (its numerics, servers and benchmarks need a native node; runner/scope.py).
    scope: str = "full"


class SquashfsRecord(BaseModel):
    """The SquashFS of one platform's manifest, beside it in the registry (docs/squashfs.md)."""

    platform: str
    image: Digest  # the platform's manifest: the artifact's subject
    tag: str  # sha256-<manifest hex>.sqfs
    size: int  # bytes a node downloads
    seconds: float | None = None  # to make and push it; None when an earlier run did


class PushRecord(BaseModel):
    status: StepStatus = "pending"
    ref: str | None = None  # the candidate (staging) tag
    digest: str | None = None  # an index's when the image ships several platforms
    host_digest: Digest | None = None  # then: the build host platform's own manifest in it
    image_id: str | None = None
    seconds: float | None = None
    ended: str | None = None  # when: with `seconds`, the step on the run's timeline
    error: str | None = None
    reused: bool = False
    promoted: list[str] = Field(default_factory=list)
    forced: list[str] = Field(default_factory=list)
    sbom: str | None = None  # the tag of the image's SBOM, beside it in the registry
    staged: str | None = None  # --no-promote: the tag naming the candidate by its key
    signature: str | None = None  # the tag of its cosign signature, once promoted and signed
    attestation: str | None = None  # the tag of its SLSA provenance attestation, beside it
    squashfs: list[SquashfsRecord] = Field(default_factory=list)


class PlatformRecord(BaseModel):
    """Another platform of an image (`linux/arm64`): built on the build host, validated under
    emulation, pushed beside the host platform's image under one index."""

    build: BuildRecord = Field(default_factory=BuildRecord)
    validation: ValidationRecord = Field(default_factory=ValidationRecord)
    digest: Digest | None = None  # its manifest's, an entry of the image's index
    labels: dict[str, str] = Field(default_factory=dict)  # what its build set (validated)
    emulated: bool = True  # validated under QEMU on a host of another platform
    # An optional platform that failed: the image shipped without it, and why.
    left_out: str | None = None


class ImageRecord(BaseModel):
    name: str
    kind: str
    parent: str | None = None
    expect_failure: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    build: BuildRecord = Field(default_factory=BuildRecord)
    validation: ValidationRecord = Field(default_factory=ValidationRecord)
    push: PushRecord = Field(default_factory=PushRecord)
    # The platforms other than the build host's, each with its own build and validation.
    platforms: dict[str, PlatformRecord] = Field(default_factory=dict)

    @field_validator("platforms")
    @classmethod
    def _known_platforms(cls, value: dict[str, PlatformRecord]) -> dict[str, PlatformRecord]:
        # Its keys name tags and report files: a hand-edited `../x` never gets that far.
        strangers = sorted(set(value) - set(get_args(OtherPlatform)))
        if strangers:
            raise ValueError(f"not another platform we build: {strangers[0]!r}")
        return value

    @property
    def failed(self) -> bool:
        steps = (self.build.status, self.validation.status, self.push.status)
        return "failed" in steps or "blocked" in steps or any(
            "failed" in (entry.build.status, entry.validation.status)
            for entry in self.platforms.values() if entry.left_out is None)

    @property
    def outcome(self) -> str:
        """ok, failed, expected failure (xfail) or unexpected pass (xpass)."""
        if self.expect_failure is None:
            return "failed" if self.failed else "ok"
        return "xfail" if self.failed else "xpass"

    @property
    def breaks_the_run(self) -> bool:
        return self.outcome in ("failed", "xpass")


class OsRecord(BaseModel):
    """The OS image the release starts FROM, and how this run got it."""

    ref: str
    image_id: str | None = None
    obtained: str
    seconds: float
    error: str | None = None


class Span(BaseModel):
    """One step of one image (or of the run: `cache`, `os-<base>`) on the run's timeline:
    seconds from the run's start, and the worker thread that ran it (`report --timeline`)."""

    image: str
    step: str
    start: float
    end: float | None = None  # None: the run stopped inside it
    worker: str = ""


class ReleaseRecord(BaseModel):
    release: str
    registry: str
    manifest: str
    started: str = Field(default_factory=now)
    finished: str | None = None
    interrupted: str | None = None  # the signal that stopped the last run, and when
    os: dict[str, OsRecord] = Field(default_factory=dict)

    @field_validator("os", mode="before")
    @classmethod
    def _one_os_per_base(cls, value: object) -> object:
        # Records written before releases had several bases held one OS entry (or none).
        if value is None or (isinstance(value, dict) and "ref" in value):
            return {}
        return value
    images: dict[str, ImageRecord] = Field(default_factory=dict)
    # The last run's steps, in the order they started (a rerun starts a timeline of its own),
    # in seconds from `timeline_started` (seconds since the epoch).
    timeline: list[Span] = Field(default_factory=list)
    timeline_started: float | None = None
    # The records of runs of this release against other registries (registry -> record): a
    # run against one registry never overwrites what another one holds.
    elsewhere: dict[str, ReleaseRecord] = Field(default_factory=dict)

    def for_registry(self, registry: str) -> ReleaseRecord | None:
        """This release's record for runs against `registry`, if there was one."""
        return self if self.registry == registry else self.elsewhere.get(registry)

    def switched_to(self, registry: str, manifest: str) -> ReleaseRecord:
        """The record to resume for a run against `registry`; this one is kept aside."""
        if registry == self.registry:
            return self
        kept = {**self.elsewhere, self.registry: self.model_copy(update={"elsewhere": {}})}
        current = kept.pop(registry, None) or ReleaseRecord(
            release=self.release, registry=registry, manifest=manifest)
        return current.model_copy(update={"elsewhere": kept})


def record_path(build_dir: Path, release: str) -> Path:
    return build_dir / release / "release.json"


def load_record(path: Path) -> ReleaseRecord | None:
    if not path.exists():
        return None
    try:
        return ReleaseRecord.model_validate_json(read_text(path, DATA_LIMIT))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        reason = f"{where}: {first['msg']}" if where else first["msg"]
    except (OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0]
    raise InputError([Problem(str(path), 1, "(record)",
                              f"unreadable release record ({reason}); move it away to "
                              "start this release afresh")]) from None


def save_record(record: ReleaseRecord, path: Path) -> None:
    write_atomic(path, record.model_dump_json(indent=2) + "\n")
