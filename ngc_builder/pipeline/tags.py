"""The release tags of a pushed candidate: promoted (SBOM, signature, then the tags, the
content tag last), or staged by key for a later gate (--no-promote)."""

from __future__ import annotations

from ngc_builder.errors import StepError
from ngc_builder.pipeline.provenance import attach_sbom, sign
from ngc_builder.pipeline.run import Run
from ngc_builder.pipeline.squashfs import attach_squashfs
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.promote import promote, stage
from ngc_builder.records.record import ImageRecord


def promote_tags(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    run.state.doing(spec.name, "promote")
    attach_sbom(run, spec, record, digest)  # no release tag without its SBOM beside it
    attach_squashfs(run, spec, record, digest)
    # ...nor without its signature: a cluster that enforces them never sees the new tag
    # unsigned, and the content tag stays the last thing a promotion writes.
    sign(run, spec, record, digest)
    run.state.doing(spec.name, "promote")
    try:
        done = promote(run.engine, run.registry, spec, digest,
                       run.inputs.keys[spec.name].tag,
                       list(run.policy.aliases), run.policy.force, _pushable(record))
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    record.push.status, record.push.error = "ok", None
    record.push.promoted = done.tags
    record.push.forced += done.forced
    for move in done.forced:
        run.ui.problem(spec.name, f"forced move of a release tag: {move}")
    run.ui.step(spec.name, f"{spec.remote_ref(run.registry)} -> {digest}")

def stage_tags(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    """--no-promote: the SBOM and the staged key tag beside the candidate, no release tag."""
    run.state.doing(spec.name, "stage")
    attach_sbom(run, spec, record, digest)
    attach_squashfs(run, spec, record, digest)  # made where the image is: the job's host
    staged = run.inputs.keys[spec.name].staged_tag
    try:
        stage(run.engine, run.registry, spec, digest, staged, _pushable(record))
    except StepError as exc:
        record.push.status, record.push.error = "failed", exc.message
        raise
    record.push.status, record.push.error, record.push.staged = "ok", None, staged
    run.ui.step(spec.name, f"staged {spec.remote_repository(run.registry)}:{staged} -> "
                           f"{digest} (not promoted: --no-promote)")

def _pushable(record: ImageRecord) -> str | None:
    """The image the engine may push to move a tag where the registry refuses our API
    credentials; none for an index, which the engine would replace by the host's image."""
    return record.build.image_id if record.push.host_digest is None else None
