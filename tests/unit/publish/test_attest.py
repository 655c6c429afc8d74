"""The provenance statement and its DSSE envelope: what it names, what is signed (DSSE's
pre-authentication encoding), and that only the release key's statement of this digest
counts."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from ngc_builder.publish.attest import (
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    Provenance,
    attest_image,
    attestation_problem,
    attestation_tag,
    envelope,
    pae,
    statement,
)
from ngc_builder.publish.cosign_keys import KEY_FILE, SigningKey, decrypt, verifies, write_key_pair
from tests.unit.publish.test_signing import Blobs

pytestmark = pytest.mark.unit
IMAGE = "sha256:" + "ab" * 32
MADE = Provenance("registry.example:5000/ngc/pytorch", IMAGE, "11" * 32, "22" * 32, "3" * 40,
                  "https://git.example/ml/ngc.git", "0.1.0",
                  "registry.example:5000/ngc/cuda-cu13@sha256:" + "44" * 32, "pass",
                  {"T0": "pass", "T2": "pass"}, "2026-11-26T10:00:00Z", "2026-11-26T10:30:00Z")


def key(folder: Path) -> SigningKey:
    write_key_pair(folder, b"")
    return SigningKey(decrypt((folder / KEY_FILE).read_text(), b"", "k"), "k")


def test_the_statement_names_what_the_image_was_made_from_and_passed() -> None:
    document = statement(MADE)
    assert document["predicateType"] == PREDICATE_TYPE
    assert document["subject"] == [{"name": MADE.repository, "digest": {"sha256": "ab" * 32}}]
    dependencies = document["predicate"]["buildDefinition"]["resolvedDependencies"]
    assert {"uri": "git+https://git.example/ml/ngc.git", "digest": {"gitCommit": "3" * 40}} \
        in dependencies
    assert {"name": "manifest", "digest": {"sha256": "11" * 32}} in dependencies
    assert {"name": "lock", "digest": {"sha256": "22" * 32}} in dependencies
    assert {"uri": "oci://registry.example:5000/ngc/cuda-cu13",
            "digest": {"sha256": "44" * 32}} in dependencies
    run = document["predicate"]["runDetails"]
    assert run["builder"]["version"] == {"ngc-builder": "0.1.0"}
    assert run["byproducts"][0]["annotations"] == {"verdict": "pass", "T0": "pass",
                                                   "T2": "pass"}


def test_the_envelope_signs_the_pre_authentication_encoding(tmp_path: Path) -> None:
    signer = key(tmp_path)
    sealed = json.loads(envelope(statement(MADE), signer))
    body = base64.b64decode(sealed["payload"])
    assert pae(STATEMENT_TYPE, body).startswith(
        f"DSSEv1 {len(STATEMENT_TYPE)} {STATEMENT_TYPE} {len(body)} ".encode())
    assert verifies(signer.private.public_key(), pae(STATEMENT_TYPE, body),
                    sealed["signatures"][0]["sig"])
    assert not verifies(signer.private.public_key(), body, sealed["signatures"][0]["sig"])


def test_only_the_release_keys_statement_of_this_digest_counts(tmp_path: Path) -> None:
    ours, theirs = key(tmp_path / "ours"), key(tmp_path / "theirs")
    registry = Blobs()
    assert attest_image(registry, "pytorch", MADE, theirs) == attestation_tag(IMAGE)
    assert attestation_problem(registry, "pytorch", IMAGE, ours.private.public_key()) == (
        f"no provenance of this image by the release's key at {attestation_tag(IMAGE)}")
    attest_image(registry, "pytorch", MADE, ours)
    attest_image(registry, "pytorch", MADE, ours)  # a rerun adds none
    layers = json.loads(registry.manifests[("pytorch", attestation_tag(IMAGE))].body)["layers"]
    assert len(layers) == 2
    assert attestation_problem(registry, "pytorch", IMAGE, ours.private.public_key()) is None
