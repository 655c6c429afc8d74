"""The release pipeline: for each image in DAG order, build -> validate -> push.

An image whose build or validation failed is never tagged for the registry; images built
on it are blocked; its siblings carry on. Every step lands in the release record at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors
import requests

from . import baselines
from .build import BuildOutcome, build_image, build_labels, content_key, find_built
from .errors import StepError
from .plan import ImageSpec, ReleasePlan
from .publish import publish_image
from .record import (
    BuildRecord,
    ImageRecord,
    PushRecord,
    ReleaseRecord,
    ValidationRecord,
    now,
    save_record,
)
from .registry import RegistryError, manifest_digest
from .render import RenderedImage
from .ui import Ui
from .validate import tier_verdicts, validate_image


@dataclass
class Run:
    """One run of the pipeline: its inputs, the engine, and the record it keeps."""

    client: Any
    plan: ReleasePlan
    rendered: dict[str, RenderedImage]
    context_dir: Path
    report_dir: Path
    record: ReleaseRecord
    record_file: Path
    os_image_ids: dict[str, str]
    revision: str
    source: str
    gpu_mode: str
    push: bool
    ui: Ui
    # T3 floors and medians; measured medians of passing images are added to it.
    baselines_file: Path | None = None

    def save(self) -> None:
        save_record(self.record, self.record_file)


def run_images(run: Run, images: list[ImageSpec]) -> None:
    run.ui.plan([spec.name for spec in images])
    for spec in images:
        record = run.record.images.get(spec.name) or ImageRecord(
            name=spec.name, kind=spec.kind, parent=spec.parent)
        record.expect_failure = spec.entry.expect_failure if spec.entry else None
        run.record.images[spec.name] = record
        try:
            _process(run, spec, record)
        except StepError as exc:
            run.ui.problem(spec.name, f"{exc.step}: {exc.message}")
        except (docker.errors.DockerException, requests.RequestException) as exc:
            # The engine went away between steps: fail this image, keep the record honest.
            _fail_pending(record, f"engine: {exc.__class__.__name__}: {exc}")
            run.ui.problem(spec.name, f"engine: {exc}")
        finally:
            _tell_expectation(run, record)
            run.save()
    run.record.finished = now()
    run.save()


def _process(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    parent_id = _parent_image(run, spec)
    if parent_id is None:
        parent = spec.parent or f"OS {spec.base}"
        _block(record, f"{parent} did not pass")
        raise StepError(spec.name, "build", f"blocked: {parent} did not pass")
    _build(run, spec, record, parent_id)
    _validate(run, spec, record)
    if run.push:
        _push(run, spec, record)
    else:
        record.push.status = "skipped"
        record.push.error = "--no-push"


def _parent_image(run: Run, spec: ImageSpec) -> str | None:
    if spec.parent is None:
        return run.os_image_ids.get(spec.base)
    parent = run.record.images.get(spec.parent)
    # A failed push of the parent does not block children: they still build and validate,
    # and their own push fails (loudly) while the registry is down.
    if parent is None or parent.build.status != "ok" or parent.validation.verdict != "pass":
        return None
    return parent.build.image_id


def _tell_expectation(run: Run, record: ImageRecord) -> None:
    if record.outcome == "xfail":
        run.ui.step(record.name, f"expected failure ({record.expect_failure})")
    elif record.outcome == "xpass":
        run.ui.problem(record.name, "passed although the manifest expects it to fail: "
                                    "remove its expect_failure")


def _fail_pending(record: ImageRecord, reason: str) -> None:
    for step in (record.build, record.validation, record.push):
        if step.status == "pending":
            step.status, step.error = "failed", reason


def _block(record: ImageRecord, reason: str) -> None:
    for step in (record.build, record.validation, record.push):
        step.status = "blocked"
        step.error = reason


def _build(run: Run, spec: ImageSpec, record: ImageRecord, parent_id: str) -> None:
    key = content_key(run.rendered[spec.name], parent_id)
    if _reusable(run, record, key):
        run.ui.step(spec.name, f"unchanged (key {key[:12]}), reusing {record.build.image_id}")
        record.build.reused = True
        return
    if _adopt(run, spec, record, key):
        return
    created = now()
    labels = build_labels(spec, key, created, run.revision, run.source)
    record.labels = labels
    # A new build starts every step afresh: nothing of an earlier image may leak into it.
    record.build = BuildRecord(status="pending", key=key, created=created,
                               log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord()
    rendered = run.rendered[spec.name]
    run.ui.step(spec.name, f"building {rendered.local_ref}")
    try:
        outcome = build_image(run.client, rendered, run.context_dir / spec.name, labels,
                              run.ui.sink(spec.name))
    except StepError as exc:
        record.build.status, record.build.error = "failed", exc.message
        _block_after_build(record, "build failed")
        raise
    _record_build(record, outcome)
    run.save()


def _adopt(run: Run, spec: ImageSpec, record: ImageRecord, key: str) -> bool:
    """Take over an image another run (another build dir, the CI release) built from the
    same content key: no build, the same image ID."""
    found = find_built(run.client, key)
    if found is None:
        return False
    labels = dict(found.get("Labels") or {})
    run.ui.step(spec.name, f"unchanged (key {key[:12]}), reusing {found['Id']} built earlier")
    record.labels = labels
    record.build = BuildRecord(status="ok", key=key, image_id=str(found["Id"]),
                               created=labels.get("org.opencontainers.image.created"),
                               size_bytes=int(found.get("Size") or 0), reused=True,
                               log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord()
    return True


def _reusable(run: Run, record: ImageRecord, key: str) -> bool:
    build = record.build
    if build.status != "ok" or build.key != key or build.image_id is None:
        return False
    try:
        run.client.api.inspect_image(build.image_id)
    except (docker.errors.DockerException, requests.RequestException):
        return False
    return True


def _record_build(record: ImageRecord, outcome: BuildOutcome) -> None:
    record.build.status = "ok"
    record.build.image_id = outcome.image_id
    record.build.seconds = round(outcome.seconds, 1)
    record.build.size_bytes = outcome.size_bytes


def _block_after_build(record: ImageRecord, reason: str) -> None:
    for step in (record.validation, record.push):
        step.status, step.error = "blocked", reason


def _validate(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    image_id = record.build.image_id
    assert image_id is not None
    done = record.validation
    # A pass without GPUs says nothing about the GPU checks: rerun when the mode differs.
    if done.verdict == "pass" and done.image_id == image_id and done.gpu_mode == run.gpu_mode:
        run.ui.step(spec.name, "validation already passed for this image")
        record.validation.reused = True
        return
    run.ui.step(spec.name, f"validating (GPU: {run.gpu_mode})")
    try:
        outcome = validate_image(run.client, image_id, record.labels, run.gpu_mode,
                                 run.report_dir, spec.name, baselines=_baselines_for(run, spec))
    except StepError as exc:
        record.validation.status, record.validation.error = "failed", exc.message
        record.push.status, record.push.error = "blocked", "validation failed"
        raise
    report = outcome.report
    record.validation = record.validation.model_copy(update={
        "status": "ok" if report.verdict == "pass" else "failed", "verdict": report.verdict,
        "image_id": image_id, "gpu_mode": run.gpu_mode, "summary": report.summary, "reused": False,
        "failed_checks": [c.id for c in report.failed()], "report": str(outcome.json_path),
        "junit": str(outcome.junit_path), "seconds": round(outcome.seconds, 1), "error": None})
    record.validation.tiers = tier_verdicts(report)
    for check in report.checks:
        run.ui.line(spec.name, f"{check.status:4} {check.tier} {check.id}: {check.message}")
    if report.verdict != "pass":
        record.push.status, record.push.error = "blocked", "validation failed"
        failed = ", ".join(check.id for check in report.failed())
        raise StepError(spec.name, "validate", f"failed: {failed}")
    if run.baselines_file is not None:
        added = baselines.record(run.baselines_file,
                                 baselines.measurements(report, spec.name, run.plan.release))
        if added:
            run.ui.step(spec.name, f"{added} T3 medians recorded in {run.baselines_file}")


def _baselines_for(run: Run, spec: ImageSpec) -> dict[str, Any] | None:
    if run.baselines_file is None or run.gpu_mode != "required":
        return None
    book = baselines.load_book(run.baselines_file)
    return baselines.runner_document(book, spec.name, run.plan.release)


def _push(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    image_id = record.build.image_id
    assert image_id is not None
    ref = spec.remote_ref(run.plan.registry)
    if _already_pushed(run, spec, record, ref, image_id):
        run.ui.step(spec.name, f"{ref} already holds {record.push.digest}")
        record.push.reused = True
        return
    run.ui.step(spec.name, f"pushing {ref}")
    try:
        outcome = publish_image(run.client, spec, image_id, run.plan.registry,
                                run.ui.sink(spec.name))
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    record.push = record.push.model_copy(update={
        "status": "ok", "ref": outcome.ref, "digest": outcome.digest, "image_id": image_id,
        "seconds": round(outcome.seconds, 1), "error": None, "reused": False})


def _already_pushed(
    run: Run, spec: ImageSpec, record: ImageRecord, ref: str, image_id: str
) -> bool:
    push = record.push
    if push.status != "ok" or push.ref != ref or push.image_id != image_id or not push.digest:
        return False
    try:
        return manifest_digest(run.plan.registry, spec.name, spec.tag) == push.digest
    except RegistryError:
        return False
