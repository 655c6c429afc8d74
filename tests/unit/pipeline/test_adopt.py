"""An image adopted from the registry is recorded as it was published: the builder's labels
from its own config (nothing else, nothing unbounded), and the tiers the release's key
attested (another key's statement, or none, gives no tiers). A registry that answers other
bytes for the adopted digest is a real server on 127.0.0.1 (hostile_registry.py)."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from ngc_builder.pipeline.adopt import published_labels, published_validation
from ngc_builder.publish.attest import ENVELOPE_TYPE, attest_image, attestation_tag
from ngc_builder.services.registry import HttpRegistry, Manifest
from tests.unit.publish.test_attest import IMAGE, MADE, key
from tests.unit.publish.test_signing import Blobs
from tests.unit.services.hostile_registry import digest_of, serve_blob, serve_manifest

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


def test_a_config_that_is_not_json_or_an_unknown_image_gives_no_labels() -> None:
    registry = Blobs()
    assert published_labels(registry, "pytorch", image_with(registry, {}, b"not json")) == {}
    assert published_labels(registry, "pytorch", "sha256:" + "0" * 64) == {}



def served(framework: str) -> tuple[str, bytes, str]:
    """An image labelled `framework` on the hostile registry: its digest, its manifest's
    bytes, its config's digest."""
    config = json.dumps({"config": {"Labels": {"org.ngc-builder.framework": framework}}}
                        ).encode()
    body = json.dumps({"schemaVersion": 2, "config": {"digest": digest_of(config)}}).encode()
    serve_blob("pytorch", digest_of(config), config)
    serve_manifest("pytorch", digest_of(body), body, "application/json")
    return digest_of(body), body, digest_of(config)


def test_bytes_that_are_not_the_adopted_digests_give_no_labels(liar: HttpRegistry) -> None:
    """The registry answers another image's manifest for the adopted digest (naming the digest
    asked for), or another config for its config's digest: no forged label is recorded."""
    digest, _, config = served("pytorch")
    assert published_labels(liar, "pytorch", digest) == {"org.ngc-builder.framework": "pytorch"}
    _, forged, _ = served("forged")
    serve_manifest("pytorch", digest, forged, "application/json", digest=digest)
    assert published_labels(liar, "pytorch", digest) == {}
    digest, _, config = served("pytorch")
    serve_blob("pytorch", config, json.dumps(
        {"config": {"Labels": {"org.ngc-builder.framework": "forged"}}}).encode())
    assert published_labels(liar, "pytorch", digest) == {}


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


def test_the_verdict_is_the_one_the_release_key_attested(tmp_path: Path) -> None:
    ours = key(tmp_path / "ours")
    registry = Blobs()
    attest_image(registry, "pytorch", dataclasses.replace(MADE, verdict="fail"), ours)
    adopted = published_validation(registry, "pytorch", IMAGE, ours.private.public_key())
    assert adopted.verdict == "fail"  # never recorded as a pass it was not


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
