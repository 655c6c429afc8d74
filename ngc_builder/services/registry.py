"""The registry's HTTP API v2, read directly: what is there, at which digest."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

import requests

MANIFEST_TYPES = ", ".join([
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
])
TIMEOUT = 30


class RegistryError(Exception):
    """The registry could not be reached or answered with an error."""


class RegistryAuthError(RegistryError):
    """The registry wants credentials (HTTP 401/403)."""


def split_registry(registry: str) -> tuple[str, str]:
    """'host:5000/team' -> ('host:5000', 'team/')."""
    host, _, namespace = registry.partition("/")
    return host, f"{namespace}/" if namespace else ""


def base_url(host: str) -> str:
    # Loopback registries speak plain HTTP (Docker treats them as insecure too).
    hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    insecure = hostname in ("localhost", "127.0.0.1", "[::1]") or os.environ.get(
        "NGC_REGISTRY_INSECURE") == "1"
    return f"{'http' if insecure else 'https'}://{host}/v2"


def manifest_url(registry: str, name: str, reference: str) -> str:
    host, namespace = split_registry(registry)
    return f"{base_url(host)}/{namespace}{name}/manifests/{reference}"


def _read_manifest(method: str, registry: str, name: str,
                   reference: str) -> requests.Response | None:
    url = manifest_url(registry, name, reference)
    response = _request(method, url, {"Accept": MANIFEST_TYPES})
    if response.status_code == 404:
        return None
    _raise_for(response, url)
    return response


def manifest_digest(registry: str, name: str, tag: str) -> str | None:
    """Digest the registry holds for name:tag (manifest HEAD), or None if absent."""
    response = _read_manifest("HEAD", registry, name, tag)
    return None if response is None else response.headers.get("Docker-Content-Digest")


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


def get_manifest(registry: str, name: str, reference: str) -> Manifest | None:
    """The manifest of name:tag or name@digest, byte for byte, or None if absent."""
    response = _read_manifest("GET", registry, name, reference)
    if response is None:
        return None
    digest = response.headers.get("Docker-Content-Digest") or (
        "sha256:" + hashlib.sha256(response.content).hexdigest())
    return Manifest(response.content, response.headers.get("Content-Type", ""), digest)


def put_manifest(registry: str, name: str, tag: str, manifest: Manifest) -> str:
    """Point name:tag at an existing manifest (its blobs are already there): no push."""
    url = manifest_url(registry, name, tag)
    response = _request("PUT", url, {"Content-Type": manifest.media_type}, manifest.body)
    _raise_for(response, url)
    held = response.headers.get("Docker-Content-Digest", manifest.digest)
    if held != manifest.digest:
        raise RegistryError(f"{url}: registry stored {held}, expected {manifest.digest}")
    return held


def list_tags(registry: str, name: str) -> list[str]:
    host, namespace = split_registry(registry)
    url = f"{base_url(host)}/{namespace}{name}/tags/list"
    response = _request("GET", url, {})
    if response.status_code == 404:
        return []
    _raise_for(response, url)
    return list(response.json().get("tags") or [])


def is_up(registry: str) -> bool:
    host, _ = split_registry(registry)
    try:
        return _request("GET", f"{base_url(host)}/", {}).status_code in (200, 401)
    except RegistryError:
        return False


def _request(
    method: str, url: str, headers: dict[str, str], body: bytes | None = None,
) -> requests.Response:
    try:
        return requests.request(method, url, headers=headers, data=body, timeout=TIMEOUT)
    except requests.RequestException as exc:
        raise RegistryError(f"{url}: {exc.__class__.__name__}: {exc}") from None


def _raise_for(response: requests.Response, url: str) -> None:
    if response.status_code in (401, 403):
        raise RegistryAuthError(f"{url}: HTTP {response.status_code} (credentials needed)")
    if response.status_code >= 400:
        raise RegistryError(f"{url}: HTTP {response.status_code}")
