"""The referrers fallback index: what refers to an image, listed once each, other tools'
entries kept, rewritten only when something is new."""

from __future__ import annotations

import json

import pytest

from ngc_builder.publish.referrers import (
    OCI_INDEX,
    SIGNATURE_ARTIFACT,
    publish_referrers,
    referrers,
    referrers_tag,
)
from ngc_builder.publish.signing import signature_tag
from ngc_builder.services.registry import Manifest
from tests.unit.publish.test_signing import Blobs

pytestmark = pytest.mark.unit
IMAGE = "sha256:" + "ab" * 32


def test_the_index_lists_what_is_there_and_keeps_other_tools_entries() -> None:
    registry = Blobs()
    theirs = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
              "digest": "sha256:" + "ee" * 32, "size": 10, "artifactType": "application/x-other"}
    body = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [theirs]})
    registry.put_manifest("jax", referrers_tag(IMAGE), Manifest(body.encode(), OCI_INDEX, "x"))
    signature = Manifest(b'{"layers": []}', "application/vnd.oci.image.manifest.v1+json",
                         "sha256:" + "cd" * 32)
    registry.put_manifest("jax", signature_tag(IMAGE), signature)
    assert publish_referrers(registry, "jax", IMAGE) == f"sha256-{'ab' * 32}"
    assert referrers(registry, "jax", IMAGE) == {"application/x-other": theirs["digest"],
                                                 SIGNATURE_ARTIFACT: signature.digest}
    written = registry.manifests[("jax", referrers_tag(IMAGE))]
    publish_referrers(registry, "jax", IMAGE)  # nothing new: not rewritten
    assert registry.manifests[("jax", referrers_tag(IMAGE))] is written
