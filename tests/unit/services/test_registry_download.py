"""A blob downloaded into a file (a SquashFS: gigabytes) from a registry that may lie: it is
streamed, never held, and only its descriptor's size and digest are accepted; more bytes
than the descriptor's are not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.services.registry import HttpRegistry, RegistryError
from tests.unit.services.hostile_registry import HostileRegistry, Huge, digest_of, serve_blob

pytestmark = pytest.mark.unit
BODY = bytes(range(256)) * 4096  # 1 MiB
SLACK = 12 * 1024 * 1024  # what loopback's socket buffers let the server push past a bound


def test_the_blob_lands_in_the_file_byte_for_byte(liar: HttpRegistry, tmp_path: Path) -> None:
    serve_blob("pytorch", digest_of(BODY), BODY)
    liar.download_blob("pytorch", digest_of(BODY), len(BODY), tmp_path / "x.sqfs")
    assert (tmp_path / "x.sqfs").read_bytes() == BODY


@pytest.mark.parametrize(("served", "said"), [
    (BODY[:-1] + b"!", "received 1048576 bytes of digest sha256:"),  # the size, other bytes
    (BODY[:1000], "received 1000 bytes of digest"),                   # cut short
])
def test_other_bytes_than_the_descriptors_are_refused(liar: HttpRegistry, tmp_path: Path,
                                                      served: bytes, said: str) -> None:
    serve_blob("pytorch", digest_of(BODY), served)
    with pytest.raises(RegistryError, match=said):
        liar.download_blob("pytorch", digest_of(BODY), len(BODY), tmp_path / "x.sqfs")


@pytest.mark.parametrize("announced", [True, False])
def test_a_body_longer_than_the_descriptor_is_not_read(liar: HttpRegistry, tmp_path: Path,
                                                       announced: bool) -> None:
    digest = "sha256:" + "d" * 64
    huge = HostileRegistry.huge[f"/v2/pytorch/blobs/{digest}"] = Huge(256 << 20, announced)
    with pytest.raises(RegistryError, match=r"a blob of .*(over the limit|the limit)"):
        liar.download_blob("pytorch", digest, 1 << 20, tmp_path / "x.sqfs")
    assert huge.done.wait(10) and huge.sent < (1 << 20) + SLACK
    assert (tmp_path / "x.sqfs").stat().st_size <= 1 << 20


def test_a_digest_that_is_no_digest_never_reaches_a_url(liar: HttpRegistry,
                                                        tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="is not a sha256 digest"):
        liar.download_blob("pytorch", "../../manifests/latest", 10, tmp_path / "x")
    assert HostileRegistry.seen == []
