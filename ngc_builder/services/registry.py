"""The registry service: its address parsed once, and its HTTP API v2 read directly (what is
there, at which digest; tags pointed at manifests; small blobs such as SBOMs put and read).

Stages are handed a `Registry` (the Protocol below); `HttpRegistry` is the real one. Unit tests
hand in fakes that satisfy the same Protocol, so no test reaches a registry by accident.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import requests

from ngc_builder.services import registry_blobs
from ngc_builder.services.environment import setting_flag
from ngc_builder.services.reference import DIGEST_RE, TAG_RE

# Re-exported: the address rules now live with the other reference rules (reference.py).
from ngc_builder.services.reference import registry_problem as registry_problem
from ngc_builder.services.reference import split_registry as split_registry
from ngc_builder.services.registry_auth import AuthError, RegistryAuth, scope_for

# Re-exported: stages catch the registry's errors where they get the registry.
from ngc_builder.services.registry_errors import RegistryAuthError as RegistryAuthError
from ngc_builder.services.registry_errors import RegistryError as RegistryError
from ngc_builder.services.registry_errors import RegistryUnavailable as RegistryUnavailable
from ngc_builder.services.registry_errors import raise_for
from ngc_builder.services.registry_http import MANIFEST, TAGS, Answer, Body, Bound, exchange
from ngc_builder.services.retry import RetryPolicy
from ngc_builder.services.tls import client_cert_for, has_own_ca, verify_for

MANIFEST_TYPES = ", ".join([
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
])
TIMEOUT = 30
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True)
class Manifest:
    body: bytes
    media_type: str
    digest: str

    def blob_sizes(self) -> dict[str, int]:
        """digest -> bytes of the config and every layer (what the registry stores)."""
        data = json.loads(self.body)
        blobs = [data.get("config") or {}, *(data.get("layers") or [])]
        return {blob["digest"]: int(blob["size"]) for blob in blobs if "digest" in blob}


class Registry(Protocol):
    """What the stages ask of a registry; `address` is how image references name it."""

    @property
    def address(self) -> str: ...

    def manifest_digest(self, name: str, reference: str) -> str | None: ...

    def get_manifest(self, name: str, reference: str) -> Manifest | None: ...

    def put_manifest(self, name: str, tag: str, manifest: Manifest) -> str: ...

    def list_tags(self, name: str) -> list[str]: ...

    def put_blob(self, name: str, data: bytes) -> str: ...

    def get_blob(self, name: str, digest: str) -> bytes: ...


def repository(registry: Registry, name: str) -> str:
    """'host:5000/team' + 'jax' -> 'host:5000/team/jax', as the engine names the image."""
    return f"{registry.address}/{name}"


def is_loopback(host: str) -> bool:
    hostname = host if host.endswith("]") else host.rsplit(":", 1)[0]
    return hostname in LOOPBACK_HOSTS


def parse_registry(address: str, insecure: bool | None = None) -> HttpRegistry:
    """The registry at host[:port][/namespace]; ValueError names what is wrong.

    Loopback registries speak plain HTTP (Docker treats them as insecure too); others HTTPS
    unless `insecure` (default: $NGC_REGISTRY_INSECURE=1), read here once.
    """
    problem = registry_problem(address)
    if problem:
        raise ValueError(problem)
    host, namespace = split_registry(address)
    if insecure is None:
        insecure = setting_flag("NGC_REGISTRY_INSECURE")
    # A loopback registry speaks TLS only when certs.d holds its CA (Docker tries TLS first).
    plain = insecure or (is_loopback(host) and not has_own_ca(host))
    scheme: Literal["http", "https"] = "http" if plain else "https"
    session = requests.Session()
    if scheme == "https":
        session.verify = verify_for(host)
        session.cert = client_cert_for(host)
    return HttpRegistry(host, namespace, scheme, session=session, auth=RegistryAuth(host))


@dataclass(frozen=True)
class HttpRegistry:
    """A distribution (OCI) registry spoken to over its HTTP API, one session per registry."""

    host: str
    namespace: str
    scheme: Literal["http", "https"]
    timeout: float = TIMEOUT
    retry: RetryPolicy = field(default_factory=RetryPolicy.from_env, compare=False, repr=False)
    session: requests.Session = field(default_factory=requests.Session, compare=False,
                                      repr=False)
    auth: RegistryAuth | None = field(default=None, compare=False, repr=False)
    # What this object last saw the registry hold for each manifest and blob reference it
    # read or wrote, (kind, name, reference) -> digest, "blob" or None (absent): what a no-op
    # re-run asks again (pipeline/noop.py).
    observed: dict[tuple[str, str, str], str | None] = field(default_factory=dict,
                                                              compare=False, repr=False)

    @property
    def address(self) -> str:
        return f"{self.host}/{self.namespace}" if self.namespace else self.host

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}/v2"

    def path(self, name: str) -> str:
        """The repository's path in the registry: 'team/jax'."""
        return f"{self.namespace}/{name}" if self.namespace else name

    def url(self, name: str, *parts: str) -> str:
        return "/".join((self.base_url, self.path(name), *parts))

    def manifest_digest(self, name: str, reference: str) -> str | None:
        """Digest the registry holds for name:tag or name@digest (manifest HEAD), or None.
        Asked by digest, a registry that names another one is refused (no bytes to check)."""
        answer = self._read_manifest("HEAD", name, reference)
        digest = None if answer is None else answer.headers.get("Docker-Content-Digest")
        if digest is not None and DIGEST_RE.fullmatch(reference) and digest != reference:
            raise RegistryError(f"{self.url(name, 'manifests', reference)}: the registry "
                                f"names {digest[:80]!r} for it")
        self.observed["manifest", name, reference] = digest
        return digest

    def get_manifest(self, name: str, reference: str) -> Manifest | None:
        """The manifest of name:tag or name@digest, byte for byte, or None if absent. Its
        digest is the sha256 of those bytes, checked here for every caller (held_digest)."""
        answer = self._read_manifest("GET", name, reference, MANIFEST)
        digest = None if answer is None else held_digest(
            answer, reference, self.url(name, "manifests", reference))
        self.observed["manifest", name, reference] = digest
        if answer is None or digest is None:
            return None
        return Manifest(answer.content, answer.headers.get("Content-Type", ""), digest)

    def put_manifest(self, name: str, tag: str, manifest: Manifest) -> str:
        """Point name:tag at an existing manifest (its blobs are already there): no push."""
        url = self._manifest_url(name, tag)
        response = self._request("PUT", url, {"Content-Type": manifest.media_type},
                                 manifest.body, scope_for(self.path(name), write=True))
        raise_for(response, url)
        held = response.headers.get("Docker-Content-Digest", manifest.digest)
        if held != manifest.digest:
            raise RegistryError(f"{url}: registry stored {held}, expected {manifest.digest}")
        self.observed["manifest", name, tag] = held
        return held

    def list_tags(self, name: str) -> list[str]:
        url = self.url(name, "tags", "list")
        response = self._request("GET", url, {}, scope=scope_for(self.path(name), write=False),
                                 bound=TAGS)
        if response.status_code == 404:
            return []
        raise_for(response, url)
        try:
            return [str(tag) for tag in response.json().get("tags") or []]
        except (ValueError, AttributeError, TypeError):
            raise RegistryError(f"{url}: not a tag list") from None

    def put_blob(self, name: str, data: bytes) -> str:
        return registry_blobs.put_blob(self, name, data)

    def get_blob(self, name: str, digest: str) -> bytes:
        data = registry_blobs.get_blob(self, name, digest)
        self.observed["blob", name, digest] = "blob"
        return data

    def download_blob(self, name: str, digest: str, size: int, target: Path) -> None:
        registry_blobs.download_blob(self, name, digest, size, target)

    def has_blob(self, name: str, digest: str) -> bool:
        """Whether the registry holds the blob, asked with read access only."""
        return registry_blobs.has_blob(self, name, digest, write=False)

    def call(self, method: str, url: str, headers: dict[str, str], body: bytes | None = None,
             scope: str = "", bound: Bound | None = None) -> Answer:
        """One API call (retried, authorized); for the blob functions beside this class.
        `bound`: the answer's body is wanted, at most that many bytes."""
        return self._request(method, url, headers, body, scope, bound)

    def send_once(self, method: str, url: str, headers: dict[str, str], body: Iterable[bytes],
                  scope: str) -> Answer:
        """A call whose body is a stream: sent once, with the token an earlier call in the
        same scope obtained (a stream cannot be sent again after a 401)."""
        auth = self.auth.headers(scope) if self.auth else {}
        response = self._send(method, url, {**headers, **auth}, body)
        if response.status_code in (401, 403):
            raise RegistryAuthError(f"{url}: HTTP {response.status_code}")
        return response

    def is_up(self) -> bool:
        try:
            return self._request("GET", f"{self.base_url}/", {}).status_code in (200, 401)
        except RegistryError:
            return False

    def _manifest_url(self, name: str, reference: str) -> str:
        """A tag or a digest, nothing else, goes into the URL (one from an answer too)."""
        if not (TAG_RE.fullmatch(reference) or DIGEST_RE.fullmatch(reference)):
            raise RegistryError(f"{self.address}/{name}: {reference[:80]!r} is not a tag or "
                                "a sha256 digest")
        return self.url(name, "manifests", reference)

    def _read_manifest(self, method: str, name: str, reference: str,
                       bound: Bound | None = None) -> Answer | None:
        url = self._manifest_url(name, reference)
        response = self._request(method, url, {"Accept": MANIFEST_TYPES},
                                 scope=scope_for(self.path(name), write=False), bound=bound)
        if response.status_code == 404:
            return None
        raise_for(response, url)
        return response

    def _request(self, method: str, url: str, headers: dict[str, str],
                 body: bytes | None = None, scope: str = "", bound: Bound | None = None
                 ) -> Answer:
        """One call, again after a lost connection, a 429 or a 5xx (bounded, each retry
        said), with the authorization the registry asks for."""
        try:
            return self.retry.call(f"registry {method} {url}",
                                   lambda: self._authorized(method, url, headers, body, scope,
                                                            bound),
                                   lambda exc: isinstance(exc, RegistryUnavailable))
        except RegistryUnavailable as exc:
            raise RegistryUnavailable(f"{exc} (gave up after {self.retry.attempts} attempts)"
                                      ) from None

    def _authorized(self, method: str, url: str, headers: dict[str, str], body: bytes | None,
                    scope: str, bound: Bound | None) -> Answer:
        if self.auth is None:
            return self._send(method, url, headers, body, bound)
        try:
            response = self._send(method, url, {**headers, **self.auth.headers(scope)}, body,
                                  bound)
            if response.status_code != 401:
                return response
            self.auth.answer(response.headers.get("WWW-Authenticate", ""), scope,
                             self.session, self.timeout)
            response = self._send(method, url, {**headers, **self.auth.headers(scope)}, body,
                                  bound)
        except AuthError as exc:
            raise RegistryAuthError(f"{url}: {exc}") from None
        if response.status_code in (401, 403):
            raise RegistryAuthError(f"{url}: HTTP {response.status_code}: "
                                    f"{self.auth.rejected()}")
        return response

    def _send(self, method: str, url: str, headers: dict[str, str], body: Body,
              bound: Bound | None = None) -> Answer:
        return exchange(self.session, self.host, method, url, headers, bound, body,
                        self.timeout)


def held_digest(answer: Answer, reference: str, url: str) -> str:
    """The digest of the manifest answered: the sha256 of exactly its bytes. Asked by digest,
    it must be that digest; a Docker-Content-Digest the registry sends must be it too. A
    registry answering another manifest's bytes (or naming them wrongly) is refused here, so
    no caller indexes, signs, adopts or records them under the digest it asked for."""
    digest = "sha256:" + hashlib.sha256(answer.content).hexdigest()
    asked = reference if DIGEST_RE.fullmatch(reference) else None
    for claimed in (asked, answer.headers.get("Docker-Content-Digest")):
        if claimed is not None and claimed != digest:
            raise RegistryError(f"{url}: the registry answered bytes whose digest is {digest}, "
                                f"not {claimed[:80]!r}")
    return digest
