"""Files the builder reads and writes, in one place.

Written for people and later runs (records, archive, reports): a reader sees the old file or
the new one, never half of one, even when two runs write at once or the machine stops
mid-write; and no credential is in them.

Read: every file is opened as a regular file (a FIFO or a device is refused at once, never
waited on or read without end), with a bound checked while reading. The files a run trusts
(the no-op memo and its key, the signing key) are this user's alone: not a link, owned by
the effective user, no permission for group or others; else refused in one line naming the
file and what is wrong. They are written the same way: never through a link, mode 0600.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ngc_builder.redact import strip_userinfo

BLOCK = 1 << 20
INPUT_LIMIT = 1 << 20  # a manifest, a site file, a key, a probe module: a few KB
# A lock, a release record, a validation report, a baseline book, a job's output: the largest
# real ones are under 1 MB (26.12's lock: 420 KB); a memo of the package cache grows with it.
DATA_LIMIT = 64 << 20
MEMO_LIMIT = 256 << 20
# Opened without waiting: a FIFO with no writer would block the open itself.
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK:
         "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


class UnsafeFile(OSError):
    """A file refused before or while it was read: `strerror` says what is wrong, in words,
    and `filename` names it (an OSError, so every caller's `except OSError` still holds)."""

    def __init__(self, path: Path | str, reason: str, code: int = errno.EPERM) -> None:
        super().__init__(code, reason, str(path))


def write_atomic(path: Path, text: str) -> None:
    """`text`, URL userinfo stripped, to `path`: a temp file of its own beside it (two writers
    never share one), fsync, rename over `path`, fsync of the folder (the rename itself)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(strip_userinfo(text))
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, path)
    except OSError as exc:  # a full disk: name the file the user knows, not the scratch
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def file_sha256(path: Path, limit: int | None = None, *, links: bool = True) -> str:
    """The sha256 of a regular file (links followed unless `links` is False); UnsafeFile for
    anything else, or for a file larger than `limit` bytes."""
    digest = hashlib.sha256()
    with _opened(path, links) as descriptor:
        for block in _blocks(path, descriptor, limit):
            digest.update(block)
    return digest.hexdigest()


def read_regular(path: Path, limit: int, *, links: bool = True) -> bytes:
    """At most `limit` bytes of a regular file: UnsafeFile for a FIFO, a device, a folder, a
    link where `links` is False, or a file larger than `limit` (read no further)."""
    with _opened(path, links) as descriptor:
        return b"".join(_blocks(path, descriptor, limit))


def read_text(path: Path, limit: int, *, links: bool = True, errors: str = "strict") -> str:
    """`read_regular`, decoded as UTF-8 (a UnicodeDecodeError, a ValueError, for other bytes
    unless `errors` says otherwise)."""
    return read_regular(path, limit, links=links).decode("utf-8", errors)


def read_tail(path: Path, limit: int) -> str:
    """The last `limit` bytes at most of a regular file, decoded leniently: a log or a job's
    output is read for its end (the cause and the verdict), however long it grew."""
    with _opened(path, links=True) as descriptor:
        os.lseek(descriptor, max(0, os.fstat(descriptor).st_size - limit), os.SEEK_SET)
        data = b"".join(_blocks(path, descriptor, None, stop=limit))
    return data.decode("utf-8", "replace")


@contextlib.contextmanager
def open_regular(path: Path) -> Iterator[BinaryIO]:
    """A regular file opened for reading (links followed), for a reader that seeks and
    bounds what it reads itself (an archive's members)."""
    with _opened(path, links=True) as descriptor, \
            os.fdopen(descriptor, "rb", closefd=False) as stream:
        yield stream


def read_private(path: Path, limit: int, *, others_may_read: bool = False) -> bytes:
    """A file of this user's alone (module docstring), at most `limit` bytes. A public key
    may be readable by others (`others_may_read`), never writable by them."""
    with _opened(path, links=False) as descriptor:
        _check_private(path, os.fstat(descriptor), 0o022 if others_may_read else 0o077)
        return b"".join(_blocks(path, descriptor, limit))


@contextlib.contextmanager
def _opened(path: Path, links: bool) -> Iterator[int]:
    flags = READ_FLAGS | (0 if links else os.O_NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not links:
            raise UnsafeFile(path, "a symbolic link: not followed", errno.ELOOP) from None
        if exc.errno in (errno.ENXIO, errno.ENODEV):  # a socket or a device cannot be opened
            mode = os.stat(path).st_mode
            raise UnsafeFile(path, f"not a regular file ({_kind(mode)}): not read",
                             errno.EINVAL) from None
        raise
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFile(path, f"not a regular file ({_kind(mode)}): not read",
                             errno.EINVAL)
        yield descriptor
    finally:
        os.close(descriptor)


def _kind(mode: int) -> str:
    return KINDS.get(stat.S_IFMT(mode), "of another kind")


def _blocks(path: Path, descriptor: int, limit: int | None,
            stop: int | None = None) -> Iterator[bytes]:
    """The file's bytes block by block; UnsafeFile as soon as more than `limit` are read
    (the size stat gives is not trusted: the file may grow while it is read); `stop`: the
    reading simply ends after that many (a log's tail, still growing)."""
    total = 0
    while block := os.read(descriptor, BLOCK if limit is None else min(BLOCK, limit + 1)):
        total += len(block)
        if limit is not None and total > limit:
            raise UnsafeFile(path, f"larger than {_size(limit)} (the limit)", errno.EFBIG)
        yield block
        if stop is not None and total >= stop:
            return


def _size(limit: int) -> str:
    return f"{limit // 1024} KiB" if limit >= 1024 else f"{limit} bytes"


def _check_private(path: Path, status: os.stat_result, forbidden: int) -> None:
    user = os.geteuid()
    if status.st_uid != user:
        raise UnsafeFile(path, f"owned by uid {status.st_uid}, not by this user ({user}): "
                         "not trusted")
    mode = stat.S_IMODE(status.st_mode)
    if mode & forbidden:
        who = "read or change" if forbidden & 0o044 else "change"
        raise UnsafeFile(path, f"mode {mode:04o} lets other users {who} it: not trusted "
                         f"(chmod {0o600 if forbidden & 0o044 else 0o644:o} it)")


def write_private(path: Path, data: bytes) -> None:
    """`data` to `path`, mode 0600, replaced whole: never written through a link (the folder
    made here 0700 if absent; a folder that is a link, or another user's, is refused)."""
    with _private_folder(path.parent, create=True) as folder:
        scratch = f".{path.name}.{secrets.token_hex(8)}.tmp"
        _write_new(folder, scratch, data)
        try:
            os.replace(scratch, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(scratch, dir_fd=folder)
            raise
        os.fsync(folder)


def create_private(path: Path, data: bytes) -> None:
    """`data` as a new file at `path`, mode 0600, as `write_private`; nothing done when a file
    (or a link) is there already: another run made it first, and it stays the one."""
    with _private_folder(path.parent, create=True) as folder, \
            contextlib.suppress(FileExistsError):
        _write_new(folder, path.name, data)


def discard(path: Path) -> None:
    """`path` removed, when it is there, in a folder that is not a link (never removed
    through one)."""
    with contextlib.suppress(FileNotFoundError), \
            _private_folder(path.parent, create=False) as folder:
        os.unlink(path.name, dir_fd=folder)


def _write_new(folder: int, name: str, data: bytes) -> None:
    # O_EXCL with O_CREAT fails on any link in the way, whatever it points at.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(name, flags, 0o600, dir_fd=folder)
    try:
        with os.fdopen(descriptor, "wb", closefd=False) as out:
            out.write(data)
            out.flush()
            os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)
        raise
    os.close(descriptor)


@contextlib.contextmanager
def _private_folder(folder: Path, create: bool) -> Iterator[int]:
    """The folder, opened without following a link in its last part: what is written or
    removed through the descriptor stays in it even if the folder is swapped meanwhile."""
    if create:
        with contextlib.suppress(FileExistsError):  # whatever is there: the open decides
            folder.mkdir(mode=0o700, parents=True)
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW |
                             os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and folder.is_symlink():
            raise UnsafeFile(folder, "a symbolic link: not written through",
                             errno.ELOOP) from None
        raise
    try:
        owner = os.fstat(descriptor).st_uid
        if owner != os.geteuid():
            raise UnsafeFile(folder, f"owned by uid {owner}, not by this user "
                             f"({os.geteuid()}): not written")
        yield descriptor
    finally:
        os.close(descriptor)
