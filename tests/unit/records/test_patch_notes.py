"""A patch release's notes name its fixes (the report written beside its manifest) and say
where the monthly tag points, as its manifest chose."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.records.patch_notes import security_lines
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
PATCH = GOOD_RELEASE.replace('release: "26.11"\n', 'release: "26.11"\npatch: 1\n')


def test_a_monthly_release_has_no_security_section(write_release: WriteRelease) -> None:
    assert security_lines(load_release(write_release(GOOD_RELEASE, lock=False))) == []


def test_the_fixes_and_the_monthly_tag_that_stays(write_release: WriteRelease) -> None:
    manifest = write_release(PATCH, name="26.11.1.yaml", lock=False)
    manifest.with_suffix(".security.md").write_text(
        "# Security fixes for 26.11.1\n\n| openssl | ... | 2 CVE(s): CVE-2026-1, CVE-2026-2 |\n")
    text = "\n".join(security_lines(load_release(manifest)))
    assert text.startswith("## Security fixes\n\nPatch 1 of 26.11: ")
    assert "`26.11-py3` stays on the 26.11 images; `26.11.1-py3` names the patched ones" in text
    assert "CVE-2026-2" in text and "# Security fixes for" not in text


def test_the_monthly_tag_that_follows_and_a_missing_report(write_release: WriteRelease) -> None:
    manifest = write_release(PATCH + "aliases: [26.11-py3]\n", name="26.11.1.yaml", lock=False)
    text = "\n".join(security_lines(load_release(manifest)))
    assert "`26.11-py3` follows it: the manifest lists `26.11-py3` among its aliases" in text
    assert "(no `26.11.1.security.md` beside the manifest" in text


def test_a_patch_release_is_archived_between_its_month_and_the_next(tmp_path: Path) -> None:
    from ngc_builder.records import archive

    for release in ("26.11", "26.12", "26.12.1", "26.12.2", "26.12.10", "27.01", "26.13"):
        (tmp_path / release).mkdir()
        (tmp_path / release / "release.json").write_text("{}")
    assert archive.previous_release(tmp_path, "26.12.1") == "26.12"
    assert archive.previous_release(tmp_path, "26.12.10") == "26.12.2"  # numbers, not text
    assert archive.previous_release(tmp_path, "27.01") == "26.12.10"
    assert archive.previous_release(tmp_path, "26.12") == "26.11"
