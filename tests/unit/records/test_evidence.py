"""Paths a record names are read only as logs/ or reports/ files in the record's own folder:
an edited record (archived in git, so a pull request can edit it) cannot make `catalog` print
a maintainer's credentials, nor `report` copy them into the archive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ngc_builder.cli import main
from ngc_builder.errors import InputError
from ngc_builder.records.evidence import evidence_file
from tests.conftest import WriteRelease
from tests.unit.catalog.records import write_all
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
SECRET = '{"auths": {"registry.example": {"auth": "cm9ib3Q6c2VjcmV0"}}}'


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "home" / ".docker" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(SECRET)
    return path


def hostile_paths(secret: Path) -> list[str]:
    return [str(secret), "../../home/.docker/config.json",
            "build/26.11/logs/../../../home/.docker/config.json", "logs/a\nb.log",
            "build/26.11/logs/leak.log"]  # the last one: a link out of the folder


def test_each_way_out_of_the_folder_is_refused(tmp_path: Path, secret: Path) -> None:
    folder = tmp_path / "build" / "26.11"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "leak.log").symlink_to(secret)
    (folder / "logs" / "jax.log").write_text("ok")
    record = folder / "release.json"
    for recorded in hostile_paths(secret):
        with pytest.raises(InputError) as refused:
            evidence_file(folder, recorded, record, "images.jax.build.log")
        [problem] = refused.value.problems
        assert str(problem).startswith(f"{record}:1: images.jax.build.log: ")
        assert str(problem).endswith("(not read)") and "\n" not in str(problem)
    for kept in ("build/26.11/logs/jax.log", str(folder / "logs" / "jax.log"), "logs/jax.log"):
        assert evidence_file(folder, kept, record, "f") == (folder / "logs" / "jax.log")
    assert evidence_file(folder, "logs/absent.log", record, "f") is None


@pytest.mark.parametrize("index", range(5))
def test_catalog_refuses_an_edited_record_and_writes_no_page(
        tmp_path: Path, secret: Path, index: int) -> None:
    fixture = write_all(tmp_path)
    (fixture.record.parent / "logs" / "leak.log").symlink_to(secret)
    data = json.loads(fixture.record.read_text())
    data["images"]["tensorrt"]["build"]["log"] = hostile_paths(secret)[index]
    fixture.record.write_text(json.dumps(data))
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["catalog", "26.11", "--archive-dir", str(fixture.archive),
                                       "--out", str(out), "--record", str(fixture.record)])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "images.tensorrt.build.log" in line and "(not read)" in line
    assert "cm9ib3Q6c2VjcmV0" not in result.output + result.stderr
    assert not out.exists()


def report(tmp_path: Path, record: Path, write_release: WriteRelease,
           ) -> tuple[list[Path], Result]:
    """`report` of the edited record, into folders that must stay unwritten."""
    written = [tmp_path / "matrix.md", tmp_path / "kept", tmp_path / "notes"]
    result = CliRunner().invoke(main, [
        "report", str(write_release(GOOD_RELEASE)), "--build-dir", str(record.parent.parent),
        "--out", str(written[0]), "--archive", str(written[1]), "--notes", str(written[2])])
    return written, result


def test_report_refuses_an_edited_record_before_writing_anything(
        tmp_path: Path, secret: Path, write_release: WriteRelease) -> None:
    fixture = write_all(tmp_path)
    data = json.loads(fixture.record.read_text())
    data["images"]["pytorch"]["validation"]["report"] = str(secret)
    fixture.record.write_text(json.dumps(data))
    written, result = report(tmp_path, fixture.record, write_release)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "images.pytorch.validation.report" in line and "(not read)" in line
    assert not any(path.exists() for path in written)


def test_catalog_reads_the_archived_manifest_within_the_yaml_bounds(tmp_path: Path) -> None:
    """An alias bomb in archive/26.11/manifest.yaml hung `catalog`; now it is refused."""
    from tests.unit.manifest.test_hostile import laughs

    fixture = write_all(tmp_path)
    (fixture.archive / "26.11" / "manifest.yaml").write_text(laughs(9))
    result = CliRunner().invoke(main, ["catalog", "26.11", "--archive-dir", str(fixture.archive),
                                       "--out", str(tmp_path / "site")])
    assert result.exit_code == 2
    assert "expands to more than 100000 values through aliases" in result.stderr


def test_report_writes_nothing_when_the_notes_cannot_be_made(
        tmp_path: Path, write_release: WriteRelease) -> None:
    """A record whose registry is not one: `report` exited 2 after writing the matrix and
    the archive; now everything is made before anything is written."""
    fixture = write_all(tmp_path)
    data = json.loads(fixture.record.read_text())
    data["registry"] = "not a registry"
    fixture.record.write_text(json.dumps(data))
    written, result = report(tmp_path, fixture.record, write_release)
    assert result.exit_code == 2, result.output
    assert "registry" in result.stderr and len(result.stderr.splitlines()) == 1
    assert not any(path.exists() for path in written)
