"""The SquashFS of an image in the registry: an OCI artifact whose subject is the image's
platform manifest, tagged `sha256-<hex>.sqfs` beside it (as the SBOM is), its one layer the
SquashFS itself. Signed by the release's key like the image (publish/signing.py), so
`cosign verify --key` checks it, and a node checks it before running it (commands/squashfs.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.publish.artifact import (
    EMPTY_BLOB,
    Layer,
    artifact_layer,
    artifact_manifest,
    mapping,
)
from ngc_builder.publish.signing import SignatureReader
from ngc_builder.publish.squashfs import BLOCK, SquashFile
from ngc_builder.publish.tags import DIGEST_RE, digest_tag
from ngc_builder.services.registry import HttpRegistry, RegistryError
from ngc_builder.services.registry_blobs import upload_stream

SQUASHFS_TYPE = "application/vnd.ngc-builder.squashfs.v1"  # the artifact's type
LAYER_TYPE = "application/vnd.squashfs"  # its one layer: the file as mksquashfs wrote it
# The largest SquashFS a node downloads: NGC's largest images are under 30 GB unpacked.
MAX_SIZE = 64 << 30


@dataclass(frozen=True)
class Found:
    """The SquashFS artifact of an image, as the registry holds it."""

    manifest_digest: str  # what the release's key signed
    layer_digest: str
    size: int


def squashfs_tag(image_digest: str) -> str:
    """Where the SquashFS of that platform manifest is tagged."""
    return digest_tag(image_digest, ".sqfs")


def push_squashfs(registry: HttpRegistry, name: str, image_digest: str,
                  squash: SquashFile) -> str:
    """The SquashFS beside `name@image_digest`; returns the artifact manifest's digest. A blob
    the repository holds already is not sent again."""
    image = registry.get_manifest(name, image_digest)
    if image is None or image.digest != image_digest:
        raise RegistryError(f"{registry.address}/{name}@{image_digest}: no such image to "
                            "attach a SquashFS to")
    if not registry.has_blob(name, squash.digest):
        sent, size = upload_stream(registry, name, _chunks(squash.path))
        if (sent, size) != (squash.digest, squash.size):
            raise RegistryError(f"{squash.path.name} changed while it was uploaded")
    registry.put_blob(name, EMPTY_BLOB)
    layer = Layer(LAYER_TYPE, squash.digest, squash.size, f"{name}.sqfs",
                  (("org.ngc-builder.squashfs.compression", "zstd"),))
    return registry.put_manifest(name, squashfs_tag(image_digest),
                                 artifact_manifest(image, SQUASHFS_TYPE, layer))


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(BLOCK):
            yield chunk


def find_squashfs(registry: SignatureReader, name: str, image_digest: str) -> Found | str:
    """The SquashFS artifact of `name@image_digest`; else what is wrong, in one line."""
    tag = squashfs_tag(image_digest)
    try:
        held = registry.get_manifest(name, tag)
        if held is None:
            return f"no SquashFS: tag {tag} missing from the registry"
        layer = artifact_layer(mapping(json.loads(held.body)), SQUASHFS_TYPE, LAYER_TYPE,
                               image_digest)
    except RegistryError as exc:
        return f"registry: {exc}"
    except (ValueError, TypeError, AttributeError) as exc:
        return f"SquashFS artifact unreadable: {exc.__class__.__name__}: {str(exc)[:200]}"
    if isinstance(layer, str):
        return f"SquashFS {layer}"
    digest, size = layer.get("digest"), layer.get("size")
    if not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest):
        return f"SquashFS layer names {str(digest)[:80]!r}, not a sha256 digest"
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_SIZE:
        return f"SquashFS layer size {str(size)[:40]!r} is not between 1 byte and 64 GiB"
    return Found(held.digest, digest, size)
