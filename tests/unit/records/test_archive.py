"""The release archive's rebuild log: `note_rebuild`, and how `rebuild` decides what to note.

A rebuild moves release tags on purpose; every digest that moved must end up in
`archive/<YY.MM>/release.json` under `rebuilds`, next to (never instead of) what was published.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.commands import rebuild
from ngc_builder.commands.release import ReleaseOptions
from ngc_builder.errors import InputError
from ngc_builder.records import archive
from ngc_builder.records.record import (
    ImageRecord,
    ReleaseRecord,
    StepStatus,
    record_path,
    save_record,
)
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit

OLD = "sha256:" + "aa" * 32
NEW = "sha256:" + "bb" * 32
THIRD = "sha256:" + "cc" * 32
REVISION = "0123456789abcdef0123456789abcdef01234567"
EARLIER = "fedcba9876543210fedcba9876543210fedcba98"
REVISION_LABEL = "org.opencontainers.image.revision"
RELEASE_LABEL = "org.ngc-builder.release"
AT = "2026-12-01T10:00:00Z"


def published(digests: dict[str, str | None], status: StepStatus = "ok") -> ReleaseRecord:
    """A 26.11 record whose images were pushed with these digests; its shared layers (no
    release label) were built by an earlier release from an earlier revision."""
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="26.11.yaml")
    for name, digest in digests.items():
        shared = name == "base" or name.startswith("cuda-")
        labels = {REVISION_LABEL: EARLIER} if shared else \
            {REVISION_LABEL: REVISION, RELEASE_LABEL: "26.11"}
        image = ImageRecord(name=name, kind="framework", labels=labels)
        image.build.key = f"key-{name}"
        image.push.status, image.push.digest = status, digest
        record.images[name] = image
    return record


@pytest.fixture
def archived(write_release: WriteRelease, tmp_path: Path) -> Path:
    """An archive holding 26.11 as published: base, cuda-cu13, pytorch and jax."""
    root = tmp_path / "archive"
    archive.write(root, write_release(GOOD_RELEASE),
                  published({"base": OLD, "cuda-cu13": OLD, "pytorch": OLD, "jax": OLD}),
                  tmp_path / "build" / "release.json")
    return root


def release_json(root: Path, release: str = "26.11") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / release / "release.json").read_text("utf-8"))
    return data


def move(image: str, old: str, new: str, at: str = AT) -> dict[str, str]:
    return {"image": image, "old": old, "new": new, "at": at}


def test_the_archive_keeps_the_record_with_reports_and_failed_build_logs(
    write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the record's paths are relative to where the release ran
    record = published({"pytorch": OLD, "tensorrt": None})
    (tmp_path / "build" / "reports").mkdir(parents=True)
    (tmp_path / "build" / "logs").mkdir()
    (tmp_path / "build" / "reports" / "pytorch.validation.json").write_text("{}")
    (tmp_path / "build" / "logs" / "pytorch.log").write_text("ok")
    (tmp_path / "build" / "logs" / "tensorrt.log").write_text("ERROR: no wheel")
    record.images["pytorch"].validation.report = "build/reports/pytorch.validation.json"
    record.images["pytorch"].build.log = "build/logs/pytorch.log"
    record.images["tensorrt"].build.status = "failed"
    record.images["tensorrt"].build.log = "build/logs/tensorrt.log"
    kept = archive.write(tmp_path / "archive", write_release(GOOD_RELEASE), record,
                         tmp_path / "build" / "release.json") / "record"
    assert (kept / "reports" / "pytorch.validation.json").read_text() == "{}"
    assert (kept / "logs" / "tensorrt.log").read_text() == "ERROR: no wheel"
    assert not (kept / "logs" / "pytorch.log").exists()  # a good build's log is not evidence
    saved = json.loads((kept / "release.json").read_text())
    assert saved["images"]["tensorrt"]["build"]["status"] == "failed"
    assert saved["manifest"] == "../manifest.yaml"  # not this machine's path


# note_rebuild itself ---------------------------------------------------------------------------


def test_a_fresh_archive_has_no_rebuilds(archived: Path) -> None:
    assert release_json(archived)["rebuilds"] == []


def test_note_rebuild_writes_the_moves_into_release_json(archived: Path) -> None:
    before = release_json(archived)
    moves = [move("pytorch", OLD, NEW), move("jax", OLD, THIRD)]
    archive.note_rebuild(archived, "26.11", moves)
    after = release_json(archived)
    assert after["rebuilds"] == moves
    # The rest of the archived release is kept as it was: only the log grows.
    assert {k: v for k, v in after.items() if k != "rebuilds"} == \
        {k: v for k, v in before.items() if k != "rebuilds"}
    assert after["images"]["pytorch"]["digest"] == OLD
    assert after["revision"] == REVISION
    loaded = archive.load(archived, "26.11")
    assert loaded is not None and loaded.rebuilds == moves


def test_a_second_rebuild_appends_after_the_first(archived: Path) -> None:
    first = [move("pytorch", OLD, NEW, "2026-12-01T10:00:00Z")]
    second = [move("pytorch", NEW, THIRD, "2027-01-05T08:30:00Z"),
              move("jax", OLD, THIRD, "2027-01-05T08:30:00Z")]
    archive.note_rebuild(archived, "26.11", first)
    archive.note_rebuild(archived, "26.11", second)
    assert release_json(archived)["rebuilds"] == first + second


def test_a_rebuild_that_moved_nothing_leaves_the_log_as_it_was(archived: Path) -> None:
    archive.note_rebuild(archived, "26.11", [move("pytorch", OLD, NEW)])
    archive.note_rebuild(archived, "26.11", [])
    assert release_json(archived)["rebuilds"] == [move("pytorch", OLD, NEW)]


def test_re_archiving_a_release_keeps_its_rebuild_log(
    archived: Path, write_release: WriteRelease
) -> None:
    archive.note_rebuild(archived, "26.11", [move("pytorch", OLD, NEW)])
    archive.write(archived, write_release(GOOD_RELEASE), published({"pytorch": NEW}),
                  archived / "run" / "release.json")
    after = release_json(archived)
    assert after["rebuilds"] == [move("pytorch", OLD, NEW)]
    assert set(after["images"]) == {"pytorch"} and after["images"]["pytorch"]["digest"] == NEW


def test_note_rebuild_of_a_release_never_archived_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    archive.note_rebuild(root, "26.11", [move("pytorch", OLD, NEW)])
    assert not root.exists()
    root.mkdir()
    archive.note_rebuild(root, "26.11", [move("pytorch", OLD, NEW)])
    assert list(root.iterdir()) == []
    assert archive.load(root, "26.11") is None


def test_note_rebuild_touches_only_its_own_release(
    archived: Path, write_release: WriteRelease
) -> None:
    older = published({"pytorch": OLD})
    older.release = "26.10"
    archive.write(archived, write_release(GOOD_RELEASE), older, archived / "run" / "release.json")
    untouched = (archived / "26.10" / "release.json").read_bytes()
    archive.note_rebuild(archived, "26.11", [move("pytorch", OLD, NEW)])
    assert (archived / "26.10" / "release.json").read_bytes() == untouched
    archive.note_rebuild(archived, "26.09", [move("pytorch", OLD, NEW)])
    assert not (archived / "26.09").exists()


def test_note_rebuild_on_a_damaged_archive_is_an_input_error(archived: Path) -> None:
    path = archived / "26.11" / "release.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        archive.note_rebuild(archived, "26.11", [move("pytorch", OLD, NEW)])
    [problem] = caught.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 1, "(archive)")
    assert path.read_text(encoding="utf-8") == "{not json"


# rebuild_command: which digests are noted ------------------------------------------------------


@dataclass
class FakeRun:
    """Stands in for release_command: records its options, leaves the given release record."""

    record: ReleaseRecord | None
    code: int = 0
    options: list[ReleaseOptions] = field(default_factory=list)
    revisions: list[str | None] = field(default_factory=list)

    def release_command(self, options: ReleaseOptions) -> int:
        self.options.append(options)
        if self.record is not None:
            save_record(self.record, record_path(options.build_dir, self.record.release))
        return self.code

    def checkout(self, root: Path, revision: str | None, target: Path) -> Path:
        self.revisions.append(revision)
        return root


def run_rebuild(fake: FakeRun, root: Path, tmp_path: Path, fresh: bool = False) -> int:
    return rebuild.rebuild_command(rebuild.RebuildOptions(
        release="26.11", archive_dir=root, root=tmp_path, build_dir=tmp_path / "build",
        fresh=fresh), release_run=fake.release_command, checkout=fake.checkout, clock=lambda: AT)


def test_rebuild_notes_only_the_digests_that_changed(
    archived: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rebuilt = published({"base": OLD, "pytorch": NEW, "jax": THIRD, "newcomer": NEW})
    rebuilt.images["jax"].push.digest = None  # jax's push failed: it published nothing
    rebuilt.images["jax"].push.status = "failed"
    fake = FakeRun(rebuilt, code=1)
    assert run_rebuild(fake, archived, tmp_path) == 1
    # base kept its digest, jax has none, newcomer was never archived, cuda-cu13 not rebuilt.
    assert release_json(archived)["rebuilds"] == [move("pytorch", OLD, NEW)]
    assert capsys.readouterr().out.splitlines()[0] == f"pytorch: {OLD} -> {NEW}"


def test_rebuild_runs_forced_from_the_archived_manifest_and_revision(
    archived: Path, tmp_path: Path
) -> None:
    fake = FakeRun(published({"pytorch": OLD}))
    assert run_rebuild(fake, archived, tmp_path, fresh=True) == 0
    [options] = fake.options
    assert options.policy.force is True
    assert options.policy.reuse_published is False
    assert options.manifest == (archived / "26.11" / archive.MANIFEST_NAME).resolve()
    assert options.build_dir == tmp_path / "build" / "rebuild-26.11"
    assert fake.revisions == [REVISION]
    assert release_json(archived)["rebuilds"] == []  # same digest: nothing moved


def test_a_second_rebuild_notes_moves_against_the_archived_digest(
    archived: Path, tmp_path: Path
) -> None:
    run_rebuild(FakeRun(published({"pytorch": NEW})), archived, tmp_path)
    run_rebuild(FakeRun(published({"pytorch": THIRD, "jax": NEW})), archived, tmp_path)
    # The archive's images still hold the published digests; each rebuild is compared to them.
    assert release_json(archived)["rebuilds"] == [
        move("pytorch", OLD, NEW), move("pytorch", OLD, THIRD), move("jax", OLD, NEW)]
    assert release_json(archived)["images"]["pytorch"]["digest"] == OLD


def test_rebuild_over_an_image_archived_without_a_digest_notes_an_empty_old(
    write_release: WriteRelease, tmp_path: Path
) -> None:
    root = tmp_path / "archive"
    archive.write(root, write_release(GOOD_RELEASE), published({"pytorch": None}),
                  tmp_path / "build" / "release.json")
    run_rebuild(FakeRun(published({"pytorch": NEW})), root, tmp_path)
    assert release_json(root)["rebuilds"] == [move("pytorch", "", NEW)]


def test_rebuild_that_left_no_record_notes_nothing(
    archived: Path, tmp_path: Path
) -> None:
    fake = FakeRun(None, code=2)
    assert run_rebuild(fake, archived, tmp_path) == 2
    assert release_json(archived)["rebuilds"] == []


def test_rebuild_of_a_release_never_archived_is_an_input_error(
    tmp_path: Path
) -> None:
    fake = FakeRun(published({"pytorch": NEW}))
    with pytest.raises(InputError) as caught:
        run_rebuild(fake, tmp_path / "archive", tmp_path)
    [problem] = caught.value.problems
    assert problem.file == str(tmp_path / "archive" / "26.11")
    assert "release 26.11 was never archived" in problem.message
    assert fake.options == []
    assert not (tmp_path / "archive").exists()


# rebuild_command: the package sets against the archived ones ----------------------------------


def rebuilt_folder(tmp_path: Path) -> Path:
    """Where the rebuild's run keeps its record (reports/ beside it)."""
    return tmp_path / "build" / "rebuild-26.11" / "26.11"


def with_packages(record: ReleaseRecord, folder: Path, pip: dict[str, str]) -> ReleaseRecord:
    """Each image of `record` with a package manifest listing `pip` and one dpkg package."""
    (folder / "reports").mkdir(parents=True, exist_ok=True)
    for name, image in record.images.items():
        path = folder / "reports" / f"{name}.packages.json"
        path.write_text(json.dumps({"pip": pip, "dpkg": {"libc6": "2.41-12"}}), "utf-8")
        image.build.packages = str(path)
    return record


def test_a_rebuild_with_the_archived_packages_says_identical(
    write_release: WriteRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from ngc_builder.records.notes import rebuild_lines

    root = tmp_path / "archive"
    pip = {"numpy": "2.3.5", "torch": "2.15.0"}
    archive.write(root, write_release(GOOD_RELEASE),
                  with_packages(published({"base": OLD, "pytorch": OLD}), tmp_path / "a", pip),
                  tmp_path / "a" / "release.json")
    rebuilt = with_packages(published({"base": OLD, "pytorch": NEW}), rebuilt_folder(tmp_path), pip)
    assert run_rebuild(FakeRun(rebuilt), root, tmp_path, fresh=True) == 0
    assert "packages: 2 images against archive 26.11: identical" in capsys.readouterr().out
    [check] = release_json(root)["package_checks"]
    assert check == {"at": AT, "images": ["base", "pytorch"], "differences": []}
    assert "2 images rebuilt from the archived manifest and lock; pip and dpkg package sets " \
           "identical to the archive" in "\n".join(rebuild_lines(root, "26.11"))


def test_a_rebuild_that_installs_other_packages_fails_naming_them(
    write_release: WriteRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "archive"
    archive.write(root, write_release(GOOD_RELEASE), with_packages(
        published({"pytorch": OLD}), tmp_path / "a", {"numpy": "2.3.5"}),
        tmp_path / "a" / "release.json")
    rebuilt = with_packages(published({"pytorch": NEW}), rebuilt_folder(tmp_path),
                            {"numpy": "2.3.6"})
    assert run_rebuild(FakeRun(rebuilt), root, tmp_path, fresh=True) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT" in out and "- **pytorch** (pip): changed numpy 2.3.5 -> 2.3.6" in out
    [check] = release_json(root)["package_checks"]
    assert check["differences"] == ["- **pytorch** (pip): changed numpy 2.3.5 -> 2.3.6"]


def test_the_revision_is_the_framework_images_not_a_shared_layer_built_earlier() -> None:
    def image(revision: str, release: str | None) -> archive.ArchivedImage:
        labels = {REVISION_LABEL: revision, **({RELEASE_LABEL: release} if release else {})}
        return archive.ArchivedImage(labels=labels)

    images = {"base": image(EARLIER, None), "cuda-cu13": image(EARLIER, None),
              "pytorch": image(REVISION, "26.11"), "jax": image(REVISION, "26.11"),
              "mxnet": image(EARLIER, "26.11")}  # a rerun after a commit built the others
    assert archive.release_revision(images, "26.11") == REVISION
    assert archive.release_revision({"base": image(EARLIER, None)}, "26.11") is None


@pytest.mark.parametrize("release", ["../x", "26.11/../../etc", "/etc", "26.13"])
def test_a_release_id_never_leads_out_of_the_archive(tmp_path: Path, release: str) -> None:
    from click.testing import CliRunner

    from ngc_builder.cli import main

    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "release.json").write_text('{"release": "x", "registry": "r"}')
    result = CliRunner().invoke(main, ["rebuild", release, "--archive",
                                       str(tmp_path / "archive")])
    assert result.exit_code == 2
    assert result.stderr == (f"RELEASE:1: release: {release!r} is not a release id "
                             "(YY.MM or YY.MM.N)\n")
