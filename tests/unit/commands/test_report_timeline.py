"""`report --timeline`: the release record's timeline printed (text or JSON), nothing written;
a missing or unreadable record is one line of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ngc_builder.cli import main
from ngc_builder.records.record import ImageRecord, ReleaseRecord, Span, save_record
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def write_record(build_dir: Path) -> Path:
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="m",
                           timeline_started=1_795_773_600.0, timeline=[
                               Span(image="release", step="prepare", start=0.0, end=4.0,
                                    worker="MainThread"),
                               Span(image="base", step="build", start=4.0, end=30.0,
                                    worker="image_0"),
                               Span(image="pytorch", step="build", start=30.2, end=None,
                                    worker="image_0"),
                               Span(image="jax", step="build", start=30.1, end=40.0,
                                    worker="image_1")])
    for name, parent in (("base", None), ("pytorch", "base"), ("jax", "base")):
        record.images[name] = ImageRecord(name=name, kind="image", parent=parent)
    path = build_dir / "26.11" / "release.json"
    path.parent.mkdir(parents=True)
    save_record(record, path)
    return path


def report_timeline(tmp_path: Path, write_release: WriteRelease, *extra: str) -> Result:
    """`report --timeline`, pointed at outputs that must stay unwritten."""
    return CliRunner().invoke(main, [
        "report", str(write_release(GOOD_RELEASE)), "--timeline",
        "--build-dir", str(tmp_path / "build"), "--out", str(tmp_path / "matrix.md"),
        "--archive", str(tmp_path / "archive"), "--notes", str(tmp_path / "notes"), *extra])


def unwritten(tmp_path: Path) -> bool:
    return not any((tmp_path / name).exists() for name in ("matrix.md", "archive", "notes"))


def test_report_timeline_prints_the_timeline_and_writes_nothing(
        tmp_path: Path, write_release: WriteRelease) -> None:
    record = write_record(tmp_path / "build")
    before = record.read_bytes()
    result = report_timeline(tmp_path, write_release)
    assert result.exit_code == 0, result.output + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("release 26.11: 40.0 s from 2026-11-27T10:00:00Z")
    assert any(line.startswith("jax ") and line.endswith("|     9.9 s busy") for line in lines)
    assert lines[-3:] == ["   0.0 s   +4.0 s  release  prepare",
                          "   4.0 s  +26.0 s  base     build",
                          "  30.2 s   +9.8 s  pytorch  build (the run stopped inside it)"]
    assert unwritten(tmp_path) and record.read_bytes() == before


def test_report_timeline_json_is_the_timeline_document(
        tmp_path: Path, write_release: WriteRelease) -> None:
    write_record(tmp_path / "build")
    result = report_timeline(tmp_path, write_release, "--json")
    assert result.exit_code == 0, result.output + result.stderr
    document = json.loads(result.stdout)
    assert document["total_seconds"] == 40.0
    assert [link["image"] for link in document["critical_path"]] == ["release", "base", "pytorch"]
    assert document["busy_seconds"] == {"MainThread": 4.0, "image_0": 35.8, "image_1": 9.9}
    assert len(document["spans"]) == 4 and unwritten(tmp_path)


def test_a_record_from_before_timelines_says_so(
        tmp_path: Path, write_release: WriteRelease) -> None:
    path = tmp_path / "build" / "26.11" / "release.json"
    path.parent.mkdir(parents=True)
    save_record(ReleaseRecord(release="26.11", registry="localhost:5000", manifest="m"), path)
    result = report_timeline(tmp_path, write_release)
    assert result.exit_code == 0, result.output + result.stderr
    [line] = result.stdout.splitlines()
    assert line.startswith("no timeline in this record")


@pytest.mark.parametrize(("content", "reason"), [
    (None, "no release record: run `ngc-builder release` first"),
    ('{"release": "26.11"', "unreadable release record"),
    ('{"release": "26.11", "registry": "r", "manifest": "m", "timeline": [{"image": "a"}]}',
     "unreadable release record (timeline.0.step: Field required)")])
def test_a_missing_or_broken_record_is_one_line_of_bad_input(
        tmp_path: Path, write_release: WriteRelease, content: str | None, reason: str) -> None:
    path = tmp_path / "build" / "26.11" / "release.json"
    if content is not None:
        path.parent.mkdir(parents=True)
        path.write_text(content)
    result = report_timeline(tmp_path, write_release)
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{path}:1: (record): {reason}")
    assert result.stdout == "" and unwritten(tmp_path)
