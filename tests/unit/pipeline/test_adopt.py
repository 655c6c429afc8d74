"""An image adopted from the registry is recorded as it was published: the builder's labels
from its own config (nothing else, nothing unbounded), and the tiers the release's key
attested (another key's statement, or none, gives no tiers)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ngc_builder.pipeline.adopt import published_labels, published_validation
from ngc_builder.publish.attest import attest_image
from ngc_builder.services.registry import Manifest
from tests.unit.publish.test_attest import IMAGE, MADE, key
from tests.unit.publish.test_signing import Blobs

pytestmark = pytest.mark.unit


def image_with(registry: Blobs, labels: dict[str, object], config: bytes | None = None) -> str:
    """An image manifest in `registry` whose config holds `labels`; its digest."""
    blob = config if config is not None else json.dumps({"config": {"Labels": labels}}).encode()
    config_digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    registry.blobs[config_digest] = blob
    body = json.dumps({"schemaVersion": 2, "config": {"digest": config_digest}}).encode()
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    registry.manifests[("pytorch", digest)] = Manifest(body, "application/json", digest)
    return digest


def test_only_the_builders_own_one_line_labels_are_taken() -> None:
    registry = Blobs()
    digest = image_with(registry, {
        "org.ngc-builder.framework": "pytorch", "org.ngc-builder.cuda": "13.2",
        "maintainer": "someone", "org.ngc-builder.x": "line\nforged", "org.ngc-builder.n": 3,
        "org.ngc-builder.long": "y" * 5000, "org.opencontainers.image.revision": "ab12",
        "org.ngc-builderX": "not ours"})
    assert published_labels(registry, "pytorch", digest) == {
        "org.ngc-builder.framework": "pytorch", "org.ngc-builder.cuda": "13.2",
        "org.opencontainers.image.revision": "ab12"}


def test_a_config_whose_bytes_are_not_its_digest_or_not_json_gives_no_labels() -> None:
    registry = Blobs()
    digest = image_with(registry, {"org.ngc-builder.framework": "pytorch"})
    config_digest = json.loads(registry.manifests[("pytorch", digest)].body)["config"]["digest"]
    registry.blobs[config_digest] = json.dumps(
        {"config": {"Labels": {"org.ngc-builder.framework": "forged"}}}).encode()
    assert published_labels(registry, "pytorch", digest) == {}
    assert published_labels(registry, "pytorch", image_with(registry, {}, b"not json")) == {}
    assert published_labels(registry, "pytorch", "sha256:" + "0" * 64) == {}


def test_the_tiers_are_the_ones_the_release_key_attested(tmp_path: Path) -> None:
    ours, theirs = key(tmp_path / "ours"), key(tmp_path / "theirs")
    registry = Blobs()
    attest_image(registry, "pytorch", MADE, theirs)
    public = ours.private.public_key()
    unattested = published_validation(registry, "pytorch", IMAGE, public)
    assert unattested.tiers == {} and unattested.gpu_mode == "(published)"
    attest_image(registry, "pytorch", MADE, ours)
    attested = published_validation(registry, "pytorch", IMAGE, public)
    assert attested.tiers == {"T0": "pass", "T2": "pass"} and attested.verdict == "pass"
    assert attested.reused and published_validation(registry, "pytorch", IMAGE, None).tiers == {}
