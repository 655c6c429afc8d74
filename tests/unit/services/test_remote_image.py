"""An image's labels read from a registry without a layer: references parsed as Docker reads
them, a manifest list resolved to linux/amd64, the config blob the only blob read."""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import dataclass, field

import pytest

from ngc_builder.services.registry import Manifest
from ngc_builder.services.remote_image import (
    BadReference,
    ImageNotFound,
    ImageRef,
    parse_ref,
    read_image,
)

pytestmark = pytest.mark.unit

DIGEST = "sha256:" + "ab" * 32
DOCKER_V2 = "application/vnd.docker.distribution.manifest.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


@pytest.mark.parametrize(("text", "expected"), [
    ("localhost:5000/jax:26.11-py3", ImageRef("localhost:5000", "jax", "26.11-py3")),
    ("registry.example.com/team/jax", ImageRef("registry.example.com", "team/jax", "latest")),
    (f"127.0.0.1:5000/a/b@{DIGEST}", ImageRef("127.0.0.1:5000", "a/b", DIGEST)),
    ("localhost/jax:1", ImageRef("localhost", "jax", "1")),
])
def test_references_are_read_as_docker_reads_them(text: str, expected: ImageRef) -> None:
    assert parse_ref(text) == expected
    assert str(parse_ref(text)).startswith(text.split("@")[0].rsplit(":", 1)[0])


@pytest.mark.parametrize(("text", "why"), [
    ("jax:26.11-py3", "name the registry"),  # Docker would go to Docker Hub: not guessed
    ("team/jax:1", "name the registry"),
    ("localhost:5000/jax@sha256:abc", "64 lowercase hex"),
    ("localhost:5000/Jax:1", "not a valid image reference"),
    ("localhost:5000/jax:-bad", "not a valid tag"),
    ("localhost:99999/jax:1", "not a valid image reference"),
])
def test_bad_references_say_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(BadReference, match=why):
        parse_ref(text)


def blob_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class FakeReader:
    """Manifests by (repository, reference) and blobs by digest; remembers what was read."""

    manifests: dict[tuple[str, str], Manifest] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    blobs_read: list[str] = field(default_factory=list)

    def get_manifest(self, name: str, reference: str) -> Manifest | None:
        return self.manifests.get((name, reference))

    def get_blob(self, name: str, digest: str) -> bytes:
        self.blobs_read.append(digest)
        return self.blobs[digest]

    def image(self, path: str, reference: str, labels: dict[str, str] | None,
              platform: str = "linux/amd64") -> Manifest:
        os_name, architecture = platform.split("/")
        config = json.dumps({"architecture": architecture, "os": os_name,
                             "config": {"Labels": labels}}).encode()
        self.blobs[blob_digest(config)] = config
        body = json.dumps({"schemaVersion": 2, "mediaType": DOCKER_V2,
                           "config": {"digest": blob_digest(config), "size": len(config)},
                           "layers": [{"digest": "sha256:" + "11" * 32, "size": 9 << 30}]}
                          ).encode()
        manifest = Manifest(body, DOCKER_V2, blob_digest(body))
        self.manifests[(path, reference)] = self.manifests[(path, manifest.digest)] = manifest
        return manifest


@pytest.fixture(autouse=True)
def an_amd64_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test reads as an x86_64 host would, whatever machine runs it."""
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")


def test_labels_come_from_the_config_blob_and_no_layer_is_read() -> None:
    reader = FakeReader()
    manifest = reader.image("team/jax", "26.11-py3", {"org.ngc-builder.min-driver": "580"})
    image = read_image(reader, parse_ref("localhost:5000/team/jax:26.11-py3"))
    assert image.labels == {"org.ngc-builder.min-driver": "580"}
    assert (image.digest, image.platform) == (manifest.digest, "linux/amd64")
    config = json.loads(manifest.body)["config"]["digest"]
    assert reader.blobs_read == [config]


def test_an_image_without_labels_has_none() -> None:
    reader = FakeReader()
    reader.image("base", "1", None)
    assert read_image(reader, parse_ref("localhost:5000/base:1")).labels == {}


def index(entries: list[tuple[str, str, str]]) -> Manifest:
    body = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"digest": digest, "mediaType": DOCKER_V2, "size": 1,
         "platform": {"os": os_name, "architecture": arch}}
        for os_name, arch, digest in entries]}).encode()
    return Manifest(body, OCI_INDEX, blob_digest(body))


def test_a_multi_platform_image_is_read_for_this_hosts_platform(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reader = FakeReader()
    arm = reader.image("jax", "arm", {"which": "arm64"}, "linux/arm64")
    amd = reader.image("jax", "amd", {"which": "amd64"})
    reader.manifests[("jax", "26.11-py3")] = index([("unknown", "unknown", "sha256:" + "0" * 64),
                                                    ("linux", "arm64", arm.digest),
                                                    ("linux", "amd64", amd.digest)])
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    image = read_image(reader, parse_ref("localhost:5000/jax:26.11-py3"))
    assert image.labels == {"which": "amd64"} and image.digest == amd.digest
    assert image.platform == "linux/amd64"
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")  # a Grace node
    image = read_image(reader, parse_ref("localhost:5000/jax:26.11-py3"))
    assert image.labels == {"which": "arm64"} and image.platform == "linux/arm64"


def test_a_one_platform_image_for_another_machine_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reader = FakeReader()
    reader.image("jax", "1", {}, "linux/arm64")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    with pytest.raises(ImageNotFound, match=r"a linux/arm64 image only; this host is "
                                            r"linux/amd64"):
        read_image(reader, parse_ref("localhost:5000/jax:1"))
    assert read_image(reader, parse_ref("localhost:5000/jax:1"), "linux/arm64").labels == {}


def test_an_index_without_linux_amd64_names_what_it_offers() -> None:
    reader = FakeReader()
    arm = reader.image("jax", "arm", {})
    reader.manifests[("jax", "1")] = index([("linux", "arm64", arm.digest)])
    with pytest.raises(ImageNotFound, match=r"no linux/amd64 image in its index \(this host's "
                                            r"platform; it offers linux/arm64\)"):
        read_image(reader, parse_ref("localhost:5000/jax:1"))
    assert reader.blobs_read == []


def test_a_missing_tag_is_image_not_found() -> None:
    with pytest.raises(ImageNotFound, match="localhost:5000/jax:nope: the registry has no"):
        read_image(FakeReader(), parse_ref("localhost:5000/jax:nope"))
