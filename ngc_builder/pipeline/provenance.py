"""The SBOM step of a publish: before any release tag points at a digest, the image's SBOM
(its locked packages and what is installed, with licences) is in the registry beside it."""

from __future__ import annotations

import functools

from ngc_builder import __version__
from ngc_builder.assemble import packages
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
    """Push the SBOM of `digest` unless the registry holds it already; for an index, also
    one per platform's manifest, each from its own platform's lock."""
    lock = run.inputs.lock
    if lock is None:
        return
    engine, image_id = run.engine, record.build.image_id or ""
    # (manifest, its lock, its local image, whether it is the host's image with its listing)
    targets = [(digest, lock, image_id, True)]
    if record.push.host_digest is not None:
        targets.append((record.push.host_digest, lock, image_id, True))
    targets += [(entry.digest, lock.as_platform(platform), entry.build.image_id or "", False)
                for platform, entry in shipped(spec, record).items() if entry.digest]
    # Each image's licences are read once (a throwaway container), whatever names it.
    licences = functools.cache(lambda image: licences_in_image(engine, image))
    try:
        needed = [target for target in targets
                  if check_sbom(run.registry, spec.name, target[0]) is not None]
        if any(not image or not image_exists(engine, image) for _, _, image, _ in needed):
            run.ui.problem(spec.name, "no SBOM: the image is not on its host's engine to read it")
            return
        installed = _installed(run, spec, record) if needed else None
        for target, target_lock, image, host in needed:
            push_sbom(run.registry, spec.name, target, image_sbom(
                spec.name, run.inputs.plan, target_lock, target, licences(image),
                installed if host else None))
    except (SbomError, RegistryError) as exc:
        record.push.status, record.push.error = "failed", f"sbom: {exc}"
        raise StepError(spec.name, "sbom", str(exc)) from None
    record.push.sbom = sbom_tag(digest)
    run.ui.step(spec.name, f"SBOM {spec.remote_repository(run.registry)}:{record.push.sbom}")


def _installed(run: Run, spec: ImageSpec, record: ImageRecord) -> dict[str, dict[str, str]] | None:
    """What the build listed as installed in the image, when that listing is at hand."""
    state = run.state
    listed = evidence_file(state.record_file.parent, record.build.packages,
                           state.record_file, f"images.{spec.name}.build.packages")
    return packages.load(listed) if listed is not None else None


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
        for each in platform_digests(spec, record):  # an index's entries are signed one by one
            sign_image(run.registry, spec.name, each, key)
        for squash in record.push.squashfs:  # a node checks this signature before running it
            artifact = run.registry.manifest_digest(spec.name, squash.tag)
            if artifact is None:
                raise RegistryError(f"{squash.tag}: the SquashFS is no longer in the registry")
            sign_image(run.registry, spec.name, artifact, key)
            publish_referrers(run.registry, spec.name, squash.image)
    except RegistryError as exc:
        record.push.status, record.push.error = "failed", f"sign: {exc}"
        raise StepError(spec.name, "sign", str(exc)) from None
    run.ui.step(spec.name, f"signed {spec.remote_repository(run.registry)}:"
                f"{record.push.signature}")


def platform_digests(spec: ImageSpec, record: ImageRecord) -> list[str]:
    """The manifests an index holds (none when the image ships one platform)."""
    if record.push.host_digest is None:
        return []
    return [record.push.host_digest, *(entry.digest for entry in shipped(spec, record).values()
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
