"""`ngc-builder security` against Debian's real security suites (bookworm, bullseye and
trixie for releases/26.12.yaml): the signed InRelease through gpgv, the real Packages.xz, the
real .debs into a package cache of the test's own. Each finding is checked with Debian's own
tools: dpkg orders the versions, dpkg-deb opens the .deb and its changelog names the CVEs."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.integration.conftest import cli

pytestmark = pytest.mark.integration
MANIFEST = REPO / "releases" / "26.12.yaml"


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("security")
    done = cli("security", str(MANIFEST), "--cache-dir", str(out / "cache"), "--report",
               str(out / "fixes.md"), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return {"updates": json.loads(done.stdout)["updates"], "cache": out / "cache",
            "report": (out / "fixes.md").read_text()}


def newer(left: str, right: str) -> bool:
    return subprocess.run(["dpkg", "--compare-versions", left, "gt", right],
                          check=False).returncode == 0


def changelog(deb: Path, name: str) -> str | None:
    """The .deb's Debian changelog as dpkg-deb and tar give it; None when its doc folder is
    a link to another binary's."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True,
                          check=True).stdout
    listed = subprocess.run(["tar", "-t"], input=data, capture_output=True,
                            check=True).stdout.decode().splitlines()
    for wanted in (f"./usr/share/doc/{name}/changelog.Debian.gz",
                   f"./usr/share/doc/{name}/changelog.gz"):
        if wanted in listed:
            member = subprocess.run(["tar", "-xO", wanted], input=data, capture_output=True,
                                    check=True).stdout
            return gzip.decompress(member).decode("utf-8", "replace")
    return None


def test_every_finding_is_newer_than_the_lock_and_in_the_lock(scanned: dict[str, Any]) -> None:
    lock = (REPO / "releases" / "26.12.lock.json").read_text()
    assert scanned["updates"], "the suites have fixes for a lock made months ago"
    for update in scanned["updates"]:
        assert newer(update["fixed"], update["locked"]), update
        assert f'"name": "{update["name"]}"' in lock
        assert update["suite"] in ("bookworm-security", "bullseye-security", "trixie-security")


def test_the_cves_are_the_ones_the_debs_own_changelog_names(scanned: dict[str, Any]) -> None:
    checked = 0
    for update in scanned["updates"]:
        debs = list(scanned["cache"].rglob(f"{update['name']}_*.deb"))
        named = [d for d in debs if hashlib.sha256(d.read_bytes()).hexdigest() == update["sha256"]]
        if not named or update["unread"]:
            continue  # a binary whose changelog another binary of its source carries
        text = changelog(named[0], update["name"])
        if text is None:
            continue
        assert all(cve in text for cve in update["cves"]), update["name"]
        assert f"({update['fixed'].split(':')[-1]})" in text or f"({update['fixed']})" in text
        checked += 1
    assert checked >= 5, checked
    assert "| Source | Locked | Fixed |" in scanned["report"]


def test_a_mirror_without_the_security_suite_fails_naming_the_url(tmp_path: Path) -> None:
    """Debian's main archive holds no `-security` suite: one line naming the URL, no
    finding printed."""
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "security", str(MANIFEST), "--cache-dir",
         str(tmp_path)], capture_output=True, text=True, cwd=REPO, check=False, timeout=600,
        env={"PATH": "/usr/bin:/bin", "NGC_DEBIAN_SECURITY_MIRROR": "http://deb.debian.org/debian"})
    assert done.returncode != 0
    assert "http://deb.debian.org/debian/dists/" in done.stderr
    assert done.stdout == ""
