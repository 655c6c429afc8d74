"""The registry's HTTP API v2, against a tiny real HTTP server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Iterator
from typing import ClassVar

import pytest

from ngc_builder.services.registry import (
    MANIFEST_TYPES,
    HttpRegistry,
    RegistryError,
    parse_registry,
    split_registry,
)
from ngc_builder.services.retry import RetryPolicy
from tests.unit.services.http_server import QuietHandler, serving

pytestmark = pytest.mark.unit

DIGEST = "sha256:" + "0f" * 32
MANIFESTS = {("jax", "26.11-py3"): DIGEST, ("team/jax", "26.11-py3"): "sha256:" + "1e" * 32}
TAGS = {"jax": ["26.10-py3", "26.11-py3"], "empty": []}


class FakeRegistry(QuietHandler):
    """HEAD /v2/<name>/manifests/<tag>, GET /v2/<name>/tags/list, GET /v2/."""

    seen: ClassVar[list[tuple[str, str, str | None]]] = []



    def do_HEAD(self) -> None:
        self.seen.append(("HEAD", self.path, self.headers.get("Accept")))
        path = self.path.removeprefix("/v2/")
        name, _, tag = path.partition("/manifests/")
        if name == "broken":
            self.answer(500)
        elif name == "flaky" and sum(1 for seen in self.seen if "/flaky/" in seen[1]) <= 2:
            self.answer(503)  # the first two calls fail, the third is answered
        elif name == "flaky":
            self.answer(200, headers={"Docker-Content-Digest": DIGEST})
        elif name == "busy":
            self.answer(429)
        elif name == "private":
            self.answer(401, headers={"WWW-Authenticate": 'Basic realm="test"'})
        elif (name, tag) in MANIFESTS:
            self.answer(200, headers={"Docker-Content-Digest": MANIFESTS[(name, tag)]})
        else:
            self.answer(404)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, self.headers.get("Accept")))
        if self.path == "/v2/":
            self.answer(200, b"{}", {"Content-Type": "application/json"})
            return
        name = self.path.removeprefix("/v2/").removesuffix("/tags/list")
        if name == "broken":
            self.answer(503)
        elif name in TAGS:
            body = json.dumps({"name": name, "tags": TAGS[name] or None}).encode()
            self.answer(200, body, {"Content-Type": "application/json"})
        else:
            self.answer(404, b'{"errors": [{"code": "NAME_UNKNOWN"}]}')


@pytest.fixture
def server() -> Iterator[str]:
    """'127.0.0.1:<port>' of a running fake registry."""
    FakeRegistry.seen.clear()
    with serving(FakeRegistry) as address:
        yield address


@pytest.fixture
def closed_port() -> str:
    """A loopback address nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # No insecure override, and no proxy between the client and the loopback server.
    for name in ("NGC_REGISTRY_INSECURE", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def reg(address: str, said: list[str] | None = None) -> HttpRegistry:
    """The registry at `address`, with a short timeout and quick retries for a test."""
    retry = RetryPolicy(attempts=3, first_wait=0.01, say=(said if said is not None else []
                                                          ).append)
    return dataclasses.replace(parse_registry(address), timeout=5, retry=retry)


# --- naming ------------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "expected"), [
    ("localhost:5000", ("localhost:5000", "")),
    ("localhost:5000/team", ("localhost:5000", "team")),
    ("registry.example.com/org/team", ("registry.example.com", "org/team")),
    ("nvcr.io", ("nvcr.io", "")),
])
def test_split_registry(given: str, expected: tuple[str, str]) -> None:
    assert split_registry(given) == expected


@pytest.mark.parametrize(("host", "expected"), [
    ("localhost:5000", "http://localhost:5000/v2"),
    ("127.0.0.1:5000", "http://127.0.0.1:5000/v2"),
    ("localhost", "http://localhost/v2"),
    ("registry.example.com", "https://registry.example.com/v2"),
    ("registry.example.com:5000", "https://registry.example.com:5000/v2"),
    ("localhost.example.com:5000", "https://localhost.example.com:5000/v2"),
])
def test_base_url_loopback_is_http_others_https(host: str, expected: str) -> None:
    assert parse_registry(host).base_url == expected


def test_base_url_insecure_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_REGISTRY_INSECURE", "1")
    assert parse_registry("registry.lan:5000").base_url == "http://registry.lan:5000/v2"
    monkeypatch.setenv("NGC_REGISTRY_INSECURE", "0")
    assert parse_registry("registry.lan:5000").base_url == "https://registry.lan:5000/v2"


# --- against the server ------------------------------------------------------------------


def test_manifest_digest_reads_the_header(server: str) -> None:
    assert reg(server).manifest_digest("jax", "26.11-py3") == DIGEST
    method, path, accept = FakeRegistry.seen[-1]
    assert (method, path) == ("HEAD", "/v2/jax/manifests/26.11-py3")
    assert accept == MANIFEST_TYPES
    assert "application/vnd.oci.image.index.v1+json" in (accept or "")


def test_manifest_digest_with_a_namespace(server: str) -> None:
    assert reg(f"{server}/team").manifest_digest("jax", "26.11-py3") == MANIFESTS[
        ("team/jax", "26.11-py3")]
    assert FakeRegistry.seen[-1][1] == "/v2/team/jax/manifests/26.11-py3"


def test_manifest_digest_unknown_is_none(server: str) -> None:
    assert reg(server).manifest_digest("jax", "99.01-py3") is None
    assert reg(server).manifest_digest("pytorch", "26.11-py3") is None


def test_manifest_digest_server_error_raises_after_bounded_retries(server: str) -> None:
    said: list[str] = []
    with pytest.raises(RegistryError, match=r"HTTP 500 \(gave up after 3 attempts\)"):
        reg(server, said).manifest_digest("broken", "26.11-py3")
    assert len(said) == 2 and all("failed (" in line and "HTTP 500" in line for line in said)


def test_a_transient_failure_is_retried_and_said(server: str) -> None:
    said: list[str] = []
    assert reg(server, said).manifest_digest("flaky", "26.11-py3") == DIGEST
    assert [line.split(": attempt ")[1][:12] for line in said] == ["1 of 3 faile",
                                                                  "2 of 3 faile"]
    assert all("HTTP 503" in line for line in said)


def test_429_is_retried_but_401_and_404_are_not(server: str) -> None:
    said: list[str] = []
    with pytest.raises(RegistryError, match="HTTP 429"):
        reg(server, said).manifest_digest("busy", "26.11-py3")
    assert len(said) == 2
    said.clear()
    with pytest.raises(RegistryError, match=f"needs credentials: run `docker login {server}`"):
        reg(server, said).manifest_digest("private", "26.11-py3")
    assert reg(server, said).manifest_digest("jax", "99.01-py3") is None
    assert said == []


def test_list_tags(server: str) -> None:
    assert reg(server).list_tags("jax") == ["26.10-py3", "26.11-py3"]
    assert FakeRegistry.seen[-1][:2] == ("GET", "/v2/jax/tags/list")


def test_list_tags_null_and_unknown_are_empty(server: str) -> None:
    assert reg(server).list_tags("empty") == []  # the registry answers "tags": null
    assert reg(server).list_tags("nothing-here") == []


def test_list_tags_server_error_raises(server: str) -> None:
    with pytest.raises(RegistryError, match="HTTP 503"):
        reg(server).list_tags("broken")


def test_is_up(server: str, closed_port: str) -> None:
    assert reg(server).is_up() is True
    assert reg(f"{server}/team").is_up() is True
    assert reg(closed_port).is_up() is False


def test_connection_failure_raises_registry_error(closed_port: str) -> None:
    with pytest.raises(RegistryError, match=closed_port) as caught:
        reg(closed_port).manifest_digest("jax", "26.11-py3")
    assert "ConnectionError" in str(caught.value)
    with pytest.raises(RegistryError):
        reg(closed_port).list_tags("jax")


@pytest.mark.parametrize("bad", [
    "localhost:99999", "localhost:0", "Registry.Example.com", "host/", "a" * 300,
    "https://registry.example.com", "host:5000/Team",
])
def test_a_bad_address_is_refused_once_at_parse_time(bad: str) -> None:
    # The message says what is wrong: the grammar, the port's range or the length.
    with pytest.raises(ValueError, match=r"host\[:port\]\[/namespace\]|out of range \(1-65535\)"
                       r"|at most 255"):
        parse_registry(bad)


def test_the_address_names_repositories_and_urls() -> None:
    parsed = parse_registry("registry.example.com:5000/org/team")
    assert parsed.address == "registry.example.com:5000/org/team"
    assert (parsed.host, parsed.namespace, parsed.scheme) == (
        "registry.example.com:5000", "org/team", "https")
    assert parsed.url("jax", "tags", "list") == (
        "https://registry.example.com:5000/v2/org/team/jax/tags/list")
    assert parse_registry("127.0.0.1:5000").url("jax", "manifests", "x") == (
        "http://127.0.0.1:5000/v2/jax/manifests/x")


def test_insecure_is_read_once_when_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_REGISTRY_INSECURE", "1")
    parsed = parse_registry("registry.lan:5000")
    monkeypatch.delenv("NGC_REGISTRY_INSECURE")
    assert parsed.scheme == "http"
    assert parse_registry("registry.lan:5000", insecure=False).scheme == "https"
