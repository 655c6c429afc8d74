"""Signatures where cosign puts them: one layer per signature under `sha256-<hex>.sig`, other
keys' kept, the same key's not repeated, and a signature of another digest not counted."""

from __future__ import annotations

import hashlib
import json

import pytest

from ngc_builder.publish.cosign_keys import KEY_FILE, SigningKey, decrypt, write_key_pair
from ngc_builder.publish.signing import (
    PAYLOAD_TYPE,
    SIGNATURE_ANNOTATION,
    payload,
    sign_image,
    signature_problem,
    signature_tag,
)
from ngc_builder.services.registry import Manifest

pytestmark = pytest.mark.unit
IMAGE = "sha256:" + "ab" * 32


class Blobs:
    """A registry of manifests and blobs held as they were put (what signing needs of one)."""

    address = "registry.example:5000/ngc"

    def __init__(self) -> None:
        self.manifests: dict[tuple[str, str], Manifest] = {}
        self.blobs: dict[str, bytes] = {}

    def put_blob(self, name: str, data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.blobs[digest] = data
        return digest

    def get_blob(self, name: str, digest: str) -> bytes:
        return self.blobs[digest]

    def put_manifest(self, name: str, tag: str, manifest: Manifest) -> str:
        self.manifests[(name, tag)] = manifest
        return manifest.digest

    def get_manifest(self, name: str, reference: str) -> Manifest | None:
        return self.manifests.get((name, reference))

    def manifest_digest(self, name: str, reference: str) -> str | None:
        found = self.manifests.get((name, reference))
        return None if found is None else found.digest

    def list_tags(self, name: str) -> list[str]:
        return sorted(tag for (held, tag) in self.manifests if held == name)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> list[SigningKey]:
    made = []
    for name in ("ours", "theirs"):
        folder = tmp_path_factory.mktemp(name)
        write_key_pair(folder, b"")
        made.append(SigningKey(decrypt((folder / KEY_FILE).read_text(), b"", name), name))
    return made


def layers(registry: Blobs) -> list[dict[str, object]]:
    body = registry.manifests[("pytorch", signature_tag(IMAGE))].body
    found: list[dict[str, object]] = json.loads(body)["layers"]
    return found


def test_the_layout_is_cosigns(keys: list[SigningKey]) -> None:
    registry = Blobs()
    assert sign_image(registry, "pytorch", IMAGE, keys[0]) == f"sha256-{'ab' * 32}.sig"
    [layer] = layers(registry)
    assert layer["mediaType"] == PAYLOAD_TYPE
    body = registry.blobs[str(layer["digest"])]
    assert body == payload("registry.example:5000/ngc/pytorch", IMAGE)
    assert json.loads(body)["critical"]["type"] == "cosign container image signature"
    assert SIGNATURE_ANNOTATION in layer["annotations"]  # type: ignore[operator]
    assert signature_problem(registry, "pytorch", IMAGE, keys[0].private.public_key()) is None


def test_other_keys_are_kept_and_the_same_key_is_not_repeated(keys: list[SigningKey]) -> None:
    registry = Blobs()
    sign_image(registry, "pytorch", IMAGE, keys[1])
    sign_image(registry, "pytorch", IMAGE, keys[0])
    sign_image(registry, "pytorch", IMAGE, keys[0])
    assert len(layers(registry)) == 2
    for key in keys:
        assert signature_problem(registry, "pytorch", IMAGE, key.private.public_key()) is None


def test_a_signature_of_another_digest_or_a_forged_one_does_not_count(
        keys: list[SigningKey]) -> None:
    registry = Blobs()
    other = "sha256:" + "cd" * 32
    sign_image(registry, "pytorch", other, keys[0])
    # the other image's signature layer copied under this image's tag
    registry.manifests[("pytorch", signature_tag(IMAGE))] = \
        registry.manifests[("pytorch", signature_tag(other))]
    public = keys[0].private.public_key()
    assert signature_problem(registry, "pytorch", IMAGE, public) == (
        f"{signature_tag(IMAGE)} holds no signature of this image by the release's key")
    assert signature_problem(registry, "pytorch", "sha256:" + "ef" * 32, public) == (
        f"not signed: no {signature_tag('sha256:' + 'ef' * 32)}")
