"""The signing key's files, attacked (issue 41): a key others can read or change, a link, a
FIFO or /dev/zero named as the key are each refused in one line naming the file, at once;
the key the builder makes is 0600 and read back as it is."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.publish.cosign_keys import (
    KEY_FILE,
    PUBLIC_FILE,
    signing_key,
    verifying_key,
    write_key_pair,
)
from ngc_builder.publish.key_files import configured_key_text
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
OPEN_KEY = "mode 0644 lets other users read or change it: not trusted (chmod 600 it)"


def refused(monkeypatch: pytest.MonkeyPatch, key: Path | str) -> str:
    """The one line signing with `key` (NGC_SIGNING_KEY) is refused with; the same from the
    fingerprint's look at it."""
    monkeypatch.setenv("NGC_SIGNING_KEY", str(key))
    with pytest.raises(InputError) as signing:
        signing_key()
    with pytest.raises(InputError) as fingerprint:
        configured_key_text()
    assert str(signing.value) == str(fingerprint.value)
    assert len(str(signing.value).splitlines()) == 1
    return str(signing.value)


@pytest.fixture
def team_key(tmp_path: Path) -> Path:
    write_key_pair(tmp_path / "team", b"")
    return tmp_path / "team" / KEY_FILE


def test_a_key_others_can_read_is_refused_saying_how_to_fix_it(
        team_key: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: used silently (the builder's own has no password: a key anyone could sign
    with)."""
    team_key.chmod(0o644)
    assert refused(monkeypatch, team_key) == f"{team_key}:1: key: {OPEN_KEY}"
    team_key.chmod(0o600)
    assert signing_key().source == str(team_key)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "link"])
def test_a_key_that_is_no_file_of_ours_is_refused_at_once(
        team_key: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Before: /dev/zero ended in MemoryError, a FIFO hung the run, a link was followed."""
    says = {"/dev/zero": "not a regular file (a character device): not read",
            "fifo": "not a regular file (a FIFO): not read",
            "link": "a symbolic link: not followed"}[kind]
    key: Path = Path(kind)
    if kind == "fifo":
        key = tmp_path / "key.fifo"
        os.mkfifo(key, 0o600)
    elif kind == "link":
        key = tmp_path / "key.link"
        key.symlink_to(team_key)
    started = time.monotonic()
    assert refused(monkeypatch, key) == f"{key}:1: key: {says}"
    assert time.monotonic() - started < 5


def test_the_builders_own_key_is_0600_and_refused_once_opened_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NGC_SIGNING_KEY", raising=False)
    made = signing_key()
    own = tmp_path / "state" / "signing" / KEY_FILE
    assert made.made_now and own.stat().st_mode & 0o777 == 0o600
    assert signing_key().public_pem == made.public_pem  # read back as made
    own.chmod(0o640)
    with pytest.raises(InputError, match=f"^{own}:1: key: mode 0640 lets other users"):
        signing_key()


def test_the_builders_own_key_replaced_by_a_link_is_refused_not_written_through(
        team_key: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NGC_SIGNING_KEY", raising=False)
    own = tmp_path / "state" / "signing" / KEY_FILE
    own.parent.mkdir(parents=True)
    victim = tmp_path / "victim"
    own.symlink_to(victim)  # dangling: a key written through it would land in `victim`
    with pytest.raises(InputError, match=f"^{own}:1: key: a symbolic link: not followed"):
        signing_key()
    assert not victim.exists() and own.is_symlink()


def test_a_public_key_others_can_change_is_not_what_verify_trusts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NGC_SIGNING_KEY", raising=False)
    signing_key()
    public = tmp_path / "state" / "signing" / PUBLIC_FILE
    public.chmod(0o644)  # readable by all: it is public
    assert verifying_key()[0] is not None
    public.chmod(0o666)
    with pytest.raises(InputError, match="mode 0666 lets other users change it"):
        verifying_key()


def test_the_release_refuses_an_open_key_before_anything_is_written(
        write_release: WriteRelease, team_key: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real CLI, with the fingerprint taken (a run the memo applies to)."""
    monkeypatch.setenv("NGC_GPU", "none")
    monkeypatch.setenv("NGC_SIGNING_KEY", str(team_key))
    team_key.chmod(0o644)
    build = tmp_path / "build"
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(write_release(GOOD_RELEASE)),
         "--offline", "--registry", "127.0.0.1:9/ngc", "--build-dir", str(build)],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    assert (done.returncode, done.stderr.splitlines()) == (2, [f"{team_key}:1: key: {OPEN_KEY}"])
    assert not build.exists()
