"""Push an image through the registry's API, its layers compressed on every core.

`docker push` gzips each layer on one core at the default level; on a build host the CUDA
stack's one 3.6 GB layer then holds every child's push for minutes. Here the engine exports
the image (`docker save`), each layer the registry lacks is gzipped in parallel
(publish/gzip.py) and streamed up as it is compressed, the parent's layers are mounted from
the parent's repository (no bytes sent), and the manifest is composed and put last, so a
half-done push leaves no tag. Layers already known (publish/layer_memo.py) are recognised in
the export by their size (small ones by their hash) and never compressed again.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Protocol

from ngc_builder.publish.gzip import CHUNK, gzip_stream
from ngc_builder.publish.layer_memo import LayerBlob, LayerMemo
from ngc_builder.services.engine import Inspection
from ngc_builder.services.registry import HttpRegistry, Manifest, RegistryError
from ngc_builder.services.registry_blobs import has_blob, mount_blob, put_blob, upload_stream
from ngc_builder.services.streams import LineSink

MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"
CONFIG_TYPE = "application/vnd.docker.container.image.v1+json"
LAYER_TYPE = "application/vnd.docker.image.rootfs.diff.tar.gzip"
MB = 1_000_000
SMALL = 1 << 20  # layers up to this size are read whole and recognised by their hash
# Docker before 25 writes a whole image under its data root before it streams the export:
# one export at a time bounds that to the largest image (parallel ones only share the disk).
EXPORTS = threading.Lock()


class ImageSource(Protocol):
    """What an upload needs of the engine: an image's layer list, and its export."""

    def inspect_image(self, image: str) -> Inspection: ...

    def get_image(self, image: str) -> Iterable[bytes]: ...


@dataclass
class Export:
    """One image as the registry needs it: its layers in order, which it still lacks."""

    image_id: str
    diff_ids: list[str]
    missing: set[str] = field(default_factory=set)  # diff IDs to compress and upload
    skip_sizes: dict[int, set[str]] = field(default_factory=dict)  # tar size -> layers held


def upload_image(engine: ImageSource, registry: HttpRegistry, name: str, image_id: str, tag: str,
                 sources: list[str], memo: LayerMemo, say: LineSink) -> str:
    """Put `image_id` into repository `name` as `tag`; its manifest digest."""
    export = _what_is_missing(engine, registry, name, image_id, sources, memo)
    if export.missing or image_id not in memo.configs:
        _transfer(engine, registry, name, export, memo, say, trust_sizes=True)
        if export.missing:  # a new layer had a known layer's size: read it all again
            _transfer(engine, registry, name, export, memo, say, trust_sizes=False)
        memo.save()
    manifest = compose(image_id, export.diff_ids, memo)
    if manifest is None:
        raise RegistryError(f"the export of {image_id[:19]} lacked a layer or its config")
    return registry.put_manifest(name, tag, manifest)


def held_manifest(engine: ImageSource, registry: HttpRegistry, name: str, image_id: str,
                  memo: LayerMemo) -> str | None:
    """The digest of this image's manifest when an earlier upload put it into `name`."""
    diff_ids = list(engine.inspect_image(image_id)["RootFS"]["Layers"])
    manifest = compose(image_id, diff_ids, memo)
    if manifest is None:
        return None
    return registry.manifest_digest(name, manifest.digest)


def compose(image_id: str, diff_ids: list[str], memo: LayerMemo) -> Manifest | None:
    """The image manifest from the memo, or None while a layer or the config is unknown."""
    if image_id not in memo.configs or any(d not in memo.layers for d in diff_ids):
        return None
    body = json.dumps({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "size": memo.configs[image_id],
                   "digest": image_id},
        "layers": [{"mediaType": LAYER_TYPE, "size": memo.layers[d].size,
                    "digest": memo.layers[d].digest} for d in diff_ids],
    }, indent=3).encode()
    return Manifest(body, MANIFEST_TYPE, _sha(body))


def _what_is_missing(engine: ImageSource, registry: HttpRegistry, name: str, image_id: str,
                     sources: list[str], memo: LayerMemo) -> Export:
    diff_ids = list(engine.inspect_image(image_id)["RootFS"]["Layers"])
    export = Export(image_id, diff_ids)
    for diff_id in dict.fromkeys(diff_ids):
        blob = memo.layers.get(diff_id)
        if blob is not None and _in_place(registry, name, blob.digest, sources):
            export.skip_sizes.setdefault(blob.tar_size, set()).add(diff_id)
        else:
            export.missing.add(diff_id)
    if image_id in memo.configs and not _in_place(registry, name, image_id, sources):
        del memo.configs[image_id]  # the registry lost it: take it from the export again
    return export


def _in_place(registry: HttpRegistry, name: str, digest: str, sources: list[str]) -> bool:
    """The blob is in `name` now, or was mounted there from one of `sources`."""
    return has_blob(registry, name, digest) or any(
        mount_blob(registry, name, digest, source) for source in sources)


def _transfer(engine: ImageSource, registry: HttpRegistry, name: str, export: Export,
              memo: LayerMemo, say: LineSink, trust_sizes: bool) -> None:
    """Read the engine's export once: upload the config and each missing layer."""
    with EXPORTS, ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        stream = io.BufferedReader(_ChunkReader(engine.get_image(export.image_id)), CHUNK)
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                kind, diff_id = _kind(member, export)
                reader = tar.extractfile(member) if kind else None
                if reader is None:
                    continue
                if kind == "config":
                    _upload_config(registry, name, export.image_id, reader.read(), memo)
                    continue
                chunks = _layer_chunks(member, diff_id, export, trust_sizes, reader)
                if chunks is not None:
                    _upload_layer(registry, name, chunks, member.size, export, memo, pool, say)


def _layer_chunks(member: tarfile.TarInfo, diff_id: str, export: Export, trust_sizes: bool,
                  reader: IO[bytes]) -> Iterable[bytes] | None:
    """The layer's bytes to upload, or None when the registry holds it: named so, or hashed
    (a small layer, read whole), or of a held layer's size (a large one, skipped unread: a
    new layer that only shares that size stays in `export.missing`, and the export is read
    again with sizes not trusted)."""
    if diff_id:
        return _chunks(reader) if diff_id in export.missing else None
    if member.size <= SMALL:
        data = reader.read()
        held = _sha(data) in export.skip_sizes.get(member.size, set())
        return None if held else [data]
    if not trust_sizes or member.size not in export.skip_sizes:
        return _chunks(reader)
    return None


def _kind(member: tarfile.TarInfo, export: Export) -> tuple[str, str]:
    """('config' | 'layer' | '', the layer's diff ID when the name tells it).

    Docker before 25 names layers `<v1 id>/layer.tar` and the config `<id>.json`; an OCI
    layout (Docker 25 and later) names both `blobs/sha256/<digest>`."""
    if not member.isfile():
        return "", ""  # links to a layer already listed, folders
    config_hex = export.image_id.removeprefix("sha256:")
    if member.name in (f"{config_hex}.json", f"blobs/sha256/{config_hex}"):
        return "config", ""
    if member.name.endswith("/layer.tar"):
        return "layer", ""
    digest = "sha256:" + member.name.removeprefix("blobs/sha256/")
    if member.name.startswith("blobs/sha256/") and digest in export.diff_ids:
        return "layer", digest
    return "", ""


def _upload_layer(registry: HttpRegistry, name: str, chunks: Iterable[bytes], tar_size: int,
                  export: Export, memo: LayerMemo, pool: ThreadPoolExecutor,
                  say: LineSink) -> None:
    started, raw = time.monotonic(), hashlib.sha256()
    digest, size = upload_stream(registry, name, gzip_stream(_hashed(chunks, raw), pool))
    diff_id = "sha256:" + raw.hexdigest()
    if diff_id not in export.diff_ids:
        raise RegistryError(f"the export of {export.image_id[:19]} holds a layer "
                            f"{diff_id[:19]} that the image does not list")
    memo.remember(diff_id, LayerBlob(digest, size, tar_size))
    export.missing.discard(diff_id)
    say(f"layer {diff_id[:19]}: {tar_size / MB:.0f} MB, {size / MB:.0f} MB gzipped, "
        f"uploaded in {time.monotonic() - started:.1f} s")


def _upload_config(registry: HttpRegistry, name: str, image_id: str, config: bytes,
                   memo: LayerMemo) -> None:
    if _sha(config) != image_id:
        raise RegistryError(f"the export of {image_id[:19]} holds another image's config")
    put_blob(registry, name, config)
    memo.remember_config(image_id, len(config))


def _chunks(reader: IO[bytes]) -> Iterator[bytes]:
    while chunk := reader.read(CHUNK):
        yield chunk


def _hashed(chunks: Iterable[bytes], sha: hashlib._Hash) -> Iterator[bytes]:
    for chunk in chunks:
        sha.update(chunk)
        yield chunk


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class _ChunkReader(io.RawIOBase):
    """The engine's export stream (an iterable of byte chunks) as a file to read from."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        count = min(len(buffer), len(self._pending))
        buffer[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count
