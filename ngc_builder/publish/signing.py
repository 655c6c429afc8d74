"""Publish, step 3: a cosign-compatible, key-based signature of every image that was promoted.

The signature lives where cosign (and NGC) put it, so `cosign verify --key` and admission
policies find it on any registry, referrers API or not: an OCI manifest tagged
`sha256-<hex>.sig` in the image's repository, one layer per signature, each layer the
"simple signing" payload (`application/vnd.dev.cosign.simplesigning.v1+json`: the image's
repository and manifest digest) with its ECDSA signature in the layer's
`dev.cosignproject.cosign/signature` annotation. Signatures by other keys already there are
kept; signing again with the same key is a no-op.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.publish.cosign_keys import SigningKey, verifies
from ngc_builder.publish.tags import content_digest, digest_tag
from ngc_builder.services.registry import Manifest, Registry, RegistryError

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
PAYLOAD_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"


def signature_tag(image_digest: str) -> str:
    return digest_tag(image_digest, ".sig")


def payload(repository: str, image_digest: str) -> bytes:
    """What cosign signs: the image's repository (`host/path`) and manifest digest."""
    document = {"critical": {"identity": {"docker-reference": repository},
                             "image": {"docker-manifest-digest": image_digest},
                             "type": "cosign container image signature"},
                "optional": None}
    return json.dumps(document, separators=(",", ":")).encode()


def sign_image(registry: Registry, name: str, image_digest: str, key: SigningKey) -> str:
    """Push `key`'s signature of `name@image_digest` (kept beside others'); returns the
    signature tag. Already signed by this key: nothing pushed."""
    tag = signature_tag(image_digest)
    public = key.private.public_key()
    if any(_signs(layer, registry, name, image_digest, public)
           for layer in artifact_layers(registry, name, tag, PAYLOAD_TYPE)):
        return tag
    body = payload(f"{registry.address}/{name}", image_digest)
    append_layer(registry, name, tag, body, PAYLOAD_TYPE,
                 {SIGNATURE_ANNOTATION: key.sign(body)})
    return tag


def append_layer(registry: Registry, name: str, tag: str, body: bytes, media_type: str,
                 annotations: dict[str, str]) -> None:
    """One more layer in the cosign-style artifact at `tag` (its other layers kept), with the
    config cosign writes for it."""
    layers = artifact_layers(registry, name, tag, media_type)
    registry.put_blob(name, body)
    layers.append({"mediaType": media_type, "digest": content_digest(body), "size": len(body),
                   "annotations": annotations})
    config = _config(layers)
    registry.put_blob(name, config)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                           "config": {"mediaType": OCI_CONFIG, "size": len(config),
                                      "digest": content_digest(config)},
                           "layers": layers}, separators=(",", ":")).encode()
    registry.put_manifest(name, tag, Manifest(manifest, OCI_MANIFEST, content_digest(manifest)))


class SignatureReader(Protocol):
    """What checking a signature reads of a registry (an `ImageReader` is one)."""

    def get_manifest(self, name: str, reference: str) -> Manifest | None: ...

    def get_blob(self, name: str, digest: str) -> bytes: ...


def signature_problem(registry: SignatureReader, name: str, image_digest: str,
                      public: ec.EllipticCurvePublicKey) -> str | None:
    """None when a signature by `public` of exactly this image is in the registry."""
    tag = signature_tag(image_digest)
    try:
        layers = artifact_layers(registry, name, tag, PAYLOAD_TYPE)
        if not layers:
            return f"not signed: no {tag}"
        if any(_signs(layer, registry, name, image_digest, public) for layer in layers):
            return None
    except RegistryError as exc:
        return f"registry: {exc}"
    return f"{tag} holds no signature of this image by the release's key"


def artifact_layers(registry: SignatureReader, name: str, tag: str,
                    media_type: str) -> list[dict[str, Any]]:
    """The layers of `media_type` in the artifact at `tag` (none when there is none)."""
    found = registry.get_manifest(name, tag)
    if found is None:
        return []
    try:
        layers = json.loads(found.body).get("layers") or []
    except (ValueError, AttributeError):
        return []  # not a signature manifest: replaced by ours
    if not isinstance(layers, list):
        return []
    return [layer for layer in layers if isinstance(layer, dict)
            and layer.get("mediaType") == media_type]


def _signs(layer: dict[str, Any], registry: SignatureReader, name: str, image_digest: str,
           public: ec.EllipticCurvePublicKey) -> bool:
    """The layer's payload names this image, and its annotation is a signature of it."""
    signature = (layer.get("annotations") or {}).get(SIGNATURE_ANNOTATION)
    digest = layer.get("digest")
    if not isinstance(signature, str) or not isinstance(digest, str):
        return False
    body = registry.get_blob(name, digest)
    if not verifies(public, body, signature):  # get_blob held the bytes to the digest
        return False
    try:
        named = json.loads(body)["critical"]["image"]["docker-manifest-digest"]
    except (ValueError, KeyError, TypeError):
        return False
    return bool(named == image_digest)


def _config(layers: list[dict[str, Any]]) -> bytes:
    """The config cosign writes for a signature image: its layers as the rootfs."""
    return json.dumps({"architecture": "", "created": "0001-01-01T00:00:00Z",
                       "history": [{"created": "0001-01-01T00:00:00Z"}], "os": "",
                       "rootfs": {"type": "layers",
                                  "diff_ids": [layer["digest"] for layer in layers]},
                       "config": {}}, separators=(",", ":")).encode()


