"""OCI 1.1 artifacts about an image (its SBOM, its SquashFS): a manifest with an
`artifactType`, the empty config, one layer, and the image as `subject`; found by a tag named
after the image's digest, since registries without the referrers API cannot list them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ngc_builder.publish.tags import content_digest
from ngc_builder.services.registry import Manifest, RegistryError

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
EMPTY_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_BLOB = b"{}"
Document = dict[str, Any]


@dataclass(frozen=True)
class Layer:
    """The one layer of an artifact: a blob already in the registry (or about to be)."""

    media_type: str
    digest: str
    size: int
    title: str  # its file name, for `oras pull`
    annotations: tuple[tuple[str, str], ...] = ()

    def descriptor(self) -> Document:
        return {"mediaType": self.media_type, "digest": self.digest, "size": self.size,
                "annotations": {"org.opencontainers.image.title": self.title,
                                **dict(self.annotations)}}


def artifact_manifest(image: Manifest, artifact_type: str, layer: Layer) -> Manifest:
    """The artifact of `artifact_type` whose subject is `image`: the same inputs give the same
    bytes, so pushing it again is one HEAD."""
    media_type = image.media_type.partition(";")[0].strip()
    if not media_type:
        raise RegistryError(f"{image.digest}: the registry named no media type for the image")
    body = {
        "schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": artifact_type,
        "config": {"mediaType": EMPTY_TYPE, "digest": content_digest(EMPTY_BLOB), "size": 2,
                   "data": "e30="},  # the empty descriptor of OCI 1.1, `{}` inline
        "layers": [layer.descriptor()],
        "subject": {"mediaType": media_type, "digest": image.digest, "size": len(image.body)},
    }
    raw = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return Manifest(raw, OCI_MANIFEST, content_digest(raw))


def artifact_layer(manifest: Document, artifact_type: str, layer_type: str,
                   image_digest: str) -> Document | str:
    """The one layer of `layer_type` of an artifact about `image_digest`; else what is wrong,
    in one line (another artifact type, another subject, no layer or several)."""
    if manifest.get("artifactType") != artifact_type:
        return f"tag holds a {str(manifest.get('artifactType'))[:80]} artifact, not {artifact_type}"
    subject = mapping(manifest.get("subject") or {}).get("digest")
    if subject != image_digest:
        return f"subject is {str(subject)[:80]}, not the image {image_digest}"
    layers = [layer for layer in map(mapping, manifest.get("layers") or [])
              if layer.get("mediaType") == layer_type]
    if len(layers) != 1:
        return f"artifact has {len(layers)} layers of {layer_type}, not 1"
    return layers[0]


def mapping(value: object) -> Document:
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, found {type(value).__name__}")
    return value
