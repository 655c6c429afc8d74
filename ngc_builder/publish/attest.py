"""Publish, step 4: an in-toto SLSA provenance attestation of every signed image, where cosign
puts attestations: a DSSE envelope (`application/vnd.dsse.envelope.v1+json`) as a layer of the
artifact tagged `sha256-<hex>.att`, its `predicateType` in the layer's annotations, so
`cosign verify-attestation --key --type slsaprovenance1` checks it.

The statement names what the image was made from and what it passed: the manifest's and the
lock's sha256, the project's git revision and source, the builder's version, the parent
image's digest, and the validation verdict and tiers. Its signature is ECDSA over DSSE's
pre-authentication encoding, with the release's key.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.publish.cosign_keys import SigningKey, verifies
from ngc_builder.publish.signing import (
    SIGNATURE_ANNOTATION,
    SignatureReader,
    append_layer,
    artifact_layers,
)
from ngc_builder.publish.tags import digest_tag
from ngc_builder.services.registry import Registry, RegistryError

ENVELOPE_TYPE = "application/vnd.dsse.envelope.v1+json"
STATEMENT_TYPE = "application/vnd.in-toto+json"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "urn:ngc-builder:release:v1"


@dataclass(frozen=True)
class Provenance:
    """What one image's attestation says."""

    repository: str  # host/path
    digest: str
    manifest_sha256: str
    lock_sha256: str | None
    revision: str
    source: str
    builder_version: str
    parent: str | None  # host/path@sha256:... of the image it was built on
    verdict: str | None
    tiers: dict[str, str]
    started: str
    finished: str


@dataclass(frozen=True)
class Attested:
    """What a verified envelope states: its subject's sha256 and the validation."""

    subject: str
    validation: dict[str, str]


def attestation_tag(image_digest: str) -> str:
    return digest_tag(image_digest, ".att")


def statement(made: Provenance) -> dict[str, Any]:
    dependencies: list[dict[str, Any]] = [
        {"uri": f"git+{made.source}", "digest": {"gitCommit": made.revision}},
        {"name": "manifest", "digest": {"sha256": made.manifest_sha256}}]
    if made.lock_sha256:
        dependencies.append({"name": "lock", "digest": {"sha256": made.lock_sha256}})
    if made.parent:
        name, _, digest = made.parent.partition("@")
        dependencies.append({"uri": f"oci://{name}", "digest": {"sha256": digest[7:]}})
    return {"_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": made.repository, "digest": {"sha256": made.digest[7:]}}],
            "predicateType": PREDICATE_TYPE,
            "predicate": {
                "buildDefinition": {"buildType": BUILD_TYPE,
                                    "externalParameters": {"revision": made.revision},
                                    "resolvedDependencies": dependencies},
                "runDetails": {
                    "builder": {"id": BUILD_TYPE,
                                "version": {"ngc-builder": made.builder_version}},
                    "metadata": {"startedOn": made.started, "finishedOn": made.finished},
                    "byproducts": [{"name": "validation", "annotations": {
                        "verdict": made.verdict or "none", **made.tiers}}]}}}


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed."""
    return b" ".join([b"DSSEv1", str(len(payload_type)).encode(), payload_type.encode(),
                      str(len(body)).encode(), body])


def envelope(document: dict[str, Any], key: SigningKey) -> bytes:
    body = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
    return json.dumps({"payloadType": STATEMENT_TYPE,
                       "payload": base64.b64encode(body).decode(),
                       "signatures": [{"keyid": "", "sig": key.sign(pae(STATEMENT_TYPE, body))}]},
                      separators=(",", ":")).encode()


def attest_image(registry: Registry, name: str, made: Provenance, key: SigningKey) -> str:
    """Push the attestation of `made` (kept beside others'); returns its tag. One by this key
    of this digest already there: nothing pushed (a rerun adds none)."""
    tag = attestation_tag(made.digest)
    public = key.private.public_key()
    if _attested(registry, name, tag, made.digest, public):
        return tag
    # cosign reads every layer as a signature layer: the envelope carries its own signature,
    # and the annotation cosign requires stays empty, as cosign writes it.
    append_layer(registry, name, tag, envelope(statement(made), key), ENVELOPE_TYPE,
                 {"predicateType": PREDICATE_TYPE, SIGNATURE_ANNOTATION: ""})
    return tag


def attestation_problem(registry: SignatureReader, name: str, image_digest: str,
                        public: ec.EllipticCurvePublicKey) -> str | None:
    tag = attestation_tag(image_digest)
    try:
        if _attested(registry, name, tag, image_digest, public):
            return None
    except RegistryError as exc:
        return f"registry: {exc}"
    return f"no provenance of this image by the release's key at {tag}"


def _attested(registry: SignatureReader, name: str, tag: str, image_digest: str,
              public: ec.EllipticCurvePublicKey) -> bool:
    return attested_validation(registry, name, image_digest, public) is not None


def attested_validation(registry: SignatureReader, name: str, image_digest: str,
                        public: ec.EllipticCurvePublicKey) -> dict[str, str] | None:
    """The validation (verdict and tiers) that `public`'s attestation of the image states;
    None when there is none. A run that adopts a published image reads what the run that
    validated it attested, not what an unsigned record or label would claim."""
    for layer in artifact_layers(registry, name, attestation_tag(image_digest), ENVELOPE_TYPE):
        try:
            found = _statement_of(registry, name, layer, public)
        except RegistryError:
            continue  # one unreadable layer hides no good one behind it
        if found is not None and found.subject == image_digest[7:]:
            return found.validation
    return None


def _statement_of(registry: SignatureReader, name: str, layer: dict[str, Any],
                  public: ec.EllipticCurvePublicKey) -> Attested | None:
    """The subject's sha256 and validation annotations of a layer's envelope, when its
    signature is `public`'s; nothing of an unsigned envelope is read beyond its signature."""
    try:
        sealed = json.loads(registry.get_blob(name, str(layer["digest"])))
        body = base64.b64decode(sealed["payload"], validate=True)
        signed = any(verifies(public, pae(str(sealed["payloadType"]), body), entry["sig"])
                     for entry in sealed["signatures"])
        if not signed:
            return None
        statement = json.loads(body)
        subject = statement["subject"][0]["digest"]["sha256"]
        byproducts = statement["predicate"]["runDetails"].get("byproducts") or []
        return Attested(str(subject), _validation(byproducts))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _validation(byproducts: object) -> dict[str, str]:
    """The `validation` byproduct's annotations (string values only)."""
    items = byproducts if isinstance(byproducts, list) else []
    found = next((item.get("annotations") for item in items
                  if isinstance(item, dict) and item.get("name") == "validation"), None)
    if not isinstance(found, dict):
        return {}
    return {str(key): value for key, value in found.items() if isinstance(value, str)}
