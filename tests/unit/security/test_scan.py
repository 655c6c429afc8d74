"""Which locked .debs the security suite fixed, on every platform of the lock, and the report
that names their CVEs (one line per source package; Markdown and JSON with all of them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ngc_builder.lock.models import AptPackage, ImageLock, OsLock, PlatformLock, ReleaseLock
from ngc_builder.security.changelog import Entry
from ngc_builder.security.report import by_source, fixed_line, markdown, summary, to_json
from ngc_builder.security.scan import Held, Update, holdings, newest, updates, with_changelogs
from ngc_builder.security.suite import SuitePackage
from tests.unit.locks import sha
from tests.unit.security.test_changelog import OPENSSL, deb_with, gz

pytestmark = pytest.mark.unit


def deb(name: str, version: str, arch: str = "amd64") -> AptPackage:
    return AptPackage(name=name, version=version, arch=arch, sha256=sha(name + version),
                      file=f"pool/main/x/{name}/{name}_{version}_{arch}.deb", size=1)


def offered(name: str, version: str, arch: str = "amd64", source: str = "openssl") -> SuitePackage:
    return SuitePackage(name, version, arch, source, f"pool/updates/main/{name}_{version}.deb",
                        sha(name + version), 1)


def release_lock() -> ReleaseLock:
    bookworm = OsLock(suite="bookworm", epoch=1, apt=[deb("libssl3", "3.0.20-1~deb12u2"),
                                                      deb("tzdata", "2026b-0", "all")])
    arm64 = OsLock(suite="bookworm", epoch=1, apt=[deb("libssl3", "3.0.20-1~deb12u2", "arm64")])
    return ReleaseLock(
        release="26.12", os={"debian-bookworm": bookworm},
        images={"base": ImageLock(inputs={}, apt=[deb("openssl", "3.0.20-1~deb12u2")]),
                "pytorch": ImageLock(inputs={}, apt=[deb("openssl", "3.0.20-1~deb12u2")])},
        platforms={"linux/arm64": PlatformLock(
            os={"debian-bookworm": arm64},
            images={"base": ImageLock(inputs={}, apt=[deb("openssl", "3.0.21", "arm64")])})})


BASES = {"base": "debian-bookworm", "pytorch": "debian-bookworm"}


def test_every_platforms_os_and_images_are_held_by_suite_arch_and_name() -> None:
    held = {(h.arch, h.name, h.version): h.where for h in holdings(release_lock(), BASES)}
    assert held == {
        ("amd64", "libssl3", "3.0.20-1~deb12u2"): ("debian-bookworm",),
        ("all", "tzdata", "2026b-0"): ("debian-bookworm",),
        ("amd64", "openssl", "3.0.20-1~deb12u2"): ("base", "pytorch"),
        ("arm64", "libssl3", "3.0.20-1~deb12u2"): ("debian-bookworm (arm64)",),
        ("arm64", "openssl", "3.0.21"): ("base (arm64)",)}
    assert {h.codename for h in holdings(release_lock(), BASES)} == {"bookworm-security"}


def test_only_newer_versions_are_updates_and_all_packages_are_found_in_any_arch() -> None:
    suites = {("bookworm-security", "amd64"): newest([
        offered("openssl", "3.0.19"), offered("openssl", "3.0.22-1~deb12u2"),
        offered("libssl3", "3.0.20-1~deb12u2"),  # what is locked: no update
        offered("tzdata", "2026f-0", "all", "tzdata")]),
        ("bookworm-security", "arm64"): newest([offered("openssl", "3.0.21", "arm64")])}
    found = updates(holdings(release_lock(), BASES), suites)
    assert [(u.held.name, u.held.arch, u.fixed.version) for u in found] == [
        ("tzdata", "all", "2026f-0"), ("openssl", "amd64", "3.0.22-1~deb12u2")]


def test_a_binary_without_a_changelog_is_read_from_another_of_its_source(tmp_path: Path) -> None:
    linked = deb_with(tmp_path / "libssl3.deb", {})  # its doc folder elsewhere
    own = deb_with(tmp_path / "openssl.deb",
                   {"./usr/share/doc/openssl/changelog.Debian.gz": gz(OPENSSL)})
    debs = {"libssl3": linked, "openssl": own}
    asked: list[str] = []

    def deb_of(package: SuitePackage) -> Path:
        asked.append(package.name)
        return debs[package.name]

    found = [Update(Held("bookworm-security", "amd64", name, "3.0.20-1~deb12u2", ("base",)),
                    offered(name, "3.0.22-1~deb12u2")) for name in ("libssl3", "openssl")]
    read = with_changelogs(found, deb_of)
    assert asked == ["libssl3", "openssl"]
    assert [u.cves for u in read] == [("CVE-2026-84782", "CVE-2026-35189")] * 2
    assert all(u.unread is None for u in read)


def test_no_changelog_at_all_says_so_instead_of_no_cve(tmp_path: Path) -> None:
    found = [Update(Held("bookworm-security", "all", "ucf", "3.0043", ("caffe",)),
                    offered("ucf", "3.0043+deb11u2", "all", "ucf"))]
    read = with_changelogs(found, lambda _package: deb_with(tmp_path / "ucf.deb", {}))
    assert "CVEs unknown: no binary of ucf 3.0043+deb11u2" in fixed_line(by_source(read)[0])


def reported() -> list[Update]:
    held = Held("bookworm-security", "amd64", "libssl3", "3.0.20-1~deb12u2", ("base",))
    cves = tuple(f"CVE-2026-{n}" for n in range(1000, 1010))
    return [Update(held, offered("libssl3", "3.0.22"), (Entry("3.0.22", "s", cves),)),
            Update(Held("bookworm-security", "amd64", "openssl", "3.0.20-1~deb12u2",
                        ("pytorch",)), offered("openssl", "3.0.22"),
                   (Entry("3.0.22", "s", cves[:2]),))]


def test_the_report_says_one_line_per_source_and_every_cve_in_markdown_and_json() -> None:
    found = reported()
    [line] = [fixed_line(group) for group in by_source(found)]
    assert line.startswith("openssl 3.0.20-1~deb12u2 -> 3.0.22 (bookworm-security; "
                           "libssl3:amd64, openssl:amd64): 10 CVE(s): CVE-2026-1000")
    assert line.endswith("and 2 more; in base, pytorch")
    assert "CVE-2026-1009" in markdown(found, "26.12")
    assert json.loads(to_json(found))["updates"][1]["cves"] == ["CVE-2026-1000", "CVE-2026-1001"]
    assert summary(found) == ("security: 2 locked .deb(s) of 1 source package(s) have fixes in "
                              "the security suite, naming 10 CVE(s)")
    assert summary([]).endswith("every locked .deb is the newest its security suite has")
