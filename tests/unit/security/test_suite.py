"""The security suite's index, trusted only once checked: a real InRelease of
bookworm-security (as Debian signed it) through the real gpgv and Debian's keyring; then
Packages.xz against the hashes it lists, from a session that answers what a test tells it."""

from __future__ import annotations

import hashlib
import lzma
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.errors import StepError
from ngc_builder.security import suite
from ngc_builder.security.suite import (
    SuitePackage,
    apt_package,
    indexed_file,
    packages_of,
    signed_release,
    suite_packages,
)

pytestmark = pytest.mark.unit
SIGNED = (Path(__file__).parent / "data" / "bookworm-security.InRelease").read_bytes()
DAY_SIGNED = datetime(2026, 11, 28, 12, tzinfo=UTC)  # between its Date and Valid-Until
MIRROR = "http://mirror.test/debian-security"
STANZAS = """\
Package: libssl3
Source: openssl
Version: 3.0.22-1~deb12u2
Architecture: amd64
Filename: pool/updates/main/o/openssl/libssl3_3.0.22-1~deb12u2_amd64.deb
Size: 2039888
SHA256: cb4784740daa9b3b0eaea2b444bbefa686794afbbf3d678d238c1fd9875f2efd
Description: Secure Sockets Layer toolkit - shared libraries
 continued description line

Package: tzdata
Version: 2026f-0+deb12u1
Architecture: all
Filename: pool/updates/main/t/tzdata/tzdata_2026f-0+deb12u1_all.deb
Size: 261000
SHA256: 0000000000000000000000000000000000000000000000000000000000000000

Package: no-size
Version: 1
Filename: pool/updates/main/n/no-size/no-size_1_amd64.deb
SHA256: 1111111111111111111111111111111111111111111111111111111111111111
"""


class Answer:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.raw = self

    def __enter__(self) -> Answer:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def raise_for_status(self) -> None:
        return None

    def read(self, limit: int, decode_content: bool = False) -> bytes:
        return self.body[:limit]


class Session:
    """Answers each URL with the bytes it was given, and records what was asked."""

    def __init__(self, answers: dict[str, bytes]) -> None:
        self.answers, self.asked = answers, list[str]()

    def get(self, url: str, **_options: Any) -> Answer:
        self.asked.append(url)
        return Answer(self.answers[url])


def release_of(signed: bytes, codename: str = "bookworm-security",
               today: datetime = DAY_SIGNED) -> dict[str, str]:
    session = Session({f"{MIRROR}/dists/{codename}/InRelease": signed})
    return signed_release(session, MIRROR, codename, today=today)  # type: ignore[arg-type]


def test_debians_signature_is_checked_by_gpgv_and_the_signed_fields_read() -> None:
    fields = release_of(SIGNED)
    assert fields["Codename"] == "bookworm-security"
    digest, size = indexed_file(fields, "main/binary-amd64/Packages.xz") or ("", 0)
    assert (digest[:12], size) == ("89426314d157", 383216)
    assert indexed_file(fields, "main/binary-riscv64/Packages.xz") is None


def test_a_changed_byte_in_the_signed_text_is_refused() -> None:
    tampered = SIGNED.replace(b"Codename: bookworm-security", b"Codename: bookworm-securitx")
    with pytest.raises(StepError, match="signature not accepted"):
        release_of(tampered)


def test_an_unsigned_release_is_refused() -> None:
    body = SIGNED.split(b"-----BEGIN PGP SIGNATURE-----")[0].split(b"\n\n", 1)[1]
    with pytest.raises(StepError, match="signature not accepted"):
        release_of(body)


def test_an_old_signed_release_replayed_past_its_valid_until_is_refused() -> None:
    with pytest.raises(StepError, match="expired Sat, 05 Dec 2026"):
        release_of(SIGNED, today=datetime(2027, 1, 5, tzinfo=UTC))


def test_a_release_signed_for_another_suite_is_refused() -> None:
    with pytest.raises(StepError, match="signed for 'bookworm-security', not 'trixie-security'"):
        release_of(SIGNED, codename="trixie-security")


def packages_answer(text: str, other: bool = False) -> tuple[Session, dict[str, str]]:
    """A session serving `text` as Packages.xz, and a release listing it (`other`: listing
    other bytes of the same size)."""
    data = lzma.compress(text.encode())
    described = data[::-1] if other else data
    release = {"SHA256": f" {hashlib.sha256(described).hexdigest()} {len(described)} "
                         "main/binary-amd64/Packages.xz"}
    path = f"{MIRROR}/dists/bookworm-security/main/binary-amd64/Packages.xz"
    return Session({path: data}), release


def test_the_packages_index_is_taken_when_its_hash_is_the_signed_one() -> None:
    session, release = packages_answer(STANZAS)
    found = suite_packages(session, MIRROR, "bookworm-security", release,  # type: ignore[arg-type]
                           "amd64")
    assert [(p.name, p.source, p.arch) for p in found] == [("libssl3", "openssl", "amd64"),
                                                           ("tzdata", "tzdata", "all")]
    assert found[0].size == 2039888


def test_a_packages_index_other_than_the_signed_one_is_refused() -> None:
    session, release = packages_answer(STANZAS, other=True)
    with pytest.raises(StepError, match="differs from the signed InRelease"):
        suite_packages(session, MIRROR, "bookworm-security", release,  # type: ignore[arg-type]
                       "amd64")


def test_an_index_that_decompresses_past_its_bound_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite, "INDEX_LIMIT", 1000)
    session, release = packages_answer("Package: a\n" * 500)
    with pytest.raises(StepError, match="decompresses past 1000 bytes"):
        suite_packages(session, MIRROR, "bookworm-security", release,  # type: ignore[arg-type]
                       "amd64")


def test_a_release_that_lists_no_index_for_the_arch_is_refused() -> None:
    session, _release = packages_answer(STANZAS)
    with pytest.raises(StepError, match=r"lists no main/binary-amd64/Packages\.xz"):
        suite_packages(session, MIRROR, "bookworm-security", {},  # type: ignore[arg-type]
                       "amd64")


@pytest.mark.parametrize("field, value", [
    ("file", "pool/../../../etc/passwd"), ("file", "/etc/passwd"),
    ("name", "libssl3; rm -rf /"), ("sha256", "not-a-hash")])
def test_an_index_entry_no_lock_could_hold_is_refused_before_any_download(
        field: str, value: str) -> None:
    good = packages_of(STANZAS)[0]
    hostile = SuitePackage(**{**good.__dict__, field: value})
    with pytest.raises(StepError, match=f"the index's {field} is not one a lock could hold"):
        apt_package(hostile)


def test_a_stanza_whose_names_could_carry_escapes_is_skipped() -> None:
    hostile = STANZAS.replace("Source: openssl", "Source: openssl\x1b[2J").replace(
        "Version: 2026f-0+deb12u1", "Version: 2026f\x07;rm")
    assert [p.name for p in packages_of(hostile)] == []
    assert [p.name for p in packages_of(STANZAS)] == ["libssl3", "tzdata"]
