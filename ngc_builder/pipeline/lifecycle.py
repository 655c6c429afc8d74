"""One image's way through a release run, top to bottom: skip what is already published ->
build (or reuse) -> validate -> size gate -> (children may start) -> push candidate ->
promote. The scheduler calls `process_image` once per image.

An image whose build or validation failed is never pushed; images built on it are blocked; its
siblings carry on. Every step lands in the release record at once.
"""

from __future__ import annotations

import docker.errors
import requests

from ngc_builder.assemble import packages, sizegate
from ngc_builder.assemble.image import BuildOutcome, build_image, build_labels
from ngc_builder.assemble.imageconfig import epoch_time
from ngc_builder.clock import now
from ngc_builder.errors import StepError, os_problem
from ngc_builder.pipeline import judge, reuse, tidy
from ngc_builder.pipeline.on_cluster import validate_on_cluster
from ngc_builder.pipeline.platforms import build_platforms, push_platforms
from ngc_builder.pipeline.run import ClusterValidation, Run
from ngc_builder.pipeline.schedule import Ready
from ngc_builder.pipeline.tags import promote_tags, stage_tags
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.push import push_candidate
from ngc_builder.records.record import BuildRecord, ImageRecord, PushRecord, ValidationRecord
from ngc_builder.validate.image import validate_image


def process_image(run: Run, spec: ImageSpec, ready: Ready) -> None:
    record = run.state.record.images[spec.name]
    try:
        _steps(run, spec, record, ready)
    except StepError as exc:
        run.ui.problem(spec.name, f"{exc.step}: {exc.message}")
    except (docker.errors.DockerException, requests.RequestException) as exc:
        # The engine went away between steps: fail this image, keep the record honest.
        fail_pending(record, f"engine: {exc.__class__.__name__}: {exc}")
        run.ui.problem(spec.name, f"engine: {exc}")
    except OSError as exc:  # the build dir's disk is full (reports, logs, contexts)
        step = run.state.step_of(spec.name) or "build"
        fail_pending(record, f"{step}: {os_problem(exc)}")
        run.ui.problem(spec.name, f"{step}: {os_problem(exc)}")
    finally:
        try:
            run.state.doing(spec.name, None)
            _tell_expectation(run, record)
            _save(run, spec)
        finally:  # children waiting to build or push must hear of it, whatever happened
            run.state.platforms_built(spec.name).set()
            run.state.published(spec.name).set()


def _steps(run: Run, spec: ImageSpec, record: ImageRecord, ready: Ready) -> None:
    digest = reuse.published(run, spec, record)
    if digest is not None:
        if run.policy.promote:  # its content tag is set last: the others should be there
            promote_tags(run, spec, record, digest)
        return
    if reuse.known_failure(run, spec, record) or reuse.staged_ancestor(run, spec, record):
        return
    run.state.doing(spec.name, "build")
    if _parent_image(run, spec, record) is None:
        parent = spec.parent or f"OS {spec.base}"
        block(record, f"{parent} did not pass")
        raise StepError(spec.name, "build", f"blocked: {parent} did not pass")
    build(run, spec, record)
    if run.services.cluster is not None:
        _steps_on_cluster(run, spec, record, ready, run.services.cluster)
        return
    run.state.doing(spec.name, "validate")
    validate(run, spec, record)
    run.state.doing(spec.name, "size")
    size_gate(run, spec, record)
    # Children may build on it now, while its other platforms are built and validated and it
    # is pushed: one that fails still keeps them out of the release (`push`).
    ready()
    build_platforms(run, spec, record)  # a required one that fails stops the image here
    if run.policy.push:
        run.state.doing(spec.name, "push")
        publish(run, spec, record)
        run.state.doing(spec.name, "tidy")
        tidy.drop_published(run, spec, record)
    else:
        record.push.status = "skipped"
        record.push.error = "--no-push"


def _steps_on_cluster(run: Run, spec: ImageSpec, record: ImageRecord, ready: Ready,
                      cluster: ClusterValidation) -> None:
    """The node pulls what it validates: size gate, push the candidate, the Slurm job, and
    only then children and release tags."""
    run.state.doing(spec.name, "size")
    size_gate(run, spec, record)
    build_platforms(run, spec, record)
    run.state.doing(spec.name, "push")
    digest = push(run, spec, record)
    run.state.doing(spec.name, "validate")
    validate_on_cluster(run, spec, record, cluster, digest)
    ready()
    conclude(run, spec, record, digest)


def _parent_image(run: Run, spec: ImageSpec, record: ImageRecord) -> str | None:
    try:
        return reuse.parent_image(run, spec)
    except StepError as exc:  # pulling back a parent this run skipped failed
        fail_pending(record, f"{exc.step}: {exc.message}")
        raise


def _save(run: Run, spec: ImageSpec) -> None:
    try:
        run.state.save()
    except OSError as exc:  # the record on disk stays the last one saved whole
        run.ui.problem(spec.name, f"record: {os_problem(exc)}")


def build(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    key = run.inputs.keys[spec.name]
    # Every image anew for a rebuild or a benchmark.
    if not run.policy.reuse_published or run.policy.no_cache:
        _build_new(run, spec, record)
    elif record.build.status == "ok" and record.build.key == key.key and record.build.image_id \
            and reuse.exists(run.engine, record.build.image_id):
        run.ui.step(spec.name,
                    f"unchanged (key {key.key[:12]}), reusing {record.build.image_id}")
        record.build.reused = True
    elif not reuse.adopt_local(run, spec, record) and not reuse.adopt_pushed(run, spec, record):
        _build_new(run, spec, record)
    if record.build.packages is None:
        listing = run.inputs.report_dir / f"{spec.name}.packages.json"
        record.build.packages = str(packages.collect(run.engine,
                                                     record.build.image_id or "", listing))
    run.state.save()

def _build_new(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    key = run.inputs.keys[spec.name]
    created = now()
    rendered = run.inputs.rendered[spec.name]
    # The label is the lock's time, as the config's is: the build's time is the record's.
    labels = build_labels(spec, key.key, epoch_time(rendered.epoch), run.inputs.revision,
                          run.inputs.source)
    record.labels = labels
    # A new build starts every step afresh: nothing of an earlier image may leak into it.
    record.build = BuildRecord(status="pending", key=key.key, created=created,
                               inputs=key.inputs(), log=str(run.ui.log_path(spec.name)))
    record.validation = ValidationRecord()
    record.push = PushRecord()
    run.ui.step(spec.name, f"building {rendered.local_ref}")
    try:
        if spec.name in run.inputs.lock_errors:
            raise StepError(spec.name, "lock", run.inputs.lock_errors[spec.name])
        outcome = build_image(run.engine, rendered,
                              run.inputs.context_dir / spec.name, labels, run.ui.sink(spec.name),
                              nocache=run.policy.no_cache, network=run.inputs.network)
    except StepError as exc:
        record.build.status, record.build.error = "failed", exc.message
        _block_after_build(record, "build failed")
        raise
    _record_build(record, outcome)

def _record_build(record: ImageRecord, outcome: BuildOutcome) -> None:
    record.build.status = "ok"
    record.build.image_id, record.build.built_id = outcome.image_id, outcome.built_id
    record.build.seconds, record.build.ended = round(outcome.seconds, 1), now()
    record.build.size_bytes = outcome.size_bytes

def validate(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    image_id = record.build.image_id
    assert image_id is not None
    mode = run.policy.gpu_mode
    if judge.already_passed(run, spec, record, mode, slurm=False):
        return
    run.ui.step(spec.name, f"validating (GPU: {mode})")
    judge.judge(run, spec, record, mode, lambda: validate_image(
        run.engine, image_id, record.labels, mode, run.inputs.report_dir,
        spec.name, baselines=judge.baselines_for(run, spec, mode)))

def size_gate(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    if spec.entry is None or spec.entry.size_baseline is None:
        return
    parent = run.state.record.images.get(spec.parent or "")
    parent_id = parent.build.image_id if parent else None
    try:
        verdict = sizegate.check(run.engine, spec.name,
                                 record.build.image_id or "", record.build.size_bytes or 0,
                                 spec.entry.size_baseline, parent_id)
    except StepError as exc:
        record.push.status, record.push.error = "blocked", f"size gate: {exc.message}"
        raise
    run.ui.step(spec.name, verdict)

def publish(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    conclude(run, spec, record, push(run, spec, record))

def conclude(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    """Promote the pushed candidate, or (--no-promote) stage it for a later gate."""
    if run.policy.promote:
        promote_tags(run, spec, record, digest)
    else:
        stage_tags(run, spec, record, digest)

def push(run: Run, spec: ImageSpec, record: ImageRecord) -> str:
    """The candidate's digest: pushed now, or by an earlier run whose promotion did not finish
    (a refused tag move, a lost registry), which is promoted with nothing pushed."""
    image_id = record.build.image_id
    assert image_id is not None
    pushed = record.push.digest
    if record.push.image_id == image_id and pushed and reuse.held(run, spec, pushed):
        return pushed
    if spec.parent is not None:  # its layers are uploaded once, by the parent's push
        run.state.published(spec.parent).wait()
        _refuse_on_blocked_parent(run, spec, record)
    run.ui.step(spec.name, f"pushing candidate of {spec.remote_ref(run.registry)}")
    try:
        outcome = push_candidate(run.engine, spec, image_id, run.registry,
                                 run.ui.sink(spec.name))
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    candidate = outcome.ref.rpartition(":")[2]
    try:
        digest = push_platforms(run, spec, record, outcome.digest, candidate)
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    record.push = record.push.model_copy(update={
        "status": "ok", "ref": outcome.ref, "digest": digest, "image_id": image_id,
        "seconds": round(outcome.seconds, 1), "ended": now(), "error": None,
        "reused": not outcome.pushed})
    run.state.save()
    return digest

def _refuse_on_blocked_parent(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    """A parent kept out of the release after its children started (a required platform
    failed) keeps them out too: nothing is pushed on an image the release does not hold."""
    parent = run.state.record.images.get(spec.parent or "")
    if parent is not None and parent.push.status == "blocked":
        record.push.status, record.push.error = "blocked", f"{spec.parent} did not pass"
        raise StepError(spec.name, "push", f"blocked: {spec.parent} did not pass "
                        f"({parent.push.error})")


def fail_pending(record: ImageRecord, reason: str) -> None:
    for step in (record.build, record.validation, record.push):
        if step.status == "pending":
            step.status, step.error = "failed", reason

def block(record: ImageRecord, reason: str) -> None:
    for step in (record.build, record.validation, record.push):
        step.status = "blocked"
        step.error = reason

def _block_after_build(record: ImageRecord, reason: str) -> None:
    for step in (record.validation, record.push):
        step.status, step.error = "blocked", reason


def _tell_expectation(run: Run, record: ImageRecord) -> None:
    if record.outcome == "xfail":
        run.ui.step(record.name, f"expected failure ({record.expect_failure})")
    elif record.outcome == "xpass":
        run.ui.problem(record.name, "passed although the manifest expects it to fail: "
                                    "remove its expect_failure")

