"""The OCI 1.1 referrers fallback: an image index tagged `sha256-<hex>` (the image's digest,
no suffix) that lists what refers to the image, for registries without the referrers API
(distribution 2.x, Debian's docker-registry). Generic OCI tools (oras discover, regctl)
read this tag when the API answers 404; cosign finds its own `.sig`/`.att` tags directly.

Each entry is the descriptor of an artifact manifest with its `artifactType`: the SBOM,
the signature artifact, the provenance attestation, the SquashFS. Entries already there are
kept (another tool's referrers too); the index is rewritten only when an entry is new.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ngc_builder.publish.attest import attestation_tag
from ngc_builder.publish.sbom import SBOM_TYPE, sbom_tag
from ngc_builder.publish.signing import signature_tag
from ngc_builder.publish.squashfs_artifact import SQUASHFS_TYPE, squashfs_tag
from ngc_builder.publish.tags import digest_tag
from ngc_builder.services.registry import Manifest, Registry

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
SIGNATURE_ARTIFACT = "application/vnd.dev.cosign.artifact.sig.v1+json"
ATTESTATION_ARTIFACT = "application/vnd.dev.cosign.artifact.att.v1+json"


def referrers_tag(image_digest: str) -> str:
    return digest_tag(image_digest)


def publish_referrers(registry: Registry, name: str, image_digest: str) -> str:
    """The fallback index of `name@image_digest` listing its SBOM, signature, attestation
    and SquashFS (those that are there); returns its tag."""
    tag = referrers_tag(image_digest)
    entries = _entries(registry, name, tag)
    known = {entry.get("digest") for entry in entries}
    added = [found for found in _artifacts(registry, name, image_digest)
             if found["digest"] not in known]
    if added:
        body = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX,
                           "manifests": [*entries, *added]}, separators=(",", ":")).encode()
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        registry.put_manifest(name, tag, Manifest(body, OCI_INDEX, digest))
    return tag


def referrers(registry: Registry, name: str, image_digest: str) -> dict[str, str]:
    """artifactType -> manifest digest, as a generic tool reads the fallback tag."""
    return {str(entry.get("artifactType")): str(entry.get("digest"))
            for entry in _entries(registry, name, referrers_tag(image_digest))}


def _entries(registry: Registry, name: str, tag: str) -> list[dict[str, Any]]:
    found = registry.get_manifest(name, tag)
    if found is None:
        return []
    try:
        manifests = json.loads(found.body).get("manifests") or []
    except (ValueError, AttributeError):
        return []  # not an index: replaced by ours
    return [entry for entry in manifests if isinstance(entry, dict)]


def _artifacts(registry: Registry, name: str, image_digest: str) -> list[dict[str, Any]]:
    kinds = ((sbom_tag(image_digest), SBOM_TYPE),
             (signature_tag(image_digest), SIGNATURE_ARTIFACT),
             (attestation_tag(image_digest), ATTESTATION_ARTIFACT),
             (squashfs_tag(image_digest), SQUASHFS_TYPE))
    found = []
    for tag, artifact_type in kinds:
        manifest = registry.get_manifest(name, tag)
        if manifest is not None:
            found.append({"mediaType": OCI_MANIFEST, "digest": manifest.digest,
                          "size": len(manifest.body), "artifactType": artifact_type})
    return found
