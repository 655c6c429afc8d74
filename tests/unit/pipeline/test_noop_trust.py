"""The no-op memo's own files, attacked (issue 41): its key, the memo and its folder are this
user's alone and never written through a link; a memo that is a FIFO or /dev/zero is no memo;
and nothing in the memo lets its reader test guesses of a secret setting offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ngc_builder.pipeline import noop
from ngc_builder.services.registry import parse_registry
from tests.conftest import REPO
from tests.unit.pipeline.noop_project import Project, answered
from tests.unit.pipeline.noop_project import project as project  # the fixture

pytestmark = pytest.mark.unit


def remember_again(project: Project) -> None:
    registry = parse_registry(project.address)
    registry.manifest_digest("jax", "26.11-py3")
    noop.remember(project.options, noop.fingerprint(project.options), registry,
                  project.record)


def key_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / noop.MAC_KEY_FILE


def test_a_memo_key_others_can_read_is_not_trusted_and_is_replaced(
        project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Anyone who read the key could forge "nothing to do": the memo it signed is not
    taken, and the next memo is signed with a new key no one else has read."""
    key = key_file(tmp_path)
    old = key.read_bytes()
    key.chmod(0o644)
    assert answered(project.options) is None
    note = capsys.readouterr().err.strip().splitlines()
    assert note == [f"note: {key}: mode 0644 lets other users read or change it: not "
                    "trusted (chmod 600 it): no no-op memo is taken with it"]
    remember_again(project)
    assert key.stat().st_mode & 0o777 == 0o600 and key.read_bytes() != old
    assert answered(project.options) is not None


def test_the_command_does_not_answer_from_a_memo_an_open_key_signed(
        project: Project, tmp_path: Path) -> None:
    """`ngc-builder release` itself, as in test_noop.py, but with the key opened up: the
    note, then the whole run (here it stops at the project's stub manifest), never the
    memo's "nothing to do"."""
    key_file(tmp_path).chmod(0o644)
    options = project.options
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(options.manifest), "--registry",
         project.address, "--build-dir", str(options.build_dir), "--quiet"],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    assert "nothing to do" not in done.stdout and done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        f"note: {key_file(tmp_path)}: mode 0644 lets other users read or change it: not "
        "trusted (chmod 600 it): no no-op memo is taken with it")
    assert project.held.requests == []  # the memo's references never asked about


def test_a_memo_key_that_is_a_link_is_not_followed(project: Project, tmp_path: Path) -> None:
    elsewhere = tmp_path / "readable.key"
    key = key_file(tmp_path)
    elsewhere.write_bytes(key.read_bytes())
    elsewhere.chmod(0o600)
    key.unlink()
    key.symlink_to(elsewhere)
    assert answered(project.options) is None
    remember_again(project)  # the link replaced by a key of its own, not written through
    assert not key.is_symlink() and elsewhere.read_bytes() != key.read_bytes()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away takes root")
def test_a_memo_key_of_another_user_is_not_trusted(project: Project, tmp_path: Path) -> None:
    os.chown(key_file(tmp_path), 4321, 4321)
    assert answered(project.options) is None


def test_a_memo_folder_that_is_a_link_is_never_written_or_emptied_through(
        project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`build/.noop` pointing at another folder: the memo is neither written there nor
    removed from there; the run says so once and keeps no memo."""
    victim = tmp_path / "victim"
    victim.mkdir()
    memo = noop.memo_path(project.options)
    (victim / memo.name).write_text("the victim's file\n")
    memo.unlink()
    memo.parent.rmdir()
    memo.parent.symlink_to(victim)
    noop.forget(project.options)
    remember_again(project)
    assert [p.name for p in victim.iterdir()] == [memo.name]
    assert (victim / memo.name).read_text() == "the victim's file\n"
    assert capsys.readouterr().err.strip() == (
        f"note: {memo.parent}: a symbolic link: not written through: no no-op memo kept")
    assert answered(project.options) is None


def test_a_memo_that_is_a_link_is_replaced_not_written_through(
        project: Project, tmp_path: Path) -> None:
    memo = noop.memo_path(project.options)
    victim = tmp_path / "victim.json"
    victim.write_text("the victim's file\n")
    memo.unlink()
    memo.symlink_to(victim)
    assert answered(project.options) is None  # a link is not read either
    remember_again(project)
    assert victim.read_text() == "the victim's file\n" and not memo.is_symlink()
    assert memo.stat().st_mode & 0o777 == 0o600


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_memo_that_is_a_fifo_or_dev_zero_is_no_memo_at_once(project: Project,
                                                              kind: str) -> None:
    """Before: the FIFO hung the run, /dev/zero ended in MemoryError."""
    memo = noop.memo_path(project.options)
    memo.unlink()
    if kind == "fifo":
        os.mkfifo(memo, 0o600)
    else:
        memo.symlink_to("/dev/zero")
    started = time.monotonic()
    assert answered(project.options) is None
    assert time.monotonic() - started < 5


def test_the_memo_holds_nothing_to_test_a_secret_setting_against(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader of the memo who guesses NGC_SIGNING_PASSWORD right computes the right
    fingerprint: the memo must hold nothing it can be compared with without the host's
    key (it held the bare fingerprint)."""
    monkeypatch.setenv("NGC_SIGNING_PASSWORD", "hunter2")
    remember_again(project)
    text = noop.memo_path(project.options).read_text()
    guessed = noop.fingerprint(project.options)
    assert guessed is not None and guessed not in text and "hunter2" not in text
    body = json.loads(text)
    mac = body.pop("mac")
    assert "fingerprint" not in body
    assert mac != noop._mac(body, guessed, b"")  # not a MAC anyone can make without the key
    assert answered(project.options) is not None


def test_a_state_folder_its_owner_linked_elsewhere_still_keeps_memos(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the key file and the memo's own folder must not be links: a state folder moved
    to another disk and linked back is the owner's choice."""
    moved = tmp_path / "larger-disk" / "state"
    moved.parent.mkdir()
    (tmp_path / "state").rename(moved)
    (tmp_path / "state").symlink_to(moved)
    noop.forget(project.options)
    remember_again(project)
    assert answered(project.options) is not None
