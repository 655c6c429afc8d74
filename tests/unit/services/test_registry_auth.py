"""Registry credentials from the Docker config, and the Basic and Bearer challenge flows,
against a small real HTTP registry on 127.0.0.1 (the full registries are integration tests)."""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from ngc_builder.services.credentials import Credentials, credentials_for
from ngc_builder.services.registry import RegistryAuthError, parse_registry
from ngc_builder.services.registry_auth import parse_challenge
from tests.unit.services.http_server import QuietHandler, serving

pytestmark = pytest.mark.unit
USER, SECRET = "ci-bot", "s3cret-Token-42"
DIGEST = "sha256:" + "ab" * 32


class AuthRegistry(QuietHandler):
    """/v2/basic/...: Basic USER:SECRET. /v2/bearer/...: a token from /token (Basic)."""

    token_requests: ClassVar[list[dict[str, list[str]]]] = []



    def _basic_ok(self) -> bool:
        expected = base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
        return self.headers.get("Authorization") == f"Basic {expected}"

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path == "/token":
            query = parse_qs(url.query)
            self.token_requests.append(query)
            if not self._basic_ok():
                self.answer(401)
                return
            body = json.dumps({"token": f"tok:{query['scope'][0]}", "expires_in": 300})
            self.answer(200, body.encode(), {"Content-Type": "application/json"})
            return
        self.do_HEAD()

    def do_HEAD(self) -> None:
        name = self.path.removeprefix("/v2/").partition("/manifests/")[0]
        if name == "basic" and not self._basic_ok():
            self.answer(401, headers={"WWW-Authenticate": 'Basic realm="registry"'})
        elif name == "bearer" and self.headers.get("Authorization") != (
                "Bearer tok:repository:bearer:pull"):
            address = self.server.server_address
            port = address[1] if isinstance(address, tuple) else 0
            challenge = (f'Bearer realm="http://127.0.0.1:{port}/token",service="test",'
                         'scope="repository:bearer:pull"')
            self.answer(401, headers={"WWW-Authenticate": challenge})
        else:
            self.answer(200, headers={"Docker-Content-Digest": DIGEST})


@pytest.fixture
def server() -> Iterator[str]:
    AuthRegistry.token_requests.clear()
    with serving(AuthRegistry) as address:
        yield address


def login(host: str, password: str = SECRET) -> None:
    """What `docker login` leaves in $DOCKER_CONFIG/config.json without a credential store."""
    folder = Path(os.environ["DOCKER_CONFIG"])
    folder.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{USER}:{password}".encode()).decode()
    (folder / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))


def test_basic_credentials_from_the_docker_config(server: str) -> None:
    login(server)
    assert parse_registry(server).manifest_digest("basic", "26.11-py3") == DIGEST


def test_bearer_tokens_are_fetched_with_the_credentials_and_cached(server: str) -> None:
    login(server)
    registry = parse_registry(server)
    for _ in range(3):
        assert registry.manifest_digest("bearer", "26.11-py3") == DIGEST
    assert AuthRegistry.token_requests == [{"service": ["test"],
                                            "scope": ["repository:bearer:pull"]}]


@pytest.mark.parametrize("name", ["basic", "bearer"])
def test_no_or_wrong_credentials_say_what_to_do_and_never_the_secret(server: str,
                                                                      name: str) -> None:
    with pytest.raises(RegistryAuthError, match=f"run `docker login {server}`"):
        parse_registry(server).manifest_digest(name, "26.11-py3")
    login(server, password="wrong-" + SECRET)
    with pytest.raises(RegistryAuthError, match="rejected the credentials") as caught:
        parse_registry(server).manifest_digest(name, "26.11-py3")
    assert SECRET not in str(caught.value)


def test_a_credential_helper_is_asked_like_docker_asks_it(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          server: str) -> None:
    helper = tmp_path / "bin" / "docker-credential-test"
    helper.parent.mkdir()
    helper.write_text("#!/bin/sh\nread host\n"
                      f'[ "$host" = "{server}" ] || exit 1\n'
                      f'echo \'{{"Username": "{USER}", "Secret": "{SECRET}"}}\'\n')
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{helper.parent}{os.pathsep}{os.environ['PATH']}")
    folder = Path(os.environ["DOCKER_CONFIG"])
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"credHelpers": {server: "test"}}))
    assert credentials_for(server) == Credentials(USER, SECRET)
    assert credentials_for("elsewhere.example.com") is None
    assert parse_registry(server).manifest_digest("bearer", "26.11-py3") == DIGEST


def test_secrets_do_not_print() -> None:
    assert SECRET not in repr(Credentials(USER, SECRET))
    challenge = parse_challenge('Bearer realm="https://auth.example.com/token",service="r"')
    assert challenge is not None and challenge.scheme == "bearer"
    assert challenge.params == {"realm": "https://auth.example.com/token", "service": "r"}
