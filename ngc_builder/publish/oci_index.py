"""One tag, several platforms: an OCI image index over each platform's pushed manifest, the
way other registry clients and `docker pull` (which picks the host's platform) read it.

Every entry is checked before the index is written: the registry holds it in the same
repository, it is one image (an index inside an index is refused), and its config says the
platform the entry claims; an engine or registry that answers otherwise (an amd64 image where
arm64 was built) leaves no index behind that would send a Grace node an `exec format error`.
That the bytes answered for a digest are that digest's (the manifest's and its config's), and
within a size, the registry service checks for every caller (services/registry.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ngc_builder.publish.tags import DIGEST_RE, content_digest
from ngc_builder.services.registry import Manifest, Registry, RegistryError

INDEX = "application/vnd.oci.image.index.v1+json"
IMAGE_TYPES = ("application/vnd.oci.image.manifest.v1+json",
               "application/vnd.docker.distribution.manifest.v2+json")


@dataclass(frozen=True)
class PlatformImage:
    platform: str  # linux/arm64
    digest: str  # its manifest's, in the same repository


def index_of(registry: Registry, name: str, images: list[PlatformImage]) -> Manifest:
    """The index over `images` (sorted by platform), each entry checked."""
    if len({image.platform for image in images}) != len(images) or not images:
        raise RegistryError(f"{name}: an index needs each platform once, got "
                            f"{[image.platform for image in images]}")
    entries = [_entry(registry, name, image)
               for image in sorted(images, key=lambda image: image.platform)]
    body = json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": entries},
                      separators=(",", ":")).encode()
    return Manifest(body, INDEX, content_digest(body))


def push_index(registry: Registry, name: str, tag: str, images: list[PlatformImage]) -> str:
    """`name:tag` pointed at the index over `images`; its digest, as the registry holds it."""
    index = index_of(registry, name, images)
    registry.put_manifest(name, tag, index)
    held = registry.manifest_digest(name, tag)
    if held != index.digest:
        raise RegistryError(f"{name}:{tag}: the registry holds {held}, not the index "
                            f"{index.digest}")
    return index.digest


def platforms_of(registry: Registry, name: str, reference: str) -> dict[str, str]:
    """platform -> manifest digest of the index at `reference` ({} when it is one image)."""
    manifest = registry.get_manifest(name, reference)
    if manifest is None:
        raise RegistryError(f"{name}:{reference} is not in the registry")
    if manifest.media_type != INDEX:
        return {}
    try:
        return dict(_platform_entry(entry) for entry in json.loads(manifest.body)["manifests"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RegistryError(f"{name}@{manifest.digest}: not an index we can read "
                            f"({exc.__class__.__name__}: {exc})") from None


def _platform_entry(entry: dict[str, Any]) -> tuple[str, str]:
    """One entry of an index the registry answered, every field checked: its digest is
    pulled and pointed at later, so it must be a digest and nothing else."""
    platform, digest = entry["platform"], entry["digest"]
    system, architecture = platform["os"], platform["architecture"]
    if not (isinstance(system, str) and isinstance(architecture, str)
            and isinstance(digest, str) and DIGEST_RE.fullmatch(digest)):
        raise ValueError(f"entry {json.dumps(entry)[:200]}")
    return f"{system}/{architecture}", digest


def _entry(registry: Registry, name: str, image: PlatformImage) -> dict[str, object]:
    manifest = registry.get_manifest(name, image.digest)
    if manifest is None:
        raise RegistryError(f"{name}@{image.digest} is not in the registry")
    if manifest.media_type not in IMAGE_TYPES:
        raise RegistryError(f"{name}@{image.digest} is not one image ({manifest.media_type})")
    try:
        config_digest = str(json.loads(manifest.body)["config"]["digest"])
        data = json.loads(registry.get_blob(name, config_digest))
        found = f"{data.get('os')}/{data.get('architecture')}"
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RegistryError(f"{name}@{image.digest}: {exc}") from None
    if found != image.platform:
        raise RegistryError(f"{name}@{image.digest} is a {found} image, not {image.platform}")
    system, architecture = image.platform.split("/", 1)
    return {"mediaType": manifest.media_type, "digest": image.digest,
            "size": len(manifest.body),
            "platform": {"architecture": architecture, "os": system}}
