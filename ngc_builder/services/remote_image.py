"""An image in a registry read without pulling it: its reference parsed, its manifest (one
platform's, out of a manifest list or OCI index) and its config blob, whose labels say what the
image needs of a host. Layers are never fetched: a config is a few kilobytes, a layer gigabytes.
"""

from __future__ import annotations

import json
import platform as host
from dataclasses import dataclass
from typing import Any, Protocol

from ngc_builder.services.reference import BadReference as BadReference
from ngc_builder.services.reference import check_parts, split_reference
from ngc_builder.services.registry import Manifest

INDEX_TYPES = ("application/vnd.docker.distribution.manifest.list.v2+json",
               "application/vnd.oci.image.index.v1+json")
# `uname -m` -> the OCI architecture an image index names it by.
ARCHITECTURES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
                 "ppc64le": "ppc64le", "s390x": "s390x"}


def host_platform() -> str:
    """This machine's platform as an index names it: `linux/amd64`, `linux/arm64` (Grace)."""
    machine = host.machine().lower()
    return f"linux/{ARCHITECTURES.get(machine, machine)}"


class ImageNotFound(LookupError):
    """The registry answered, but holds no such repository, tag or platform."""


@dataclass(frozen=True)
class ImageRef:
    """`host:5000/team/jax:26.11-py3` or `host:5000/team/jax@sha256:...`."""

    host: str
    path: str  # the repository inside the registry: 'team/jax'
    reference: str  # a tag or a digest

    def __str__(self) -> str:
        joiner = "@" if self.reference.startswith("sha256:") else ":"
        return f"{self.host}/{self.path}{joiner}{self.reference}"


def parse_ref(text: str) -> ImageRef:
    """Docker's reading of a reference (services/reference.py), with the registry host
    required: without one Docker would go to Docker Hub, which this command does not guess."""
    host, path, tag, digest = split_reference(text)
    if not host:
        raise BadReference("name the registry, as host[:port]/repository:tag")
    check_parts(host, path, tag)
    return ImageRef(host, path, digest or tag or "latest")


class ImageReader(Protocol):
    """What reading an image's config needs of a registry (`HttpRegistry` is one)."""

    def get_manifest(self, name: str, reference: str) -> Manifest | None: ...

    def get_blob(self, name: str, digest: str) -> bytes: ...


@dataclass(frozen=True)
class RemoteImage:
    ref: str
    repository: str  # host/path, without tag or digest
    digest: str  # the platform manifest's: what `docker pull REF@digest` gets on this host
    platform: str
    labels: dict[str, str]
    workdir: str = ""  # its WORKDIR, which runtimes other than Docker must be told


def read_image(registry: ImageReader, ref: ImageRef, wanted: str | None = None) -> RemoteImage:
    """The image's labels from its config blob: the manifest (an index's entry for `wanted`,
    default this host's platform), then the config. ImageNotFound when the registry has no
    such image, or none for that platform."""
    wanted = wanted or host_platform()
    manifest = _manifest(registry, ref.path, ref.reference, str(ref))
    if manifest.media_type in INDEX_TYPES or "manifests" in _document(manifest):
        digest = _platform_entry(_document(manifest), str(ref), wanted)
        manifest = _manifest(registry, ref.path, digest, str(ref))
    config = _document(manifest).get("config") or {}
    if "digest" not in config:
        raise ImageNotFound(f"{ref}: the manifest names no config blob")
    blob = json.loads(registry.get_blob(ref.path, str(config["digest"])))
    built_for = _config_platform(blob)
    if built_for is not None and built_for != wanted:  # one platform, not this host's
        raise ImageNotFound(f"{ref}: a {built_for} image only; this host is {wanted}")
    settings = blob.get("config") or {}
    labels = settings.get("Labels") or {}
    return RemoteImage(str(ref), f"{ref.host}/{ref.path}", manifest.digest, wanted,
                       {str(key): str(value) for key, value in labels.items()},
                       str(settings.get("WorkingDir") or ""))


def _config_platform(config: dict[str, Any]) -> str | None:
    """`os/architecture` of an image config; None when it does not say (an old image)."""
    os_name, architecture = config.get("os"), config.get("architecture")
    if not isinstance(os_name, str) or not isinstance(architecture, str) or not architecture:
        return None
    return f"{os_name}/{architecture}"


def pull_ref(image: RemoteImage) -> str:
    """What `docker pull` takes to get exactly the image judged: its platform's digest."""
    return f"{image.repository}@{image.digest}"


def _manifest(registry: ImageReader, path: str, reference: str, ref: str) -> Manifest:
    found = registry.get_manifest(path, reference)
    if found is None:
        raise ImageNotFound(f"{ref}: the registry has no such repository, tag or digest")
    return found


def _document(manifest: Manifest) -> dict[str, Any]:
    data = json.loads(manifest.body)
    return data if isinstance(data, dict) else {}


def _platform_entry(index: dict[str, Any], ref: str, wanted: str) -> str:
    """The digest of the `wanted` platform's manifest in a multi-platform image (an attached
    signature or SBOM entry, `unknown/unknown`, is never it)."""
    offered = []
    for entry in index.get("manifests") or []:
        platform = entry.get("platform") or {}
        named = f"{platform.get('os')}/{platform.get('architecture')}"
        offered.append(named)
        if named == wanted and isinstance(entry.get("digest"), str):
            return str(entry["digest"])
    raise ImageNotFound(f"{ref}: no {wanted} image in its index (this host's platform; "
                        f"it offers {', '.join(offered) or 'nothing'})")
