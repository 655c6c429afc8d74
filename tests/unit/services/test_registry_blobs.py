"""Blobs through the registry's HTTP API v2: upload (HEAD, POST, PUT ?digest=) and read back,
against a small real HTTP server on 127.0.0.1 (with Bearer tokens, as most registries ask)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from ngc_builder.services.registry import HttpRegistry, RegistryError, parse_registry
from ngc_builder.services.retry import RetryPolicy
from tests.unit.services.http_server import QuietHandler, serving

pytestmark = pytest.mark.unit
DATA = b'{"bomFormat": "CycloneDX"}'
DIGEST = "sha256:" + hashlib.sha256(DATA).hexdigest()


class BlobRegistry(QuietHandler):
    """Blobs of /v2/<name>/blobs/..., uploads at /upload/<n>?_state=s; every call but the
    token's needs `Bearer tok:<scope>`. Repository 'elsewhere' answers an upload location
    on another host, 'liar' stores what it was not given, 'rotten' serves damaged blobs."""

    blobs: ClassVar[dict[tuple[str, str], bytes]] = {}
    seen: ClassVar[list[tuple[str, str]]] = []
    scopes: ClassVar[list[str]] = []

    def _authorized(self, name: str, write: bool) -> bool:
        scope = f"repository:{name}:{'pull,push' if write else 'pull'}"
        if self.headers.get("Authorization") == f"Bearer tok:{scope}":
            return True
        address = self.server.server_address
        port = address[1] if isinstance(address, tuple) else 0
        self.answer(401, headers={"WWW-Authenticate": (
            f'Bearer realm="http://127.0.0.1:{port}/token",service="test",scope="{scope}"')})
        return False

    def _blob(self) -> tuple[str, str]:
        name, _, digest = urlparse(self.path).path.removeprefix("/v2/").partition("/blobs/")
        return name, digest

    def do_HEAD(self) -> None:
        self.seen.append(("HEAD", self.path))
        name, digest = self._blob()
        if self._authorized(name, write=True):
            self.answer(200 if (name, digest) in self.blobs else 404)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path))
        url = urlparse(self.path)
        if url.path == "/token":
            scope = parse_qs(url.query)["scope"][0]
            self.scopes.append(scope)
            self.answer(200, json.dumps({"token": f"tok:{scope}"}).encode())
            return
        name, digest = self._blob()
        if not self._authorized(name, write=False):
            return
        body = self.blobs.get((name, digest))
        if body is None:
            self.answer(404, b'{"errors": [{"code": "BLOB_UNKNOWN"}]}')
        else:
            self.answer(200, body + (b"!" if name == "rotten" else b""))

    def do_POST(self) -> None:
        self.seen.append(("POST", self.path))
        name = self.path.removeprefix("/v2/").removesuffix("/blobs/uploads/")
        if self._authorized(name, write=True):
            host = "registry.elsewhere:5000" if name == "elsewhere" else self.headers["Host"]
            where = f"http://{host}/upload/{name}?_state=s" if name != "relative" else \
                f"/upload/{name}?_state=s"
            self.answer(202, headers={"Location": where})

    def do_PUT(self) -> None:
        url = urlparse(self.path)
        self.seen.append(("PUT", self.path))
        name = url.path.removeprefix("/upload/")
        if not self._authorized(name, write=True):
            return
        data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        query = parse_qs(url.query)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if query.get("_state") != ["s"] or query.get("digest") != [digest]:
            self.answer(400, b'{"errors": [{"code": "DIGEST_INVALID"}]}')
            return
        self.blobs[(name, digest)] = data
        stored = "sha256:" + "00" * 32 if name == "liar" else digest
        self.answer(201, headers={"Docker-Content-Digest": stored})


@pytest.fixture
def server() -> Iterator[str]:
    for kept in (BlobRegistry.blobs, BlobRegistry.seen, BlobRegistry.scopes):
        kept.clear()
    with serving(BlobRegistry) as address:
        yield address


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def reg(address: str) -> HttpRegistry:
    """The registry at `address` (its tokens asked anonymously), with quick retries."""
    retry = RetryPolicy(attempts=2, first_wait=0.01, say=lambda _: None)
    return dataclasses.replace(parse_registry(address), timeout=5, retry=retry)


@pytest.mark.parametrize("name", ["jax", "relative"])
def test_a_blob_is_uploaded_then_read_back(server: str, name: str) -> None:
    registry = reg(server)
    assert registry.put_blob(name, DATA) == DIGEST
    assert BlobRegistry.blobs == {(name, DIGEST): DATA}
    assert [(method, path.partition("?")[0]) for method, path in BlobRegistry.seen
            if not path.startswith("/token")] == [
        ("HEAD", f"/v2/{name}/blobs/{DIGEST}"), ("HEAD", f"/v2/{name}/blobs/{DIGEST}"),
        ("POST", f"/v2/{name}/blobs/uploads/"), ("PUT", f"/upload/{name}")]
    assert BlobRegistry.scopes == [f"repository:{name}:pull,push"]  # one token for the upload
    assert registry.get_blob(name, DIGEST) == DATA
    assert BlobRegistry.scopes[-1] == f"repository:{name}:pull"


def test_a_blob_already_there_is_not_sent_again(server: str) -> None:
    BlobRegistry.blobs[("jax", DIGEST)] = DATA
    assert reg(server).put_blob("jax", DATA) == DIGEST
    assert [method for method, _ in BlobRegistry.seen if method != "GET"] == ["HEAD", "HEAD"]


def test_an_upload_location_on_another_host_gets_no_credentials(server: str) -> None:
    with pytest.raises(RegistryError, match=r"upload location 'http://registry\.elsewhere"):
        reg(server).put_blob("elsewhere", DATA)
    assert not [path for method, path in BlobRegistry.seen if method == "PUT"]


def test_a_registry_storing_another_digest_is_an_error(server: str) -> None:
    with pytest.raises(RegistryError, match="upload answered HTTP 201, sha256:0000"):
        reg(server).put_blob("liar", DATA)


def test_a_missing_or_damaged_blob_is_an_error(server: str) -> None:
    with pytest.raises(RegistryError, match=f"/v2/jax/blobs/{DIGEST}: HTTP 404"):
        reg(server).get_blob("jax", DIGEST)
    BlobRegistry.blobs[("rotten", DIGEST)] = DATA
    with pytest.raises(RegistryError, match="does not match its digest"):
        reg(server).get_blob("rotten", DIGEST)
