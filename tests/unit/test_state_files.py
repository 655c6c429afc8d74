"""files.py's readers and writers (issue 41): every file read as a regular file within a bound,
at once (a FIFO is never waited on, /dev/zero never read without end); the files a run trusts
are this user's alone and never written, replaced or removed through a link."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ngc_builder.files import (
    UnsafeFile,
    create_private,
    discard,
    file_sha256,
    read_private,
    read_regular,
    write_private,
)

pytestmark = pytest.mark.unit


def refusal(act: Callable[[], object]) -> str:
    """What `act` was refused with: `file: what is wrong`."""
    with pytest.raises(UnsafeFile) as refused:
        act()
    return f"{refused.value.filename}: {refused.value.strerror}"


@pytest.mark.timeout(30)
def test_a_fifo_a_device_and_a_folder_are_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert refusal(lambda: read_regular(fifo, 1024)) == \
        f"{fifo}: not a regular file (a FIFO): not read"
    assert refusal(lambda: file_sha256(fifo)) == f"{fifo}: not a regular file (a FIFO): not read"
    assert refusal(lambda: read_regular(Path("/dev/zero"), 1 << 30)) == \
        "/dev/zero: not a regular file (a character device): not read"
    assert refusal(lambda: read_regular(tmp_path, 1024)) == \
        f"{tmp_path}: not a regular file (a folder): not read"
    assert time.monotonic() - started < 5


def test_a_file_over_the_bound_is_refused_and_one_at_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 2048)
    assert read_regular(path, 2048) == b"x" * 2048
    assert refusal(lambda: read_regular(path, 2047)) == \
        f"{path}: larger than 1 KiB (the limit)"
    assert refusal(lambda: file_sha256(path, 1024)) == f"{path}: larger than 1 KiB (the limit)"
    assert file_sha256(path) == file_sha256(path, 2048)


def test_links_are_followed_only_where_the_caller_allows(tmp_path: Path) -> None:
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_bytes(b"text")
    link.symlink_to(target)
    assert read_regular(link, 64) == b"text"
    assert refusal(lambda: read_regular(link, 64, links=False)) == \
        f"{link}: a symbolic link: not followed"


def private_file(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "key"
    path.write_bytes(b"secret")
    path.chmod(mode)
    return path


@pytest.mark.parametrize(("mode", "says"), [
    (0o644, "mode 0644 lets other users read or change it: not trusted (chmod 600 it)"),
    (0o640, "mode 0640 lets other users read or change it: not trusted (chmod 600 it)"),
    (0o602, "mode 0602 lets other users read or change it: not trusted (chmod 600 it)"),
])
def test_a_private_file_others_can_reach_is_refused(tmp_path: Path, mode: int,
                                                     says: str) -> None:
    path = private_file(tmp_path, mode)
    assert refusal(lambda: read_private(path, 64)) == f"{path}: {says}"


def test_a_private_file_is_read_and_a_public_one_may_be_read_by_all(tmp_path: Path) -> None:
    assert read_private(private_file(tmp_path, 0o600), 64) == b"secret"
    assert read_private(private_file(tmp_path, 0o644), 64, others_may_read=True) == b"secret"
    path = private_file(tmp_path, 0o664)
    assert refusal(lambda: read_private(path, 64, others_may_read=True)) == \
        f"{path}: mode 0664 lets other users change it: not trusted (chmod 644 it)"


def test_a_private_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    target = private_file(tmp_path, 0o600)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert refusal(lambda: read_private(link, 64)) == f"{link}: a symbolic link: not followed"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away takes root")
def test_a_private_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = private_file(tmp_path, 0o600)
    os.chown(path, 4321, 4321)
    assert refusal(lambda: read_private(path, 64)) == \
        f"{path}: owned by uid 4321, not by this user (0): not trusted"


def test_a_private_write_is_0600_and_replaces_a_link_instead_of_following_it(
        tmp_path: Path) -> None:
    victim, path = tmp_path / "victim", tmp_path / "state" / "memo"
    victim.write_text("the victim's\n")
    path.parent.mkdir()
    path.symlink_to(victim)
    write_private(path, b"ours")
    assert victim.read_text() == "the victim's\n" and not path.is_symlink()
    assert (path.read_bytes(), path.stat().st_mode & 0o777) == (b"ours", 0o600)
    assert [p.name for p in path.parent.iterdir()] == ["memo"]  # no scratch left


def test_a_folder_that_is_a_link_is_never_written_or_emptied_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "memo").write_text("the victim's\n")
    folder = tmp_path / ".noop"
    folder.symlink_to(victim)
    for act in (lambda: write_private(folder / "memo", b"x"),
                lambda: create_private(folder / "new", b"x"),
                lambda: discard(folder / "memo")):
        assert refusal(act) == f"{folder}: a symbolic link: not written through"
    assert [p.name for p in victim.iterdir()] == ["memo"]
    assert (victim / "memo").read_text() == "the victim's\n"


def test_a_private_file_is_created_once_and_never_through_a_link(tmp_path: Path) -> None:
    path = tmp_path / "state" / "key"
    create_private(path, b"first")
    create_private(path, b"second")  # another run made it first: it stays the one
    assert (path.read_bytes(), path.stat().st_mode & 0o777) == (b"first", 0o600)
    assert path.parent.stat().st_mode & 0o777 == 0o700
    victim = tmp_path / "victim"
    link = tmp_path / "state" / "linked"
    link.symlink_to(victim)
    create_private(link, b"x")
    assert not victim.exists()


def test_discard_removes_the_file_and_minds_nothing_absent(tmp_path: Path) -> None:
    path = tmp_path / "state" / "memo"
    write_private(path, b"x")
    discard(path)
    discard(path)
    discard(tmp_path / "absent" / "memo")
    assert not path.exists()


def test_a_socket_is_named_as_one(tmp_path: Path) -> None:
    """Opening a socket fails (ENXIO) before fstat could tell: it is still refused by kind,
    not passed on as a plain OSError."""
    import socket

    path = tmp_path / "listening.sock"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        with pytest.raises(UnsafeFile, match=r"not a regular file \(a socket\)"):
            read_regular(path, 1024)
