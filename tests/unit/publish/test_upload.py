"""Pushing through the registry API: a fake engine exports images as `docker save` does (the
classic layout and the OCI one) to a small real HTTP registry; the pushed blobs are read back
and gunzipped to their diff IDs, as any client pulling them would."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from ngc_builder.publish.layer_memo import LayerMemo
from ngc_builder.publish.upload import SMALL, upload_image
from ngc_builder.services.registry import HttpRegistry, RegistryError, parse_registry
from ngc_builder.services.retry import RetryPolicy
from tests.unit.services.http_server import QuietHandler, serving

pytestmark = pytest.mark.unit
BLOB = re.compile(r"/v2/(?P<name>.+)/blobs/(?P<digest>sha256:[0-9a-f]{64})")
MANIFEST = re.compile(r"/v2/(?P<name>.+)/manifests/(?P<ref>[^/]+)")


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class MiniRegistry(QuietHandler):
    """Blobs, chunked uploads, cross-repository mounts and manifests, in memory."""

    blobs: ClassVar[dict[tuple[str, str], bytes]] = {}
    manifests: ClassVar[dict[tuple[str, str], bytes]] = {}
    uploads: ClassVar[dict[str, bytearray]] = {}
    mounts: ClassVar[list[str]] = []

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding") != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        data = bytearray()
        while size := int(self.rfile.readline().split(b";")[0], 16):
            data += self.rfile.read(size)
            self.rfile.readline()
        self.rfile.readline()
        return bytes(data)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if blob := BLOB.fullmatch(self.path):
            body = self.blobs.get((blob["name"], blob["digest"]))
        elif manifest := MANIFEST.fullmatch(self.path):
            body = self._manifest(manifest["name"], manifest["ref"])
        else:
            body = b"{}" if self.path == "/v2/" else None
        headers = {"Docker-Content-Digest": sha(body)} if body is not None else {}
        self.answer(404 if body is None else 200, body or b"", headers)

    def _manifest(self, name: str, ref: str) -> bytes | None:
        if ref.startswith("sha256:"):
            return next((b for (n, _), b in self.manifests.items() if n == name
                         and sha(b) == ref), None)
        return self.manifests.get((name, ref))

    def do_POST(self) -> None:
        url = urlparse(self.path)
        name = url.path.removeprefix("/v2/").removesuffix("/blobs/uploads/")
        query = parse_qs(url.query)
        if "mount" in query and (query["from"][0], query["mount"][0]) in self.blobs:
            self.mounts.append(query["mount"][0])
            self.blobs[(name, query["mount"][0])] = self.blobs[(query["from"][0],
                                                               query["mount"][0])]
            self.answer(201)
            return
        upload = str(len(self.uploads))
        self.uploads[upload] = bytearray()
        self.answer(202, headers={"Location": f"/upload/{name}/{upload}"})

    def do_PATCH(self) -> None:
        self.uploads[self.path.rpartition("/")[2]] += self._body()
        self.answer(202, headers={"Location": self.path})

    def do_DELETE(self) -> None:
        self.answer(204)

    def do_PUT(self) -> None:
        url = urlparse(self.path)
        body = self._body()
        if manifest := MANIFEST.fullmatch(url.path):
            self.manifests[(manifest["name"], manifest["ref"])] = body
            self.answer(201, headers={"Docker-Content-Digest": sha(body)})
            return
        name, _, upload = url.path.removeprefix("/upload/").rpartition("/")
        data = bytes(self.uploads.pop(upload)) + body
        digest = parse_qs(url.query)["digest"][0]
        if sha(data) != digest:
            self.answer(400, b'{"errors": [{"code": "DIGEST_INVALID"}]}')
            return
        self.blobs[(name, digest)] = data
        self.answer(201, headers={"Docker-Content-Digest": digest})


@dataclasses.dataclass
class Image:
    layers: list[bytes]
    config: bytes = b""

    def __post_init__(self) -> None:
        self.config = json.dumps({"rootfs": {"type": "layers", "diff_ids": self.diff_ids}}
                                 ).encode()

    @property
    def diff_ids(self) -> list[str]:
        return [sha(layer) for layer in self.layers]

    @property
    def id(self) -> str:
        return sha(self.config)


@dataclasses.dataclass
class ExportingEngine:
    """`inspect_image` and `get_image` of an engine holding `images`, saved in `layout`."""

    images: dict[str, Image]
    layout: str = "classic"
    exports: list[str] = dataclasses.field(default_factory=list)

    def inspect_image(self, image_id: str) -> dict[str, Any]:
        return {"Id": image_id, "RootFS": {"Layers": self.images[image_id].diff_ids}}

    def get_image(self, image_id: str) -> Iterator[bytes]:
        self.exports.append(image_id)
        data = io.BytesIO()
        image = self.images[image_id]
        with tarfile.open(fileobj=data, mode="w") as tar:
            for index, layer in enumerate(image.layers):
                name = (f"v1-{index:02d}/layer.tar" if self.layout == "classic"
                        else f"blobs/sha256/{sha(layer)[7:]}")
                _add(tar, name, layer)
            config = (f"{image_id[7:]}.json" if self.layout == "classic"
                      else f"blobs/sha256/{image_id[7:]}")
            _add(tar, config, image.config)
            _add(tar, "manifest.json", b"[]")
        raw = data.getvalue()
        yield from (raw[i:i + 65536] for i in range(0, len(raw), 65536))


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


PARENT = Image([b"os " * 400_000, b"", b"cuda " * 500_000])
CHILD = Image([*PARENT.layers, b"torch " * 300_000, b"small"])


@pytest.fixture
def registry() -> Iterator[HttpRegistry]:
    for kept in (MiniRegistry.blobs, MiniRegistry.manifests, MiniRegistry.uploads):
        kept.clear()
    MiniRegistry.mounts.clear()
    with serving(MiniRegistry) as address:
        retry = RetryPolicy(attempts=1, say=lambda _: None)
        yield dataclasses.replace(parse_registry(address), timeout=5, retry=retry)


def pulled(registry: HttpRegistry, name: str, tag: str) -> list[bytes]:
    """The image's layers as a client pulling it gets them: gunzipped, checked by diff ID."""
    manifest = json.loads(MiniRegistry.manifests[(name, tag)])
    config = json.loads(MiniRegistry.blobs[(name, manifest["config"]["digest"])])
    layers = [gzip.decompress(MiniRegistry.blobs[(name, layer["digest"])])
              for layer in manifest["layers"]]
    assert [sha(layer) for layer in layers] == config["rootfs"]["diff_ids"]
    return layers


@pytest.mark.parametrize("layout", ["classic", "oci"])
def test_a_child_sends_only_its_own_layers(registry: HttpRegistry, tmp_path: Path,
                                           layout: str) -> None:
    engine = ExportingEngine({PARENT.id: PARENT, CHILD.id: CHILD}, layout)
    memo, said = LayerMemo(tmp_path / "layers.json"), list[str]()
    upload_image(engine, registry, "cuda", PARENT.id, "rc1", [], memo, said.append)
    assert len(said) == 3
    said.clear()
    digest = upload_image(engine, registry, "torch", CHILD.id, "rc1", ["cuda"], memo,
                          said.append)
    assert pulled(registry, "torch", "rc1") == CHILD.layers
    sent = sorted(line.split()[1].rstrip(":") for line in said)
    assert sent == sorted(sha(layer)[:19] for layer in CHILD.layers[3:])
    assert set(MiniRegistry.mounts) == {blob["digest"] for blob in json.loads(
        MiniRegistry.manifests[("cuda", "rc1")])["layers"]}
    assert digest == sha(MiniRegistry.manifests[("torch", "rc1")])


def test_a_repeated_push_exports_nothing_and_gives_the_same_digest(
        registry: HttpRegistry, tmp_path: Path) -> None:
    engine = ExportingEngine({PARENT.id: PARENT})
    first = upload_image(engine, registry, "cuda", PARENT.id, "rc1", [], LayerMemo(
        tmp_path / "layers.json"), lambda _: None)
    again = upload_image(engine, registry, "cuda", PARENT.id, "rc2", [], LayerMemo(
        tmp_path / "layers.json"), lambda _: None)
    assert (first, engine.exports) == (again, [PARENT.id])


def test_a_lost_memo_compresses_again_to_the_same_blobs(registry: HttpRegistry,
                                                        tmp_path: Path) -> None:
    engine = ExportingEngine({PARENT.id: PARENT})
    first = upload_image(engine, registry, "cuda", PARENT.id, "rc1", [], LayerMemo(
        tmp_path / "a.json"), lambda _: None)
    again = upload_image(engine, registry, "cuda", PARENT.id, "rc2", [], LayerMemo(
        tmp_path / "b.json"), lambda _: None)
    assert first == again


def test_a_new_layer_of_a_held_layers_size_is_still_sent(registry: HttpRegistry,
                                                         tmp_path: Path) -> None:
    twin = b"CUDA " * 500_000  # the same size as the parent's CUDA layer, other bytes
    assert len(twin) == len(PARENT.layers[2]) > SMALL
    child = Image([*PARENT.layers, twin])
    engine = ExportingEngine({PARENT.id: PARENT, child.id: child})
    memo = LayerMemo(tmp_path / "layers.json")
    upload_image(engine, registry, "cuda", PARENT.id, "rc1", [], memo, lambda _: None)
    upload_image(engine, registry, "twin", child.id, "rc1", ["cuda"], memo, lambda _: None)
    assert pulled(registry, "twin", "rc1") == child.layers
    assert engine.exports == [PARENT.id, child.id, child.id]  # read a second time, whole


def test_an_export_with_another_config_is_refused(registry: HttpRegistry,
                                                  tmp_path: Path) -> None:
    liar = Image(PARENT.layers)
    liar.config = b'{"rootfs": {}}'  # under the parent's ID: not what that ID names
    engine = ExportingEngine({PARENT.id: liar})
    with pytest.raises(RegistryError, match="another image's config"):
        upload_image(engine, registry, "cuda", PARENT.id, "rc1", [], LayerMemo(
            tmp_path / "layers.json"), lambda _: None)
    assert ("cuda", "rc1") not in MiniRegistry.manifests  # no tag for a half-done push
