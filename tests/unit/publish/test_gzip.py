"""Parallel gzip: any gzip reader gets the layer back, and the same layer gives the same bytes
(the blob digest a rerun relies on)."""

from __future__ import annotations

import gzip
import os
import subprocess
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from ngc_builder.publish.gzip import CHUNK, gzip_stream

pytestmark = pytest.mark.unit
# Random bytes (incompressible) and a long repeat that crosses chunk boundaries (where the
# primed window must keep back-references working).
LAYER = os.urandom(CHUNK + 12345) + b"libcudnn.so.9 " * (CHUNK // 5) + os.urandom(777)


def chunked(data: bytes, size: int = CHUNK) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def compressed(data: bytes, workers: int = 2, size: int = CHUNK) -> bytes:
    with ThreadPoolExecutor(workers) as pool:
        return b"".join(gzip_stream(chunked(data, size), pool))


def test_gzip_readers_get_the_layer_back() -> None:
    blob = compressed(LAYER)
    assert gzip.decompress(blob) == LAYER
    assert zlib.decompress(blob, wbits=31) == LAYER
    assert subprocess.run(["gzip", "-t"], input=blob, check=False).returncode == 0


def test_the_same_layer_gives_the_same_bytes_whatever_the_threads() -> None:
    assert compressed(LAYER, workers=1) == compressed(LAYER, workers=4)


def test_priming_keeps_repeats_across_chunks_small() -> None:
    repeated = b"0123456789abcdef" * (4 * CHUNK // 16)
    blob = compressed(repeated)
    assert gzip.decompress(blob) == repeated
    assert len(blob) < len(repeated) // 50  # unprimed chunks would restart the dictionary


@pytest.mark.parametrize("data", [b"", b"x", bytes(range(100))], ids=["empty", "one", "hundred"])
def test_empty_and_tiny_layers(data: bytes) -> None:
    assert gzip.decompress(compressed(data)) == data


def test_odd_chunk_sizes() -> None:
    assert gzip.decompress(compressed(LAYER, size=70001)) == LAYER
