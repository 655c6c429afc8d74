"""The SBOM step of a publish: before any release tag points at a digest, the image's SBOM
(its locked packages and what is installed, with licences) is in the registry beside it."""

from __future__ import annotations

from ngc_builder import __version__
from ngc_builder.build import packages
from ngc_builder.cache.store import file_sha256
from ngc_builder.clock import now
from ngc_builder.errors import StepError
from ngc_builder.lock.models import lock_path
from ngc_builder.pipeline.platforms import shipped
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.publish.attest import Provenance, attest_image
from ngc_builder.publish.referrers import publish_referrers
from ngc_builder.publish.sbom import (
    SbomError,
    check_sbom,
    image_sbom,
    licences_in_image,
    push_sbom,
    sbom_tag,
)
from ngc_builder.publish.signing import sign_image
from ngc_builder.records.evidence import evidence_file
from ngc_builder.records.record import ImageRecord
from ngc_builder.services.engine import image_exists
from ngc_builder.services.registry import RegistryError


def attach_sbom(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    """Push the SBOM of `digest` unless the registry holds it already."""
    lock = run.inputs.lock
    if lock is None:
        return
    try:
        if check_sbom(run.registry, spec.name, digest) is None:
            record.push.sbom = sbom_tag(digest)
            return
        image_id = record.build.image_id
        if not image_id or not image_exists(run.engine_for(spec.name), image_id):
            run.ui.problem(spec.name, "no SBOM: the image is not on its host's engine to read it")
            return
        state = run.state
        listed = evidence_file(state.record_file.parent, record.build.packages,
                               state.record_file, f"images.{spec.name}.build.packages")
        installed = packages.load(listed) if listed is not None else None
        document = image_sbom(spec.name, run.inputs.plan, lock, digest,
                              licences_in_image(run.engine_for(spec.name), image_id), installed)
        push_sbom(run.registry, spec.name, digest, document)
    except (SbomError, RegistryError) as exc:
        record.push.status, record.push.error = "failed", f"sbom: {exc}"
        raise StepError(spec.name, "sbom", str(exc)) from None
    record.push.sbom = sbom_tag(digest)
    run.ui.step(spec.name, f"SBOM {spec.remote_repository(run.registry)}:{record.push.sbom}")
    _platform_sboms(run, spec, record)


def _platform_sboms(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    """One SBOM per platform of an index, each from its own platform's lock (the index's
    own SBOM above is the build host platform's)."""
    lock = run.inputs.lock
    if lock is None or record.push.host_digest is None:
        return
    engine = run.engine_for(spec.name)
    try:
        if check_sbom(run.registry, spec.name, record.push.host_digest) is not None:
            push_sbom(run.registry, spec.name, record.push.host_digest, image_sbom(
                spec.name, run.inputs.plan, lock, record.push.host_digest,
                licences_in_image(engine, record.build.image_id or ""), None))
        for platform, entry in shipped(record).items():
            if entry.digest is None or check_sbom(run.registry, spec.name, entry.digest) is None:
                continue
            push_sbom(run.registry, spec.name, entry.digest, image_sbom(
                spec.name, run.inputs.plan, lock.as_platform(platform), entry.digest,
                licences_in_image(engine, entry.build.image_id or ""), None))
    except (SbomError, RegistryError) as exc:
        record.push.status, record.push.error = "failed", f"sbom: {exc}"
        raise StepError(spec.name, "sbom", str(exc)) from None


def sign(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> None:
    """The image's cosign signature beside it, its SBOM's, its provenance and the referrers
    index, just before its release tag moves (only images that passed get here)."""
    key = run.services.signing
    if key is None:
        return
    run.state.doing(spec.name, "sign")
    try:
        record.push.signature = sign_image(run.registry, spec.name, digest, key)
        sbom = run.registry.manifest_digest(spec.name, record.push.sbom or sbom_tag(digest))
        if sbom is not None:
            sign_image(run.registry, spec.name, sbom, key)
        record.push.attestation = attest_image(run.registry, spec.name,
                                               provenance(run, spec, record, digest), key)
        publish_referrers(run.registry, spec.name, digest)  # for tools without cosign
        for each in platform_digests(record):  # an index's entries are signed one by one
            sign_image(run.registry, spec.name, each, key)
    except RegistryError as exc:
        record.push.status, record.push.error = "failed", f"sign: {exc}"
        raise StepError(spec.name, "sign", str(exc)) from None
    run.ui.step(spec.name, f"signed {spec.remote_repository(run.registry)}:"
                f"{record.push.signature}")


def platform_digests(record: ImageRecord) -> list[str]:
    """The manifests an index holds (none when the image ships one platform)."""
    if record.push.host_digest is None:
        return []
    return [record.push.host_digest, *(entry.digest for entry in shipped(record).values()
                                       if entry.digest is not None)]


def provenance(run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> Provenance:
    """What the attestation of `spec`'s image says (publish/attest.py)."""
    manifest = run.inputs.manifest
    lock = lock_path(manifest) if manifest is not None else None
    parent = run.state.record.images.get(spec.parent) if spec.parent else None
    parent_digest = parent.push.digest if parent is not None else None
    return Provenance(
        repository=spec.remote_repository(run.registry), digest=digest,
        manifest_sha256=file_sha256(manifest) if manifest and manifest.is_file() else "",
        lock_sha256=file_sha256(lock) if lock is not None and lock.is_file() else None,
        revision=run.inputs.revision, source=run.inputs.source, builder_version=__version__,
        parent=(f"{run.inputs.plan.get(spec.parent).remote_repository(run.registry)}"
                f"@{parent_digest}" if spec.parent and parent_digest else None),
        verdict=record.validation.verdict, tiers=dict(record.validation.tiers),
        started=run.state.record.started, finished=now())
