"""Blobs through the registry's HTTP API v2: is one there, mount one from another repository,
upload one whole (small: SBOMs, image configs) or as a stream (layers, gigabytes), read one
whole, or download one into a file (a SquashFS: gigabytes).

Uploads follow the distribution spec: POST an upload session, then PUT it whole with its
digest, or PATCH the stream in (chunked transfer) and PUT the digest computed on the way.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import quote, urljoin, urlsplit

from ngc_builder.services.reference import DIGEST_RE
from ngc_builder.services.registry_auth import scope_for
from ngc_builder.services.registry_errors import RegistryAuthError, RegistryError, raise_for
from ngc_builder.services.registry_http import BLOB, Answer, Bound


class BlobApi(Protocol):
    """What the functions here need of a registry (`registry.HttpRegistry` is one)."""

    @property
    def host(self) -> str: ...

    def path(self, name: str) -> str: ...

    def url(self, name: str, *parts: str) -> str: ...

    def call(self, method: str, url: str, headers: dict[str, str], body: bytes | None = None,
             scope: str = "", bound: Bound | None = None) -> Answer: ...

    def send_once(self, method: str, url: str, headers: dict[str, str], body: Iterable[bytes],
                  scope: str) -> Answer: ...


def has_blob(registry: BlobApi, name: str, digest: str, write: bool = True) -> bool:
    """Whether `name` holds the blob; `write`: asked in the push scope, as an upload is."""
    url = registry.url(name, "blobs", digest)
    held = registry.call("HEAD", url, {}, scope=scope_for(registry.path(name), write=write))
    if held.status_code not in (200, 404):
        raise_for(held, url)
    return held.status_code == 200


def mount_blob(registry: BlobApi, name: str, digest: str, source: str) -> bool:
    """Ask the registry to link `digest` from repository `source` into `name` (no bytes sent).
    False when it cannot (the blob is not in `source`, or the registry does not mount)."""
    scope = (f"{scope_for(registry.path(name), write=True)} "
             f"{scope_for(registry.path(source), write=False)}")
    start = (f"{registry.url(name, 'blobs', 'uploads')}/?mount={quote(digest)}"
             f"&from={quote(registry.path(source))}")
    try:
        response = registry.call("POST", start, {}, scope=scope)
    except RegistryAuthError:
        return False  # no right to read `source` (a token service granting one scope): upload
    if response.status_code == 201:
        return True
    raise_for(response, start)
    if response.status_code == 202:  # it opened an upload instead: give that session back
        _cancel(registry, _location(registry, start, response.headers.get("Location", "")),
                scope)
    return False


def put_blob(registry: BlobApi, name: str, data: bytes) -> str:
    """Upload `data` whole (a blob the repository holds already is not sent); its digest."""
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if has_blob(registry, name, digest):
        return digest
    scope = scope_for(registry.path(name), write=True)
    location = _open_upload(registry, name, scope)
    _close_upload(registry, name, location, digest, data, scope)
    return digest


def upload_stream(registry: BlobApi, name: str, chunks: Iterable[bytes]) -> tuple[str, int]:
    """Upload the concatenated `chunks` without holding them: (digest, size)."""
    scope = scope_for(registry.path(name), write=True)
    location = _open_upload(registry, name, scope)
    counted = _Counted(chunks)
    response = registry.send_once("PATCH", location,
                                  {"Content-Type": "application/octet-stream"}, counted, scope)
    raise_for(response, location.split("?")[0])
    if response.status_code != 202:
        raise RegistryError(f"{location.split('?')[0]}: upload answered HTTP "
                            f"{response.status_code}")
    location = _location(registry, location, response.headers.get("Location", location))
    _close_upload(registry, name, location, counted.digest, b"", scope)
    return counted.digest, counted.size


def get_blob(registry: BlobApi, name: str, digest: str) -> bytes:
    """The blob `digest` of the repository, read whole (configs, SBOMs, signature and
    attestation payloads: never a layer), at most BLOB bytes, checked against the digest."""
    if not DIGEST_RE.fullmatch(digest):  # often a manifest's word: it goes into the URL
        raise RegistryError(f"{registry.host}/{name}: {digest[:80]!r} is not a sha256 digest")
    url = registry.url(name, "blobs", digest)
    response = registry.call("GET", url, {}, scope=scope_for(registry.path(name), write=False),
                             bound=BLOB)
    raise_for(response, url)
    if "sha256:" + hashlib.sha256(response.content).hexdigest() != digest:
        raise RegistryError(f"{url}: the blob received does not match its digest")
    return response.content


def download_blob(registry: BlobApi, name: str, digest: str, size: int, target: Path) -> None:
    """Stream the blob `digest` of `size` bytes (its descriptor's) into `target`, hashed on the
    way: a body longer than `size`, shorter, or of another digest is RegistryError. `target`
    then holds bytes nobody checked: the caller removes it on error and renames it on
    success."""
    if not DIGEST_RE.fullmatch(digest):
        raise RegistryError(f"{registry.host}/{name}: {digest[:80]!r} is not a sha256 digest")
    url = registry.url(name, "blobs", digest)
    with target.open("wb") as handle:
        sink = _FileSink(handle)
        response = registry.call("GET", url, {}, scope=scope_for(registry.path(name), write=False),
                                 bound=Bound("blob", size, sink))
        raise_for(response, url)
    if sink.size != size or "sha256:" + sink.sha.hexdigest() != digest:
        raise RegistryError(f"{url}: received {sink.size} bytes of digest sha256:"
                            f"{sink.sha.hexdigest()[:12]}..., not the {size} bytes of {digest}")


class _FileSink:
    """A blob written to a file as it arrives, hashed and counted."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle, self.sha, self.size = handle, hashlib.sha256(), 0

    def restart(self) -> None:
        self.handle.seek(0)
        self.handle.truncate()
        self.sha, self.size = hashlib.sha256(), 0

    def write(self, chunk: bytes) -> None:
        self.handle.write(chunk)
        self.sha.update(chunk)
        self.size += len(chunk)


class _Counted:
    """The chunks as they go out, hashed and counted on the way."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks, self.sha, self.size = chunks, hashlib.sha256(), 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.sha.update(chunk)
            self.size += len(chunk)
            yield chunk

    @property
    def digest(self) -> str:
        return "sha256:" + self.sha.hexdigest()


def _open_upload(registry: BlobApi, name: str, scope: str) -> str:
    start = registry.url(name, "blobs", "uploads") + "/"
    response = registry.call("POST", start, {}, scope=scope)
    raise_for(response, start)
    if response.status_code != 202:
        raise RegistryError(f"{start}: HTTP {response.status_code}")
    return _location(registry, start, response.headers.get("Location", ""))


def _location(registry: BlobApi, base: str, location: str) -> str:
    resolved = urljoin(base, location)
    # The upload URL gets our credentials: it must be on the registry we authenticated to.
    if urlsplit(resolved).netloc != registry.host:
        raise RegistryError(f"{base.split('?')[0]}: upload location "
                            f"{resolved.split('?')[0]!r} is on another host")
    return resolved


def _close_upload(registry: BlobApi, name: str, location: str, digest: str, data: bytes,
                  scope: str) -> None:
    url = registry.url(name, "blobs", digest)
    put = f"{location}{'&' if '?' in location else '?'}digest={quote(digest)}"
    response = registry.call("PUT", put, {"Content-Type": "application/octet-stream"}, data,
                             scope)
    raise_for(response, url)
    stored = response.headers.get("Docker-Content-Digest", digest)
    if response.status_code != 201 or stored != digest:
        raise RegistryError(f"{url}: upload answered HTTP {response.status_code}, {stored}")


def _cancel(registry: BlobApi, location: str, scope: str) -> None:
    # An abandoned session expires on the registry's own schedule anyway.
    with contextlib.suppress(RegistryError):
        registry.call("DELETE", location, {}, scope=scope)
