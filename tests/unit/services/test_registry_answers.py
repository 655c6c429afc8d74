"""A registry's answers are hostile input: made here by a real server on 127.0.0.1 that
answers another manifest's bytes for a digest, a Docker-Content-Digest naming other bytes,
and bodies far over any bound (announced, or only streamed). The registry service refuses each
in one place, for every caller, and reads no more than its bound of a body."""

from __future__ import annotations

import json

import pytest

from ngc_builder.services.registry import HttpRegistry, RegistryError
from ngc_builder.services.registry_errors import RegistryUnavailable
from ngc_builder.services.registry_http import BLOB, MANIFEST, TAGS, TOKEN
from tests.unit.services.hostile_registry import (
    HostileRegistry,
    Huge,
    digest_of,
    serve_manifest,
)

pytestmark = pytest.mark.unit
IMAGE = "application/vnd.oci.image.manifest.v1+json"
OURS = json.dumps({"schemaVersion": 2, "mediaType": IMAGE, "layers": [], "config": {
    "digest": "sha256:" + "1" * 64, "size": 2}}).encode()
THEIRS = OURS.replace(b'"schemaVersion": 2', b'"schemaVersion": 2, "x": "forged"')
# What the client may have let the server push past its bound before it hung up: its last
# 64 KiB read, and the socket buffers of both ends on loopback (Linux grows them to a few MB;
# 3.4 MB measured past a 16 MiB bound).
SLACK = 12 * 1024 * 1024


@pytest.fixture
def registry(liar: HttpRegistry) -> HttpRegistry:
    return liar


def test_another_manifests_bytes_for_a_digest_are_refused(registry: HttpRegistry) -> None:
    """The registry names the digest asked for, and sends other bytes."""
    asked = digest_of(OURS)
    serve_manifest("jax", asked, THEIRS, IMAGE, digest=asked)
    with pytest.raises(RegistryError, match=f"/v2/jax/manifests/{asked}: the registry "
                       f"answered bytes whose digest is {digest_of(THEIRS)}, not '{asked}'"):
        registry.get_manifest("jax", asked)
    assert registry.observed == {}  # nothing recorded for a no-op run to trust


def test_a_tag_whose_named_digest_is_not_its_bytes_is_refused(registry: HttpRegistry) -> None:
    serve_manifest("jax", "26.11-py3", THEIRS, IMAGE, digest=digest_of(OURS))
    with pytest.raises(RegistryError, match=f"whose digest is {digest_of(THEIRS)}, not "
                       f"'{digest_of(OURS)}'"):
        registry.get_manifest("jax", "26.11-py3")


def test_an_honest_answer_is_the_digest_of_its_bytes(registry: HttpRegistry) -> None:
    serve_manifest("jax", "26.11-py3", OURS, IMAGE)
    serve_manifest("jax", digest_of(OURS), OURS, IMAGE)
    by_tag = registry.get_manifest("jax", "26.11-py3")
    by_digest = registry.get_manifest("jax", digest_of(OURS))
    assert by_tag is not None and by_tag.digest == digest_of(OURS) and by_tag.body == OURS
    assert by_digest == by_tag


def test_a_head_by_digest_naming_another_digest_is_refused(registry: HttpRegistry) -> None:
    serve_manifest("jax", digest_of(OURS), OURS, IMAGE, digest=digest_of(THEIRS))
    with pytest.raises(RegistryError, match="the registry names 'sha256:"):
        registry.manifest_digest("jax", digest_of(OURS))


@pytest.mark.parametrize("reference", ["../../v2/_catalog", "-x", "a b", "sha256:abc"])
def test_a_reference_that_is_no_tag_or_digest_never_reaches_a_url(
        registry: HttpRegistry, reference: str) -> None:
    """Digests in a registry's own answers (an index's entries) are pasted into URLs."""
    with pytest.raises(RegistryError, match="is not a tag or a sha256 digest"):
        registry.get_manifest("jax", reference)
    with pytest.raises(RegistryError, match="is not a sha256 digest"):
        registry.get_blob("jax", reference)
    assert HostileRegistry.seen == []


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "streamed"])
def test_a_huge_config_is_refused_within_its_bound(registry: HttpRegistry,
                                                  announced: bool) -> None:
    """A 256 MB config: refused at its Content-Length before a byte of it is read, or (sent
    without one) once the bytes read pass the bound; never read whole."""
    digest = "sha256:" + "c" * 64
    huge = HostileRegistry.huge[f"/v2/jax/blobs/{digest}"] = Huge(256 * 1024 * 1024, announced)
    said = (r"of 268435456 bytes \(Content-Length\) is over the limit of 16 MiB: not read"
            if announced else r"of more than 16 MiB \(the limit\): not read further")
    with pytest.raises(RegistryError, match=f"/v2/jax/blobs/{digest}: a blob {said}"):
        registry.get_blob("jax", digest)
    assert huge.done.wait(10)
    assert huge.sent < (0 if announced else BLOB.size) + SLACK


def test_a_huge_manifest_is_refused_within_its_bound(registry: HttpRegistry) -> None:
    huge = HostileRegistry.huge["/v2/jax/manifests/26.11-py3"] = Huge(64 * 1024 * 1024, False)
    with pytest.raises(RegistryError, match="a manifest of more than 4 MiB"):
        registry.get_manifest("jax", "26.11-py3")
    assert huge.done.wait(10) and huge.sent < MANIFEST.size + SLACK


def test_an_answer_cut_mid_body_is_a_lost_connection_retried_not_a_crash(
        registry: HttpRegistry) -> None:
    """Read from the raw stream, a body cut short is urllib3's error: it must come out as
    the registry being unavailable (which the caller retries), never as an internal error."""
    HostileRegistry.huge["/v2/jax/tags/list"] = Huge(1024 * 1024, cut=2 * 64 * 1024)
    with pytest.raises(RegistryUnavailable, match="tags/list"):
        registry.list_tags("jax")


def test_a_huge_tag_list_is_refused(registry: HttpRegistry) -> None:
    HostileRegistry.huge["/v2/jax/tags/list"] = Huge(TAGS.size + 1)
    with pytest.raises(RegistryError, match="a tag list of 8388609 bytes"):
        registry.list_tags("jax")


def test_a_huge_token_answer_is_refused(registry: HttpRegistry) -> None:
    """The token service is wherever the registry's challenge says: its answer is bounded too."""
    HostileRegistry.challenged["/v2/jax/tags/list"] = "/token"
    HostileRegistry.huge["/token"] = Huge(TOKEN.size * 64, announced=False)
    with pytest.raises(RegistryError, match=r"token service of 127\.0\.0\.1:[0-9]+: .*/token: "
                       r"a token answer of more than 1 MiB"):
        registry.list_tags("jax")
    huge = HostileRegistry.huge["/token"]
    assert huge.done.wait(10) and huge.sent < TOKEN.size + SLACK


def test_a_redirect_is_followed_without_its_body(registry: HttpRegistry) -> None:
    """requests reads every redirect's body whole: redirects are followed by the service."""
    digest = digest_of(b"{}")
    HostileRegistry.moved[f"/v2/jax/blobs/{digest}"] = "/storage/blob"
    HostileRegistry.answers["/storage/blob"] = (b"{}", {})
    assert registry.get_blob("jax", digest) == b"{}"
    redirect = HostileRegistry.huge[f"/v2/jax/blobs/{digest}"] = Huge(
        256 * 1024 * 1024, announced=False, location="/storage/blob")  # a redirect's own body
    assert registry.get_blob("jax", digest) == b"{}"
    assert redirect.done.wait(10) and redirect.sent < SLACK
    HostileRegistry.moved["/storage/blob"] = f"/v2/jax/blobs/{digest}"  # a loop
    with pytest.raises(RegistryError, match="more than 5 redirects"):
        registry.get_blob("jax", digest)


def test_each_bound_says_its_size() -> None:
    assert [str(bound) for bound in (MANIFEST, BLOB, TOKEN, TAGS)] == [
        "4 MiB", "16 MiB", "1 MiB", "8 MiB"]
