"""The steps of one image in a release run; `pipeline` schedules them.

Work is skipped where its result exists: an image whose content key the registry already holds
(`key-<key>`, set only after every gate passed) is neither built nor pushed; a local image built
from the same key is reused; a validation that passed for the same image and GPU mode counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import docker.errors
import requests

from ngc_builder.build import packages, sizegate
from ngc_builder.build.image import BuildOutcome, build_image, build_labels, find_built
from ngc_builder.errors import StepError
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.push import promote, push_candidate
from ngc_builder.records.record import BuildRecord, ImageRecord, PushRecord, ValidationRecord, now
from ngc_builder.services.registry import RegistryError, manifest_digest
from ngc_builder.services.streams import StreamError, consume_pull
from ngc_builder.validate import baselines
from ngc_builder.validate.image import tier_verdicts, validate_image

if TYPE_CHECKING:
    from ngc_builder.pipeline.schedule import Run


def fail_pending(record: ImageRecord, reason: str) -> None:
    for step in (record.build, record.validation, record.push):
        if step.status == "pending":
            step.status, step.error = "failed", reason


def block(record: ImageRecord, reason: str) -> None:
    for step in (record.build, record.validation, record.push):
        step.status = "blocked"
        step.error = reason


def published_digest(run: Run, spec: ImageSpec) -> str | None:
    try:
        return manifest_digest(run.plan.registry, spec.name, run.keys[spec.name].tag)
    except RegistryError as exc:
        run.ui.step(spec.name, f"cannot ask the registry for its content key ({exc})")
        return None


def skip_published(run: Run, spec: ImageSpec, record: ImageRecord) -> bool:
    """The registry holds this key: nothing to build, validate or push; the tags are made
    sure of. With GPUs, an image published after CPU-only validation is validated again."""
    key = run.keys[spec.name]
    digest = published_digest(run, spec) if run.push and run.reuse_published else None
    if digest is None:
        return False
    same = record.build.key == key.key
    if run.gpu_mode == "required" and not (same and record.validation.gpu_mode == "required"):
        return False
    if not same:
        local = find_built(run.client, key.key)
        record.build = BuildRecord(status="ok", key=key.key, reused=True, source="registry",
                                   inputs=key.inputs(),
                                   image_id=None if local is None else str(local["Id"]))
        record.validation = ValidationRecord(status="ok", verdict="pass", reused=True,
                                             error=None, gpu_mode="(published)")
    record.build.reused = record.validation.reused = True
    run.ui.step(spec.name, f"unchanged: registry holds {key.tag[:16]}... at {digest[:19]}")
    record.push = record.push.model_copy(update={"status": "ok", "digest": digest,
                                                 "reused": True, "error": None})
    _promote(run, spec, record, digest)
    return True


def skip_known_failure(run: Run, spec: ImageSpec, record: ImageRecord) -> bool:
    """An expected failure whose evidence this record already holds for the same inputs is
    not attempted again until an input changes (each release attempts it once)."""
    if record.outcome != "xfail" or record.build.key != run.keys[spec.name].key:
        return False
    run.ui.step(spec.name, "expected failure already recorded for these inputs")
    return True


def ensure_local(run: Run, spec: ImageSpec, record: ImageRecord) -> str | None:
    """A local image for this record's key: the recorded one, one built earlier from the key,
    else the published one pulled by digest (and tagged as the ref children are built FROM)."""
    image_id = record.build.image_id
    if image_id is not None and _exists(run, image_id):
        return image_id
    found = find_built(run.client, record.build.key or "")
    if found is not None:
        record.build.image_id = str(found["Id"])
        return record.build.image_id
    if record.push.digest is None:
        return None
    record.build.image_id = _pull(run, spec, record.push.digest)
    return record.build.image_id


def _pull(run: Run, spec: ImageSpec, digest: str) -> str:
    reference = f"{spec.remote_repository(run.plan.registry)}@{digest}"
    run.ui.step(spec.name, f"pulling {reference}")
    try:
        consume_pull(run.client.api.pull(reference, stream=True, decode=True),
                     run.ui.sink(spec.name))
        repository, _, tag = run.rendered[spec.name].local_ref.rpartition(":")
        run.client.api.tag(reference, repository, tag)
        return str(run.client.api.inspect_image(reference)["Id"])
    except (StreamError, docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(spec.name, "pull", f"{reference}: {exc}") from None


def _exists(run: Run, image_id: str) -> bool:
    try:
        run.client.api.inspect_image(image_id)
    except (docker.errors.DockerException, requests.RequestException):
        return False
    return True


def build(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    key = run.keys[spec.name]
    if not run.reuse_published or run.no_cache:  # every image anew (a rebuild, a benchmark)
        _build_new(run, spec, record)
    elif record.build.status == "ok" and record.build.key == key.key and record.build.image_id \
            and _exists(run, record.build.image_id):
        run.ui.step(spec.name, f"unchanged (key {key.key[:12]}), reusing {record.build.image_id}")
        record.build.reused = True
    elif not _adopt(run, spec, record):
        _build_new(run, spec, record)
    if record.build.packages is None:
        record.build.packages = str(packages.collect(
            run.client, record.build.image_id or "", run.report_dir / f"{spec.name}.packages.json"))
    run.save()


def _adopt(run: Run, spec: ImageSpec, record: ImageRecord) -> bool:
    """Take over an image built from the same key by another run (another build dir, the CI
    release): no build, the same image ID."""
    key = run.keys[spec.name]
    found = find_built(run.client, key.key)
    if found is None:
        return False
    labels = dict(found.get("Labels") or {})
    run.ui.step(spec.name, f"unchanged (key {key.key[:12]}), reusing {found['Id']} built earlier")
    record.labels = labels
    record.build = BuildRecord(status="ok", key=key.key, image_id=str(found["Id"]),
                               created=labels.get("org.opencontainers.image.created"),
                               size_bytes=int(found.get("Size") or 0), reused=True,
                               source="local", inputs=key.inputs(),
                               log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord()
    return True


def _build_new(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    key = run.keys[spec.name]
    created = now()
    labels = build_labels(spec, key.key, created, run.revision, run.source)
    record.labels = labels
    # A new build starts every step afresh: nothing of an earlier image may leak into it.
    record.build = BuildRecord(status="pending", key=key.key, created=created,
                               inputs=key.inputs(), log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord()
    rendered = run.rendered[spec.name]
    run.ui.step(spec.name, f"building {rendered.local_ref}")
    try:
        outcome = build_image(run.client, rendered, run.context_dir / spec.name, labels,
                              run.ui.sink(spec.name), nocache=run.no_cache)
    except StepError as exc:
        record.build.status, record.build.error = "failed", exc.message
        _block_after_build(record, "build failed")
        raise
    _record_build(record, outcome)


def _record_build(record: ImageRecord, outcome: BuildOutcome) -> None:
    record.build.status = "ok"
    record.build.image_id = outcome.image_id
    record.build.seconds = round(outcome.seconds, 1)
    record.build.size_bytes = outcome.size_bytes


def _block_after_build(record: ImageRecord, reason: str) -> None:
    for step in (record.validation, record.push):
        step.status, step.error = "blocked", reason


def validate(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
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
    _record_baselines(run, spec, report)


def _record_baselines(run: Run, spec: ImageSpec, report: Any) -> None:
    if run.baselines_file is None:
        return
    with run.image_lock("baselines"):
        added = baselines.record(run.baselines_file,
                                 baselines.measurements(report, spec.name, run.plan.release))
    if added:
        run.ui.step(spec.name, f"{added} T3 medians recorded in {run.baselines_file}")


def _baselines_for(run: Run, spec: ImageSpec) -> dict[str, Any] | None:
    if run.baselines_file is None or run.gpu_mode != "required":
        return None
    book = baselines.load_book(run.baselines_file)
    return baselines.runner_document(book, spec.name, run.plan.release)


def size_gate(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    if spec.entry is None or spec.entry.size_baseline is None:
        return
    parent = run.record.images.get(spec.parent or "")
    try:
        verdict = sizegate.check(run.client, spec.name, record.build.image_id or "",
                                 record.build.size_bytes or 0, spec.entry.size_baseline,
                                 parent.build.image_id if parent else None)
    except StepError as exc:
        record.push.status, record.push.error = "blocked", f"size gate: {exc.message}"
        raise
    run.ui.step(spec.name, verdict)


def publish(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    image_id = record.build.image_id
    assert image_id is not None
    if record.push.image_id == image_id and record.push.digest and _held(run, spec,
                                                                         record.push.digest):
        # Pushed by an earlier run whose promotion did not finish (a refused tag move, a lost
        # registry): promote that candidate, push nothing.
        _promote(run, spec, record, record.push.digest)
        return
    if spec.parent is not None:  # its layers are uploaded once, by the parent's push
        run.published(spec.parent).wait()
    run.ui.step(spec.name, f"pushing candidate of {spec.remote_ref(run.plan.registry)}")
    try:
        outcome = push_candidate(run.client, spec, image_id, run.plan.registry,
                                 run.ui.sink(spec.name))
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    record.push = record.push.model_copy(update={
        "status": "ok", "ref": outcome.ref, "digest": outcome.digest, "image_id": image_id,
        "seconds": round(outcome.seconds, 1), "error": None, "reused": not outcome.pushed})
    run.save()
    _promote(run, spec, record, outcome.digest)


def _held(run: Run, spec: ImageSpec, digest: str) -> bool:
    try:
        return manifest_digest(run.plan.registry, spec.name, digest) == digest
    except RegistryError:
        return False


def _promote(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    try:
        done = promote(run.client, run.plan.registry, spec, digest, run.keys[spec.name].tag,
                       run.aliases, run.force, record.build.image_id)
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    record.push.status, record.push.error = "ok", None
    record.push.promoted = done.tags
    record.push.forced += done.forced
    for move in done.forced:
        run.ui.problem(spec.name, f"forced move of a release tag: {move}")
    run.ui.step(spec.name, f"{spec.remote_ref(run.plan.registry)} -> {digest[:19]}")
