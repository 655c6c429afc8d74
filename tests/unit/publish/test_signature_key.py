"""Every reader of signatures refuses another key's: an image signed (and attested) by key A
is not signed by key B, for `verify`, `check-host --key`, the adoption of a published image's
attested tiers, and the sign and attest steps (which add B's beside A's rather than taking
A's for their own). A reader that ignored the key would pass every other test."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.commands.check_host import CheckHostOptions, check_host_command
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.adopt import published_validation
from ngc_builder.plan.dag import plan_release
from ngc_builder.publish import verify
from ngc_builder.publish.attest import (
    attest_image,
    attestation_problem,
    attestation_tag,
    attested_validation,
)
from ngc_builder.publish.cosign_keys import (
    KEY_FILE,
    PUBLIC_FILE,
    SigningKey,
    decrypt,
    write_key_pair,
)
from ngc_builder.publish.signing import sign_image, signature_problem, signature_tag
from ngc_builder.services.remote_image import ImageReader, ImageRef
from tests.conftest import WriteRelease
from tests.unit.commands.test_check_host import GPU_HOST, GPU_LABELS
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import DIGEST, published
from tests.unit.publish.test_attest import MADE
from tests.unit.publish.test_signing import Blobs
from tests.unit.services.test_remote_image import FakeReader

pytestmark = pytest.mark.unit
NOT_SIGNED = f"{signature_tag(DIGEST)} holds no signature of this image by the release's key"
NOT_ATTESTED = f"no provenance of this image by the release's key at {attestation_tag(DIGEST)}"


@dataclasses.dataclass(frozen=True)
class Pair:
    key: SigningKey
    public: ec.EllipticCurvePublicKey
    public_file: Path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Pair, Pair]:
    made = []
    for name in ("a", "b"):
        folder = tmp_path_factory.mktemp(name)
        write_key_pair(folder, b"")
        key = SigningKey(decrypt((folder / KEY_FILE).read_text(), b"", name), name)
        made.append(Pair(key, key.private.public_key(), folder / PUBLIC_FILE))
    return made[0], made[1]


def signed_by(pair: Pair) -> Blobs:
    """A registry holding pytorch at DIGEST, signed and attested by `pair` only."""
    registry = Blobs()
    sign_image(registry, "pytorch", DIGEST, pair.key)
    attest_image(registry, "pytorch", dataclasses.replace(MADE, digest=DIGEST), pair.key)
    return registry


def test_verifying_a_signature_refuses_another_key(keys: tuple[Pair, Pair]) -> None:
    a, b = keys
    registry = signed_by(a)
    assert signature_problem(registry, "pytorch", DIGEST, a.public) is None
    assert signature_problem(registry, "pytorch", DIGEST, b.public) == NOT_SIGNED


def test_reading_an_attestation_refuses_another_key(keys: tuple[Pair, Pair]) -> None:
    a, b = keys
    registry = signed_by(a)
    assert attestation_problem(registry, "pytorch", DIGEST, a.public) is None
    assert attested_validation(registry, "pytorch", DIGEST, a.public) is not None
    assert attestation_problem(registry, "pytorch", DIGEST, b.public) == NOT_ATTESTED
    assert attested_validation(registry, "pytorch", DIGEST, b.public) is None


def test_adopting_takes_no_tiers_another_key_attested(keys: tuple[Pair, Pair]) -> None:
    a, b = keys
    registry = signed_by(a)
    assert published_validation(registry, "pytorch", DIGEST, a.public).tiers == MADE.tiers
    adopted = published_validation(registry, "pytorch", DIGEST, b.public)
    assert (adopted.tiers, adopted.gpu_mode) == ({}, "(published)")


def test_signing_and_attesting_again_with_another_key_add_its_own(
        keys: tuple[Pair, Pair]) -> None:
    """A's signature there is not B's: B's step pushes its own, and then B verifies."""
    a, b = keys
    registry = signed_by(a)
    sign_image(registry, "pytorch", DIGEST, b.key)
    attest_image(registry, "pytorch", dataclasses.replace(MADE, digest=DIGEST), b.key)
    for tag in (signature_tag(DIGEST), attestation_tag(DIGEST)):
        assert len(json.loads(registry.manifests[("pytorch", tag)].body)["layers"]) == 2
    assert signature_problem(registry, "pytorch", DIGEST, b.public) is None
    assert attestation_problem(registry, "pytorch", DIGEST, b.public) is None


def test_verify_names_an_image_another_key_signed(keys: tuple[Pair, Pair],
                                                  write_release: WriteRelease) -> None:
    a, b = keys
    registry = signed_by(a)
    plan = plan_release(load_release(write_release(GOOD_RELEASE)), registry)
    record = published(["pytorch"])

    def problems(public: ec.EllipticCurvePublicKey) -> dict[str, str | None]:
        checks = verify.verify_tags(plan, record, [], (public, "test"))
        return {c.tag: c.problem for c in checks if c.image == "pytorch"
                and c.tag in (signature_tag(DIGEST), attestation_tag(DIGEST))}

    assert problems(a.public) == {signature_tag(DIGEST): None, attestation_tag(DIGEST): None}
    assert problems(b.public) == {signature_tag(DIGEST): NOT_SIGNED,
                                  attestation_tag(DIGEST): NOT_ATTESTED}


def test_check_host_refuses_an_image_another_key_signed(
        keys: tuple[Pair, Pair], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = keys
    fake = FakeReader()
    image = fake.image("team/pytorch", "26.11-py3", GPU_LABELS)
    registry = Blobs()
    registry.manifests.update(fake.manifests)
    registry.blobs.update(fake.blobs)
    sign_image(registry, "team/pytorch", image.digest, a.key)

    def registry_for(ref: ImageRef) -> ImageReader:
        return registry

    ref = "localhost:5000/team/pytorch:26.11-py3"
    assert check_host_command(CheckHostOptions(ref, key=a.public_file), registry_for,
                              lambda: GPU_HOST) == 0
    capsys.readouterr()
    assert check_host_command(CheckHostOptions(ref, key=b.public_file), registry_for,
                              lambda: GPU_HOST) == 1
    err = capsys.readouterr().err
    assert "holds no signature of this image by the release's key" in err
