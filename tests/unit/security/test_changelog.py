"""The fixes an update brings, read from its own .deb: `changelog.Debian.gz` (or a native
package's `changelog.gz`) in data.tar, the entries newer than the locked version and the CVEs
they name; every read bounded."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from ngc_builder.security import changelog
from ngc_builder.security.changelog import Entry, changelog_text, entries_after
from tests.unit.lock.debs import ar_member, tar_of

pytestmark = pytest.mark.unit
OPENSSL = """\
openssl (3.0.22-1~deb12u2) bookworm-security; urgency=high

  * CVE-2026-84782 ("DTLS Retransmits Handshake Messages")
  * CVE-2026-35189, and CVE-2026-84782 again

 -- Someone <someone@debian.org>  Wed, 21 Oct 2026 16:54:24 +0700

openssl (3.0.22-1~deb12u1) bookworm-security; urgency=medium

  * Import 3.0.22, no CVE in this entry

 -- Someone <someone@debian.org>  Wed, 23 Sep 2026 10:52:17 +0700

openssl (3.0.20-1~deb12u2) bookworm-security; urgency=medium

  * CVE-2026-7383 (what the locked version already fixed)

 -- Someone <someone@debian.org>  Mon, 01 Jun 2026 10:00:00 +0700
"""


def deb_with(path: Path, files: dict[str, bytes], member: str = "data.tar.xz") -> Path:
    compression = member.removeprefix("data.tar").removeprefix(".")
    data = tar_of(files, compression) if compression in ("", "xz", "gz") else b"\x28\xb5\x2f\xfd"
    path.write_bytes(b"!<arch>\n" + ar_member("debian-binary", b"2.0\n")
                     + ar_member("control.tar.xz", tar_of({"./control": b"Package: x\n"}))
                     + ar_member(member, data))
    return path


def gz(text: str) -> bytes:
    return gzip.compress(text.encode())


def test_the_entries_after_the_locked_version_and_their_cves() -> None:
    assert entries_after(OPENSSL, "3.0.20-1~deb12u2") == [
        Entry("3.0.22-1~deb12u2", "bookworm-security", ("CVE-2026-84782", "CVE-2026-35189")),
        Entry("3.0.22-1~deb12u1", "bookworm-security", ())]
    assert entries_after(OPENSSL, "3.0.22-1~deb12u2") == []


def test_a_binnmu_of_the_locked_version_counts_as_its_source_version() -> None:
    assert [e.version for e in entries_after(OPENSSL, "3.0.22-1~deb12u1+b2")] == [
        "3.0.22-1~deb12u2"]


@pytest.mark.parametrize("member", ["data.tar.xz", "data.tar.gz", "data.tar"])
def test_the_changelog_is_read_from_the_debs_data_member(tmp_path: Path, member: str) -> None:
    deb = deb_with(tmp_path / "libssl3.deb", {
        "./usr/share/doc/libssl3/copyright": b"...",
        "./usr/share/doc/libssl3/changelog.gz": gz("upstream's own history, not Debian's"),
        "./usr/share/doc/libssl3/changelog.Debian.gz": gz(OPENSSL)}, member)
    assert changelog_text(deb, "libssl3", "openssl") == OPENSSL


def test_a_native_packages_changelog_is_its_changelog_gz(tmp_path: Path) -> None:
    native = OPENSSL.replace("openssl (", "apt (")
    deb = deb_with(tmp_path / "apt.deb", {"./usr/share/doc/apt/changelog.gz": gz(native)})
    assert changelog_text(deb, "apt", "apt") == native
    assert changelog_text(deb, "apt", "openssl") is None  # entries of another source


def test_another_packages_changelog_is_not_taken(tmp_path: Path) -> None:
    deb = deb_with(tmp_path / "libssl3.deb",
                   {"./usr/share/doc/openssl/changelog.Debian.gz": gz(OPENSSL),
                    "./usr/share/doc/libssl3-evil/changelog.Debian.gz": gz(OPENSSL)})
    assert changelog_text(deb, "libssl3", "openssl") is None


def test_a_doc_folder_linked_to_another_package_gives_none(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        link = tarfile.TarInfo("./usr/share/doc/libssl3")
        link.type, link.linkname = tarfile.SYMTYPE, "openssl"
        tar.addfile(link)
    deb = tmp_path / "libssl3.deb"
    deb.write_bytes(b"!<arch>\n" + ar_member("debian-binary", b"2.0\n")
                    + ar_member("data.tar.xz", buffer.getvalue()))
    assert changelog_text(deb, "libssl3", "openssl") is None


def test_a_data_member_that_decompresses_past_its_bound_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changelog, "DATA_LIMIT", 64 * 1024)
    deb = deb_with(tmp_path / "bomb.deb", {
        "./usr/share/big": bytes(1 << 20),  # a MB of zeros: a few hundred bytes of xz
        "./usr/share/doc/bomb/changelog.Debian.gz": gz(OPENSSL)})
    assert changelog_text(deb, "bomb", "openssl") is None


def test_what_cannot_be_read_gives_none(tmp_path: Path) -> None:
    zstd = deb_with(tmp_path / "zst.deb", {}, "data.tar.zst")
    assert changelog_text(zstd, "x", "x") is None
    not_ar = tmp_path / "plain.deb"
    not_ar.write_bytes(b"plain text")
    assert changelog_text(not_ar, "x", "x") is None
    assert changelog_text(tmp_path / "missing.deb", "x", "x") is None
