"""The SquashFS artifact as a node finds it: about this very image, one layer, a digest and a
size it may trust enough to download; anything else is named in one line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ngc_builder.publish.artifact import Layer, artifact_manifest
from ngc_builder.publish.squashfs_artifact import (
    LAYER_TYPE,
    SQUASHFS_TYPE,
    Found,
    find_squashfs,
    squashfs_tag,
)
from ngc_builder.publish.tags import content_digest
from ngc_builder.services.registry import Manifest
from tests.unit.fake_engine import StoringRegistry

pytestmark = pytest.mark.unit
IMAGE_BODY = b'{"schemaVersion":2,"layers":[]}'
IMAGE = content_digest(IMAGE_BODY)
OTHER = "sha256:" + "bb" * 32
BLOB = "sha256:" + "cc" * 32
OCI = "application/vnd.oci.image.manifest.v1+json"


def published(change: dict[str, Any] | None = None) -> StoringRegistry:
    registry = StoringRegistry()
    image = Manifest(IMAGE_BODY, OCI, IMAGE)
    registry.manifests[f"pytorch@{IMAGE}"] = image
    body = json.loads(artifact_manifest(image, SQUASHFS_TYPE,
                                        Layer(LAYER_TYPE, BLOB, 1000, "pytorch.sqfs")).body)
    body.update(change or {})
    raw = json.dumps(body).encode()
    registry.put_manifest("pytorch", squashfs_tag(IMAGE), Manifest(raw, OCI, content_digest(raw)))
    return registry


def layer(**fields: Any) -> dict[str, Any]:
    return {"layers": [{"mediaType": LAYER_TYPE, "digest": BLOB, "size": 1000, **fields}]}


def test_the_artifact_of_the_image_is_found_with_its_layer() -> None:
    found = find_squashfs(published(), "pytorch", IMAGE)
    assert isinstance(found, Found)
    assert (found.layer_digest, found.size) == (BLOB, 1000)
    assert found.manifest_digest.startswith("sha256:")


@pytest.mark.parametrize(("change", "problem"), [
    ({"subject": {"digest": OTHER}}, f"SquashFS subject is {OTHER}, not the image {IMAGE}"),
    ({"artifactType": "application/vnd.cyclonedx+json"}, "SquashFS tag holds a application/"),
    ({"layers": []}, "SquashFS artifact has 0 layers of application/vnd.squashfs, not 1"),
    (layer(digest="../../../etc/passwd"), "SquashFS layer names '../../../etc/passwd', not a"),
    (layer(digest="sha256:" + "CC" * 32), "SquashFS layer names 'sha256:CCCC"),
    (layer(size=True), "SquashFS layer size 'True' is not between"),
    (layer(size=-1), "SquashFS layer size '-1' is not between"),
    (layer(size=1 << 40), "SquashFS layer size '1099511627776' is not between"),
    (layer(size="1000"), "SquashFS layer size '1000' is not between"),
    ({"layers": "not a list"}, "SquashFS artifact unreadable: ValueError"),
])
def test_an_artifact_that_is_not_this_images_is_refused(change: dict[str, Any],
                                                        problem: str) -> None:
    found = find_squashfs(published(change), "pytorch", IMAGE)
    assert isinstance(found, str) and found.startswith(problem), found


def test_no_artifact_and_an_unreadable_one_are_said() -> None:
    assert find_squashfs(StoringRegistry(), "pytorch", IMAGE) == \
        f"no SquashFS: tag {squashfs_tag(IMAGE)} missing from the registry"
    registry = StoringRegistry()
    registry.put_manifest("pytorch", squashfs_tag(IMAGE), Manifest(b"<html>", "text/html", OTHER))
    assert str(find_squashfs(registry, "pytorch", IMAGE)).startswith(
        "SquashFS artifact unreadable: JSONDecodeError")
