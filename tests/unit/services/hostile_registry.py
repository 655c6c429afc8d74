"""A registry on 127.0.0.1 that answers what a test tells it to, however wrong: another
manifest's bytes for a digest, a Docker-Content-Digest that names other bytes, a body larger
than any bound (streamed, counting what it got to send), redirects to itself."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from ngc_builder.services.registry import HttpRegistry, parse_registry
from ngc_builder.services.retry import RetryPolicy
from tests.unit.services.http_server import QuietHandler, serving

CHUNK = 64 * 1024


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Huge:
    """A body of `size` bytes sent 64 KiB at a time; `announced`: with its Content-Length;
    `location`: as the body of a 302 sending the client there. `sent` counts what the client
    let through before it hung up; `done` once it stopped."""

    size: int
    announced: bool = True
    location: str | None = None
    cut: int | None = None  # the connection closed after this many bytes (a lost answer)
    sent: int = 0
    done: threading.Event = field(default_factory=threading.Event)


class HostileRegistry(QuietHandler):
    """GET and HEAD of any path: `answers[path]` (body, headers), `huge[path]` streamed,
    `moved[path]` a 302 to another path, `challenged[path]` a Bearer 401 (a call without a
    token) whose realm is that path here; 404 otherwise."""

    answers: ClassVar[dict[str, tuple[bytes, dict[str, str]]]] = {}
    huge: ClassVar[dict[str, Huge]] = {}
    moved: ClassVar[dict[str, str]] = {}
    challenged: ClassVar[dict[str, str]] = {}
    seen: ClassVar[list[str]] = []

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path in self.challenged and "Authorization" not in self.headers:
            self._challenge(self.challenged[self.path])
        elif self.path.partition("?")[0] in self.huge:
            self._stream(self.huge[self.path.partition("?")[0]])
        elif self.path in self.moved:
            self.answer(302, b"", {"Location": self.moved[self.path]})
        elif self.path in self.answers:
            body, headers = self.answers[self.path]
            self.answer(200, body, headers)
        else:
            self.answer(404, b'{"errors": [{"code": "MANIFEST_UNKNOWN"}]}')

    def _challenge(self, realm: str) -> None:
        address = self.server.server_address
        port = address[1] if isinstance(address, tuple) else 0
        self.answer(401, b"", {"WWW-Authenticate": f'Bearer realm="http://127.0.0.1:{port}'
                                                   f'{realm}",service="test"'})

    def _stream(self, huge: Huge) -> None:
        self.send_response(302 if huge.location else 200)
        if huge.location:
            self.send_header("Location", huge.location)
        if huge.announced:
            self.send_header("Content-Length", str(huge.size))
        self.end_headers()  # HTTP/1.0 without a length: the body ends when the server closes
        try:
            while huge.sent < min(huge.size, huge.cut if huge.cut is not None else huge.size):
                self.wfile.write(b"x" * CHUNK)
                huge.sent += CHUNK
        except OSError:
            pass  # the client hung up: what it wanted it had
        finally:
            huge.done.set()


@contextlib.contextmanager
def hostile() -> Iterator[HttpRegistry]:
    """A client of a fresh hostile registry (its tables emptied), quick to give up."""
    for table in (HostileRegistry.answers, HostileRegistry.huge, HostileRegistry.moved,
                  HostileRegistry.challenged):
        table.clear()
    HostileRegistry.seen.clear()
    with serving(HostileRegistry) as address:
        retry = RetryPolicy(attempts=1, first_wait=0.01, say=lambda _: None)
        yield dataclasses.replace(parse_registry(address), timeout=10, retry=retry)


def serve_manifest(name: str, reference: str, body: bytes, media_type: str,
                   digest: str | None = None) -> None:
    """`body` for name:reference (or name@reference), with `digest` as Docker-Content-Digest
    (default: the right one)."""
    HostileRegistry.answers[f"/v2/{name}/manifests/{reference}"] = (
        body, {"Content-Type": media_type, "Docker-Content-Digest": digest or digest_of(body)})


def serve_blob(name: str, digest: str, body: bytes) -> None:
    HostileRegistry.answers[f"/v2/{name}/blobs/{digest}"] = (body, {})
