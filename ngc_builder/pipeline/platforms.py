"""An image's other platforms (`linux/arm64`) inside its release run. Once the build host's
own image passed validation and the size gate, each other platform is built on this host
(assemble/platform.py: wheels installed and their bytecode compiled here, only maintainer scripts
emulated), validated under emulation, and after the push the candidate tag becomes one index
over them.

A required platform that fails keeps the whole image out of the release: nothing of it is
pushed, and the images built on it are blocked. A platform the manifest lists in
`optional_platforms` is left out instead: the image ships without it, the record and the
release notes say why.
"""

from __future__ import annotations

from ngc_builder.assemble.image import BuildOutcome, build_image
from ngc_builder.assemble.platform import HostStage, context_tars, platform_context
from ngc_builder.assemble.wheel_install import VenvTree
from ngc_builder.clock import now
from ngc_builder.errors import StepError
from ngc_builder.lock.models import ImageLock
from ngc_builder.manifest.platforms import DEB_ARCHES, HOST_PLATFORM, others
from ngc_builder.pipeline import reuse
from ngc_builder.pipeline.judge import outcome_fields
from ngc_builder.pipeline.run import PlatformInputs, Run
from ngc_builder.plan.dag import ImageSpec, optional_platform
from ngc_builder.publish.oci_index import PlatformImage, push_index
from ngc_builder.publish.push import step_errors, transfer
from ngc_builder.records.record import (
    DEFERRED,
    BuildRecord,
    ImageRecord,
    PlatformRecord,
    ValidationRecord,
)
from ngc_builder.services.engine import KEY_LABEL, find_built
from ngc_builder.validate.image import validate_image


def build_platforms(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    """Each other platform of `spec` built, then validated; StepError when a required one
    failed (the push is then blocked), a note when an optional one is left out. Children's
    builds of a platform wait for its build only (`platforms_built`), not its validation."""
    built = []
    try:
        for platform in others(spec.platforms):
            entry = record.platforms.setdefault(platform, PlatformRecord())
            entry.left_out = None
            if _step(run, spec, record, platform, "build"):
                built.append(platform)
    finally:
        run.state.platforms_built(spec.name).set()
    for platform in built:
        if platform in run.policy.deferred:
            _defer(run, spec, record.platforms[platform], platform)
        else:
            _step(run, spec, record, platform, "validate")


def _defer(run: Run, spec: ImageSpec, entry: PlatformRecord, platform: str) -> None:
    """--defer-validation: staged unjudged, for a job on the platform's own nodes (only with
    --no-promote: the side that promotes waits for that job's verdict)."""
    image_id = entry.build.image_id or ""
    if entry.validation.image_id != image_id or entry.validation.verdict != "pass":
        entry.validation = ValidationRecord(status="skipped", verdict=DEFERRED, image_id=image_id)
    run.ui.step(spec.name, f"{platform}: validation left to a job on {platform} nodes")
    run.state.save()


def _step(run: Run, spec: ImageSpec, record: ImageRecord, platform: str, step: str) -> bool:
    """One step of one platform; False when an optional platform failed it (left out)."""
    entry = record.platforms[platform]
    try:
        run.state.doing(spec.name, f"{step} {platform}")
        (_build if step == "build" else _validate)(run, spec, record, platform, entry)
        return True
    except StepError as exc:
        _failed(run, spec, record, platform, exc)
        return False
    finally:
        run.state.save()


def shipped(spec: ImageSpec, record: ImageRecord) -> dict[str, PlatformRecord]:
    """The other platforms this image ships: listed by the manifest now (a record may hold
    one an earlier manifest listed), built, validated (or staged for a job on its own nodes to
    validate: the side that promotes waits for that verdict), not left out."""
    return {platform: entry for platform, entry in record.platforms.items()
            if platform in spec.platforms and entry.left_out is None
            and entry.validation.verdict in ("pass", DEFERRED)}


def _failed(run: Run, spec: ImageSpec, record: ImageRecord, platform: str,
            exc: StepError) -> None:
    reason = f"{exc.step}: {exc.message}"
    if optional_platform(run.inputs.plan, spec, platform):
        record.platforms[platform].left_out = reason
        run.ui.problem(spec.name, f"{platform} left out (optional_platforms): {reason}")
        return
    record.push.status, record.push.error = "blocked", f"{platform} did not pass: {reason}"
    raise StepError(spec.name, exc.step, exc.message)


def _inputs(run: Run, spec: ImageSpec, platform: str) -> PlatformInputs:
    inputs = run.inputs.platforms.get(platform)
    if inputs is None or spec.name not in inputs.renders:
        raise StepError(spec.name, f"build {platform}", f"no {platform} render or lock")
    return inputs


def _build(run: Run, spec: ImageSpec, record: ImageRecord, platform: str,
           entry: PlatformRecord) -> None:
    inputs = _inputs(run, spec, platform)
    key = run.inputs.keys[spec.name].key
    engine = run.engine
    if entry.build.status == "ok" and entry.build.key == key and entry.build.image_id \
            and reuse.exists(engine, entry.build.image_id):
        run.ui.step(spec.name, f"{platform}: unchanged, reusing {entry.build.image_id}")
        entry.build.reused = True
        return
    _parent_for(run, spec, platform)
    entry.build = BuildRecord(status="pending", key=key, created=now(),
                              log=str(run.ui.log_path(spec.name)))
    entry.validation = ValidationRecord()
    entry.digest = None
    entry.labels = platform_labels(record.labels, platform)
    found = None if run.policy.no_cache else find_built(engine, entry.labels.get(KEY_LABEL, ""))
    if found is not None:  # built from the same key by another run (another build dir)
        run.ui.step(spec.name, f"{platform}: unchanged, reusing {found['Id']} built earlier")
        entry.labels = dict(found.get("Labels") or {})  # its own, `created` included
        entry.build = entry.build.model_copy(update={
            "status": "ok", "image_id": str(found["Id"]), "reused": True,
            "size_bytes": int(found.get("Size") or 0)})
        return
    outcome = _build_new(run, spec, record, entry.labels, inputs)
    entry.build = entry.build.model_copy(update={
        "status": "ok", "image_id": outcome.image_id, "built_id": outcome.built_id,
        "seconds": round(outcome.seconds, 1), "size_bytes": outcome.size_bytes})


def _build_new(run: Run, spec: ImageSpec, record: ImageRecord, labels: dict[str, str],
               inputs: PlatformInputs) -> BuildOutcome:
    rendered = inputs.renders[spec.name]
    engine, sink = run.engine, run.ui.sink(spec.name)
    run.ui.step(spec.name, f"building {rendered.local_ref} ({rendered.platform})")
    stage = HostStage(engine, record.build.image_id or "", inputs.wheel_path,
                      VenvTree(inputs.pythons[spec.base], inputs.lock.os[spec.base].epoch))
    folder = run.inputs.context_dir / rendered.folder_name
    try:
        platform_context(rendered, run.inputs.context_dir,
                         inputs.lock.images.get(spec.name) or ImageLock(inputs={}), stage, sink)
        outcome = build_image(engine, rendered, folder, labels, sink,
                              nocache=run.policy.no_cache, network=run.inputs.network)
    finally:  # the layer's installed wheels, GBs for a CUDA stack: made again when needed
        for tar in context_tars(rendered):
            (folder / tar).unlink(missing_ok=True)
    return outcome


def platform_labels(labels: dict[str, str], platform: str) -> dict[str, str]:
    """The host image's labels, with a key label of its own: a local image found by the
    host's key (`find_built`) must never be another platform's."""
    key = labels.get(KEY_LABEL)
    return {**labels, KEY_LABEL: f"{key}.{DEB_ARCHES[platform]}"} if key else labels


def _parent_for(run: Run, spec: ImageSpec, platform: str) -> None:
    """The platform's parent image on this host: built by this run, or pulled by the digest
    its published index names (an image the registry already held)."""
    if spec.parent is None:
        return
    run.state.platforms_built(spec.parent).wait()  # set at once for a parent not in this run
    parent = run.state.record.images.get(spec.parent)
    entry = parent.platforms.get(platform) if parent is not None else None
    step = f"build {platform}"
    if entry is None or entry.left_out is not None:
        raise StepError(spec.name, step, f"{spec.parent} has no {platform} image")
    engine = run.engine
    if entry.build.image_id and reuse.exists(engine, entry.build.image_id):
        return
    if entry.digest is None:
        raise StepError(spec.name, step, f"{spec.parent}'s {platform} image is not here")
    parent_spec = run.inputs.plan.get(spec.parent)
    local = _inputs(run, parent_spec, platform).renders[spec.parent].local_ref
    entry.build.image_id = reuse.pull(run, parent_spec, entry.digest, local, platform)


def _validate(run: Run, spec: ImageSpec, record: ImageRecord, platform: str,
              entry: PlatformRecord) -> None:
    image_id = entry.build.image_id or ""
    if entry.validation.verdict == "pass" and entry.validation.image_id == image_id:
        run.ui.step(spec.name, f"{platform}: validation already passed for this image")
        return
    run.ui.step(spec.name, f"validating {platform} (the emulated tier under QEMU, GPU: none)")
    arch = DEB_ARCHES[platform]
    outcome = validate_image(run.engine, image_id,
                             entry.labels, "none",
                             run.inputs.report_dir, f"{spec.name}.{arch}", platform=platform)
    report = outcome.report
    entry.validation = ValidationRecord(**outcome_fields(outcome, "none", image_id))
    for check in report.checks:
        run.ui.line(spec.name, f"{arch} {check.status:4} {check.tier} {check.id}: "
                               f"{check.message}")
    if report.verdict != "pass":
        failed = ", ".join(entry.validation.failed_checks) or (report.error or "")
        raise StepError(spec.name, f"validate {platform}", f"failed: {failed}")


def push_platforms(run: Run, spec: ImageSpec, record: ImageRecord, host_digest: str,
                   candidate: str) -> str:
    """Each shipped platform's image pushed beside the host's, then the candidate tag
    pointed at one index over them all; the index's digest (the host's when it ships alone)."""
    ours = shipped(spec, record)
    if not ours:  # the host's image alone (an optional platform left out this time)
        record.push.host_digest = None
        return host_digest
    engine, sink = run.engine, run.ui.sink(spec.name)
    images = [PlatformImage(HOST_PLATFORM, host_digest)]
    record.push.host_digest = host_digest
    with step_errors(spec, "push", spec.remote_repository(run.registry)):
        for platform, entry in sorted(ours.items()):
            if entry.digest is None or not reuse.held(run, spec, entry.digest):
                tag = f"{candidate}.{DEB_ARCHES[platform]}"
                entry.digest = transfer(engine, spec, entry.build.image_id or "", run.registry,
                                        tag, sink)
            images.append(PlatformImage(platform, entry.digest))
        digest = push_index(run.registry, spec.name, candidate, images)
    run.ui.step(spec.name, f"index {digest}: {', '.join(i.platform for i in images)}")
    return digest
