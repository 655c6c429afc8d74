"""Verify: every planned tag exists in the registry and points at the recorded digest; an
index holds each recorded platform's manifest, each with its SBOM and signature; each recorded
SquashFS is beside its manifest, signed."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.publish.attest import attestation_problem, attestation_tag
from ngc_builder.publish.oci_index import platforms_of
from ngc_builder.publish.referrers import (
    ATTESTATION_ARTIFACT,
    SIGNATURE_ARTIFACT,
    referrers,
    referrers_tag,
)
from ngc_builder.publish.sbom import SBOM_TYPE, check_sbom, sbom_tag
from ngc_builder.publish.signing import signature_problem, signature_tag
from ngc_builder.publish.squashfs_artifact import Found, find_squashfs
from ngc_builder.records.record import ImageRecord, ReleaseRecord, load_record, record_path
from ngc_builder.services.registry import RegistryError

# The release's public key, or None and where one was looked for.
Verifier = tuple[ec.EllipticCurvePublicKey | None, str]


@dataclass(frozen=True)
class TagCheck:
    image: str
    tag: str
    expected: str | None
    found: str | None
    problem: str | None

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)


def load_published(build_dir: Path, release: str, registry: str) -> ReleaseRecord:
    """The record of this release's runs against `registry`."""
    path = record_path(build_dir, release)
    record = load_record(path)
    if record is None:
        raise InputError([Problem(str(path), 1, "(record)",
                                  "no release record: nothing says what was published")])
    section = record.for_registry(registry)
    if section is None:
        raise InputError([Problem(str(path), 1, "(record)",
                                  f"no run of {release} against {registry} is recorded")])
    return section


def verify_tags(plan: ReleasePlan, record: ReleaseRecord, aliases: list[str],
                public: Verifier | None = None) -> list[TagCheck]:
    """Tags, SBOMs and (with `public`, the release's key) signatures of every image."""
    checks = []
    for spec in plan.images:
        if spec.entry is not None and spec.entry.expect_failure is not None:
            continue  # never published, by design
        image = record.images.get(spec.name)
        expected = image.push.digest if image is not None and image.push.status == "ok" else None
        checks += [_check(plan, spec.name, tag, expected) for tag in (spec.release_tag, *aliases)]
        if expected is not None:
            checks.append(_sbom_check(plan, spec.name, expected))
        if expected is not None and public is not None:
            checks += _signature_checks(plan, spec.name, expected, public)
        if expected is not None and image is not None:
            checks += _platform_checks(plan, spec, image, public)
            checks += _squashfs_checks(plan, spec.name, image, public)
    return checks


def _squashfs_checks(plan: ReleasePlan, name: str, image: ImageRecord,
                     public: Verifier | None) -> list[TagCheck]:
    """Each recorded SquashFS is beside its platform's manifest, about it, and signed."""
    checks = []
    for made in image.push.squashfs:
        try:
            found = find_squashfs(plan.registry, name, made.image)
        except RegistryError as exc:
            found = f"registry: {exc}"
        problem = found if isinstance(found, str) else None
        checks.append(TagCheck(name, made.tag, made.image, None if problem else made.image,
                               problem))
        if public is not None and isinstance(found, Found):
            checks.append(_signature_check(plan, name, found.manifest_digest, public))
    return checks


def _platform_checks(plan: ReleasePlan, spec: ImageSpec, image: ImageRecord,
                     public: Verifier | None) -> list[TagCheck]:
    """For an index: it holds each recorded platform's manifest, and each manifest has its
    own SBOM and (with `public`) its own signature."""
    if image.push.host_digest is None or image.push.digest is None:
        return []
    wanted = {HOST_PLATFORM: image.push.host_digest,
              **{platform: entry.digest for platform, entry in image.platforms.items()
                 if entry.digest and entry.left_out is None and platform in spec.platforms}}
    try:
        held, error = platforms_of(plan.registry, spec.name, image.push.digest), None
    except RegistryError as exc:
        held, error = {}, f"registry: {exc}"
    checks = []
    for platform, digest in sorted(wanted.items()):
        found = held.get(platform)
        problem = error or _entry_problem(found, digest)
        checks += [TagCheck(spec.name, f"{spec.release_tag} {platform}", digest, found, problem),
                   _sbom_check(plan, spec.name, digest)]
        if public is not None:
            checks.append(_signature_check(plan, spec.name, digest, public))
    return checks


def _signature_checks(plan: ReleasePlan, name: str, digest: str,
                      public: Verifier) -> list[TagCheck]:
    """The image's signature, and its SBOM's when the SBOM is there."""
    try:
        sbom = plan.registry.manifest_digest(name, sbom_tag(digest))
    except RegistryError:
        sbom = None  # the SBOM check above says why
    return [*(_signature_check(plan, name, signed, public)
              for signed in (digest, *([sbom] if sbom else []))),
            _attestation_check(plan, name, digest, public), _referrers_check(plan, name, digest)]


def _entry_problem(found: str | None, recorded: str) -> str | None:
    if found is None:
        return "the index lacks this platform"
    return None if found == recorded else "the index names another digest than the record's"


def _referrers_check(plan: ReleasePlan, name: str, digest: str) -> TagCheck:
    """The fallback index lists the SBOM, the signature and the attestation."""
    problem: str | None = None
    try:
        missing = sorted({SBOM_TYPE, SIGNATURE_ARTIFACT, ATTESTATION_ARTIFACT}
                         - set(referrers(plan.registry, name, digest)))
        problem = f"the referrers index lacks {', '.join(missing)}" if missing else None
    except RegistryError as exc:
        problem = f"registry: {exc}"
    return TagCheck(name, referrers_tag(digest), digest, None if problem else digest, problem)


def _attestation_check(plan: ReleasePlan, name: str, digest: str,
                       public: Verifier) -> TagCheck:
    """The image's provenance, signed by the release's key, is beside it."""
    key, source = public
    problem = (attestation_problem(plan.registry, name, digest, key) if key is not None
               else f"no public key to check attestations with ({source})")
    return TagCheck(name, attestation_tag(digest), digest, None if problem else digest, problem)


def _signature_check(plan: ReleasePlan, name: str, digest: str, public: Verifier) -> TagCheck:
    """A signature of exactly this digest by the release's key is beside the image."""
    key, source = public
    problem = (signature_problem(plan.registry, name, digest, key) if key is not None
               else f"no public key to check signatures with ({source})")
    return TagCheck(name, signature_tag(digest), digest, None if problem else digest, problem)


def _sbom_check(plan: ReleasePlan, name: str, digest: str) -> TagCheck:
    """The image's SBOM is in the registry, next to it, and is about that digest."""
    try:
        problem = check_sbom(plan.registry, name, digest)
    except RegistryError as exc:
        problem = f"registry: {exc}"
    return TagCheck(name, sbom_tag(digest), digest, None if problem else digest, problem)


def _check(plan: ReleasePlan, name: str, tag: str, expected: str | None) -> TagCheck:
    try:
        found = plan.registry.manifest_digest(name, tag)
    except RegistryError as exc:
        return TagCheck(name, tag, expected, None, f"registry: {exc}")
    if expected is None:
        problem = "the record has no published digest (not pushed, or its gates failed)"
    elif found is None:
        problem = "tag missing from the registry"
    elif found != expected:
        problem = "tag points at another digest than the record's"
    else:
        problem = None
    return TagCheck(name, tag, expected, found, problem)
