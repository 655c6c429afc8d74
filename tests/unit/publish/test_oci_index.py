"""The index over a tag's platforms: written only over manifests the registry holds in that
repository, each one image whose config says the platform its entry claims. A registry that
lies about the bytes of a digest is met by a real server on 127.0.0.1 (hostile_registry.py)."""

from __future__ import annotations

import json

import pytest

from ngc_builder.publish.oci_index import INDEX, PlatformImage, index_of, platforms_of, push_index
from ngc_builder.publish.tags import content_digest
from ngc_builder.services.registry import HttpRegistry, Manifest, RegistryError
from tests.unit.fake_engine import TableRegistry
from tests.unit.services.hostile_registry import (
    HostileRegistry,
    Huge,
    serve_blob,
    serve_manifest,
)

pytestmark = pytest.mark.unit

IMAGE = "application/vnd.oci.image.manifest.v1+json"


def held(registry: TableRegistry, architecture: str, name: str = "jax") -> str:
    """An image manifest for `architecture` in the registry; its digest."""
    config = json.dumps({"os": "linux", "architecture": architecture}).encode()
    registry.blobs[(name, content_digest(config))] = config
    body = json.dumps({"schemaVersion": 2, "mediaType": IMAGE, "layers": [],
                       "config": {"digest": content_digest(config), "size": len(config)}}
                      ).encode()
    digest = content_digest(body)
    registry.manifests[f"{name}@{digest}"] = Manifest(body, IMAGE, digest)
    return digest


def test_the_index_lists_each_platform_with_its_manifest() -> None:
    registry = TableRegistry()
    amd64, arm64 = held(registry, "amd64"), held(registry, "arm64")
    digest = push_index(registry, "jax", "26.11-py3", [PlatformImage("linux/arm64", arm64),
                                                      PlatformImage("linux/amd64", amd64)])
    assert registry.tags[("jax", "26.11-py3")] == digest
    index = index_of(registry, "jax", [PlatformImage("linux/amd64", amd64),
                                       PlatformImage("linux/arm64", arm64)])
    assert index.digest == digest and index.media_type == INDEX
    entries = json.loads(index.body)["manifests"]
    assert [(e["platform"]["architecture"], e["digest"]) for e in entries] == [
        ("amd64", amd64), ("arm64", arm64)]
    registry.manifests[f"jax@{digest}"] = index
    assert platforms_of(registry, "jax", digest) == {"linux/amd64": amd64,
                                                     "linux/arm64": arm64}


def test_an_amd64_image_claimed_as_arm64_leaves_no_index() -> None:
    registry = TableRegistry()
    amd64 = held(registry, "amd64")
    with pytest.raises(RegistryError, match="is a linux/amd64 image, not linux/arm64"):
        push_index(registry, "jax", "26.11-py3", [PlatformImage("linux/arm64", amd64)])
    assert ("jax", "26.11-py3") not in registry.tags


def test_a_manifest_of_another_repository_or_none_is_refused() -> None:
    registry = TableRegistry()
    other = held(registry, "arm64", name="pytorch")
    with pytest.raises(RegistryError, match="is not in the registry"):
        index_of(registry, "jax", [PlatformImage("linux/arm64", other)])


def test_an_index_inside_an_index_is_refused() -> None:
    registry = TableRegistry()
    amd64 = held(registry, "amd64")
    inner = index_of(registry, "jax", [PlatformImage("linux/amd64", amd64)])
    registry.manifests[f"jax@{inner.digest}"] = inner
    with pytest.raises(RegistryError, match="is not one image"):
        index_of(registry, "jax", [PlatformImage("linux/amd64", inner.digest)])


def test_each_platform_once() -> None:
    registry = TableRegistry()
    amd64 = held(registry, "amd64")
    with pytest.raises(RegistryError, match="each platform once"):
        index_of(registry, "jax", [PlatformImage("linux/amd64", amd64)] * 2)


def _answered_index(registry: TableRegistry, entries: object) -> str:
    """The registry answers an index whose body is `entries`, as a hostile one may."""
    body = json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": entries}).encode()
    digest = content_digest(body)
    registry.manifests[f"jax@{digest}"] = Manifest(body, INDEX, digest)
    return digest


@pytest.mark.parametrize("entries", [
    # A digest that would reach a pull URL as a path.
    [{"digest": "../../v2/_catalog", "platform": {"os": "linux", "architecture": "arm64"}}],
    [{"digest": "sha256:" + "0" * 64}],  # no platform
    [{"digest": "sha256:" + "0" * 64, "platform": {"os": ["linux"], "architecture": "x"}}],
    "not a list of entries",
    [None],
])
def test_an_index_the_registry_answers_is_read_only_when_every_entry_is_sound(
        entries: object) -> None:
    registry = TableRegistry()
    digest = _answered_index(registry, entries)
    with pytest.raises(RegistryError, match=f"jax@{digest}: not an index we can read"):
        platforms_of(registry, "jax", digest)



def served(architecture: str, config: bytes | None = None) -> tuple[str, bytes]:
    """An image manifest for `architecture` on the hostile registry (its config served as
    `config` if given); its digest and bytes."""
    right = json.dumps({"os": "linux", "architecture": architecture}).encode()
    body = json.dumps({"schemaVersion": 2, "mediaType": IMAGE, "layers": [],
                       "config": {"digest": content_digest(right), "size": len(right)}}
                      ).encode()
    serve_blob("jax", content_digest(right), right if config is None else config)
    serve_manifest("jax", content_digest(body), body, IMAGE)
    return content_digest(body), body


def test_another_manifests_bytes_for_a_digest_never_reach_the_index(
        liar: HttpRegistry) -> None:
    """The amd64 image's digest claimed as arm64: the registry answers the arm64 image's
    bytes for it (and names the digest asked for), so its config says arm64. The index would
    send Grace nodes the amd64 image; the registry service refuses the bytes instead."""
    amd64, _ = served("amd64")
    _, arm64_body = served("arm64")
    serve_manifest("jax", amd64, arm64_body, IMAGE, digest=amd64)
    with pytest.raises(RegistryError, match=f"/v2/jax/manifests/{amd64}: the registry "
                       "answered bytes whose digest is sha256:"):
        index_of(liar, "jax", [PlatformImage("linux/arm64", amd64)])


def test_a_config_that_is_not_the_one_named_is_refused(liar: HttpRegistry) -> None:
    arm64, _ = served("arm64", config=b'{"os": "linux", "architecture": "arm64", "x": 1}')
    with pytest.raises(RegistryError, match="the blob received does not match its digest"):
        index_of(liar, "jax", [PlatformImage("linux/arm64", arm64)])
    assert index_of(liar, "jax", [PlatformImage("linux/arm64", served("arm64")[0])])


def test_a_huge_config_is_refused_before_it_is_read_whole(liar: HttpRegistry) -> None:
    arm64, body = served("arm64")
    config = json.loads(body)["config"]["digest"]
    huge = HostileRegistry.huge[f"/v2/jax/blobs/{config}"] = Huge(64 * 1024 * 1024, False)
    with pytest.raises(RegistryError, match="a blob of more than 16 MiB"):
        index_of(liar, "jax", [PlatformImage("linux/arm64", arm64)])
    assert huge.done.wait(10) and huge.sent < 32 * 1024 * 1024


def test_a_manifest_naming_a_config_that_is_no_digest_is_refused(liar: HttpRegistry) -> None:
    body = json.dumps({"schemaVersion": 2, "mediaType": IMAGE, "layers": [],
                       "config": {"digest": "../../secret", "size": 1}}).encode()
    serve_manifest("jax", content_digest(body), body, IMAGE)
    with pytest.raises(RegistryError, match=r"'\.\./\.\./secret' is not a sha256 digest"):
        index_of(liar, "jax", [PlatformImage("linux/arm64", content_digest(body))])
    assert not [path for path in HostileRegistry.seen if "secret" in path]
