"""The host's Debian mirror: what builds and the package cache use."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.services import mirror
from ngc_builder.services.mirror import _first_mirror, host_debian_mirror, host_security_mirror

DEB822 = """\
# Modernized from /etc/apt/sources.list
Types: deb
URIs: http://deb.debian.org/debian-security/
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.com/debian/
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

ONE_LINE = """\
# deb http://commented.example.com/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://security.debian.org/debian-security bookworm-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64] http://ftp.example.org/debian bookworm main
deb http://later.example.org/debian bookworm-updates main
"""  # noqa: E501


def test_first_mirror_deb822_skips_security() -> None:
    assert _first_mirror(DEB822) == "http://mirror.example.com/debian"


def test_first_mirror_one_line_with_options_skips_security_and_comments() -> None:
    assert _first_mirror(ONE_LINE) == "http://ftp.example.org/debian"


def test_first_mirror_plain_one_line() -> None:
    assert _first_mirror("deb http://deb.debian.org/debian bookworm main\n") == (
        "http://deb.debian.org/debian")


def test_first_mirror_none_when_only_security_or_nothing() -> None:
    assert _first_mirror("URIs: http://deb.debian.org/debian-security\n") is None
    assert _first_mirror("# nothing configured\n") is None


def test_host_debian_mirror_env_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sources = tmp_path / "debian.sources"
    sources.write_text(DEB822, encoding="utf-8")
    monkeypatch.setattr(mirror, "APT_SOURCES", (sources,))
    monkeypatch.setenv("NGC_DEBIAN_MIRROR", "http://corp.example.com/debian")
    assert host_debian_mirror() == "http://corp.example.com/debian"


def test_host_debian_mirror_reads_apt_files_in_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("NGC_DEBIAN_MIRROR", raising=False)
    missing = tmp_path / "missing.sources"
    security_only = tmp_path / "security.sources"
    security_only.write_text("URIs: http://deb.debian.org/debian-security\n", encoding="utf-8")
    legacy = tmp_path / "sources.list"
    legacy.write_text(ONE_LINE, encoding="utf-8")
    monkeypatch.setattr(mirror, "APT_SOURCES", (missing, security_only, legacy))
    assert host_debian_mirror() == "http://ftp.example.org/debian"
    monkeypatch.setattr(mirror, "APT_SOURCES", (missing,))
    assert host_debian_mirror() is None


def test_the_security_mirror_is_the_one_the_other_skips(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert _first_mirror(DEB822, security=True) == "http://deb.debian.org/debian-security"
    assert _first_mirror(ONE_LINE, security=True) == "http://security.debian.org/debian-security"
    legacy = tmp_path / "sources.list"
    legacy.write_text(ONE_LINE, encoding="utf-8")
    monkeypatch.setattr(mirror, "APT_SOURCES", (legacy,))
    monkeypatch.delenv("NGC_DEBIAN_SECURITY_MIRROR", raising=False)
    assert host_security_mirror() == "http://security.debian.org/debian-security"
    monkeypatch.setenv("NGC_DEBIAN_SECURITY_MIRROR", "http://corp.example.com/debian-security")
    assert host_security_mirror() == "http://corp.example.com/debian-security"
