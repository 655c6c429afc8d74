"""An image adopted from the registry is recorded as it was published: the builder's labels
from its own config (nothing else, nothing unbounded), and the tiers the release's key
attested (another key's statement, or none, gives no tiers)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from ngc_builder.pipeline.adopt import published_labels, published_validation
from ngc_builder.publish.attest import ENVELOPE_TYPE, attest_image, attestation_tag
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
        "org.ngc-builder.sep": "a\u2028b", "org.ngc-builder.bidi": "\u202eevil",
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
    other = image_with(registry, {"org.ngc-builder.framework": "forged"})
    registry.manifests[("pytorch", digest)] = registry.manifests[("pytorch", other)]
    assert published_labels(registry, "pytorch", digest) == {}  # not the bytes of `digest`


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


def test_an_unsigned_or_malformed_envelope_gives_no_tiers_and_no_crash(tmp_path: Path) -> None:
    """Whoever can push to the `.att` tag can put anything there: nothing of an unsigned
    envelope is read, and a layer list that is not a list is no layer."""
    registry = Blobs()
    statement = {"subject": [{"digest": {"sha256": IMAGE[7:]}}],
                 "predicate": {"runDetails": {"byproducts": 1}}}
    sealed = json.dumps({"payloadType": "application/vnd.in-toto+json", "signatures": [],
                         "payload": base64.b64encode(json.dumps(statement).encode()).decode()})
    digest = registry.put_blob("pytorch", sealed.encode())
    body = json.dumps({"layers": [{"mediaType": ENVELOPE_TYPE, "digest": digest}]}).encode()
    tag = attestation_tag(IMAGE)
    registry.manifests[("pytorch", tag)] = Manifest(body, "application/json", "sha256:" + "1" * 64)
    public = key(tmp_path / "ours").private.public_key()
    assert published_validation(registry, "pytorch", IMAGE, public).tiers == {}
    registry.manifests[("pytorch", tag)] = Manifest(b'{"layers": 1}', "application/json",
                                                    "sha256:" + "2" * 64)
    assert published_validation(registry, "pytorch", IMAGE, public).tiers == {}
