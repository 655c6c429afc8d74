"""A wheel member's bytes, streamed from the zip into the venv tar a chunk at a time: memory
stays at a chunk however large a member is (a CUDA wheel's libraries are GBs), and a member is
never inflated past the size the zip declares for it, so a small wheel that would inflate to
GBs (a zip bomb) is refused once its declared size is passed, not when it has filled memory or
disk. The wheel's total of declared sizes is bounded before anything is inflated
(wheel_install.py), so both bounds hold while inflating."""

from __future__ import annotations

import copy
import hashlib
import io
import re
import tarfile
import zipfile
import zlib
from pathlib import PurePosixPath
from types import TracebackType

from ngc_builder.assemble.wheel_paths import VenvTree, WheelError

CHUNK = 1 << 20
SHEBANG = re.compile(rb"#!pythonw?(?:[ \t]+(.*?))?\r?")


class Inflating:
    """One member's bytes as they inflate, counted and CRC-checked here."""

    def __init__(self, wheel: zipfile.ZipFile, member: zipfile.ZipInfo, where: str) -> None:
        if member.flag_bits & 0x1:
            raise WheelError(f"{where}: encrypted")
        # zipfile stops at the declared size and then blames the CRC; asked for one byte more,
        # with no CRC of its own to check (None: it checks none), it shows a member that
        # inflates past its size as what it is. The CRC is checked here instead.
        probe = copy.copy(member)
        probe.file_size = member.file_size + 1
        probe.CRC = None  # type: ignore[assignment]
        self.stream = wheel.open(probe)
        self.declared, self.expected_crc, self.where = member.file_size, member.CRC, where
        self.count = self.crc = 0

    def __enter__(self) -> Inflating:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stream.close()

    def read(self, size: int) -> bytes:
        data = self.stream.read(size)
        self.count += len(data)
        if self.count > self.declared:
            raise WheelError(f"{self.where}: inflates past the {self.declared} bytes the zip "
                             "declares for it")
        if len(data) < size and self.count < self.declared:  # short only at its end
            raise WheelError(f"{self.where}: inflates to {self.count} bytes, not the "
                             f"{self.declared} the zip declares for it")
        self.crc = zlib.crc32(data, self.crc)
        return data

    def finish(self) -> None:
        """Refused unless the member ended at its declared size with its declared CRC."""
        self.read(1)
        if self.crc != self.expected_crc:
            raise WheelError(f"{self.where}: its CRC-32 is not the one the zip declares")


def read_small(wheel: zipfile.ZipFile, member: zipfile.ZipInfo, where: str,
               limit: int) -> bytes:
    """A metadata file read whole, which only a small one may be."""
    if member.file_size > limit:
        raise WheelError(f"{where}: declares {member.file_size} bytes (at most {limit} read)")
    with Inflating(wheel, member, where) as body:
        content = body.read(member.file_size)
        body.finish()
    return content


class _Hashed:
    """`head` (a script's first bytes, its interpreter made the venv's), then the rest of
    `body`: what the tar reads, hashed for RECORD on the way."""

    def __init__(self, head: bytes, body: Inflating) -> None:
        self.head, self.body = head, body
        self.digest = hashlib.sha256()

    def read(self, size: int = CHUNK) -> bytes:
        data, self.head = self.head[:size], self.head[size:]
        if len(data) < size:
            data += self.body.read(size - len(data))
        self.digest.update(data)
        return data


def script_head(body: Inflating, tree: VenvTree) -> tuple[bytes, int]:
    """A script's first chunk with `#!python` (and `#!pythonw`) made the venv's interpreter, as
    the wheel format asks, and how much that changes its size. A first line longer than a
    chunk is left as it is: no kernel reads a `#!` line that long."""
    head = body.read(min(CHUNK, body.declared))
    first, newline, rest = head.partition(b"\n")
    shebang = SHEBANG.fullmatch(first)
    if shebang is None or (not newline and len(head) < body.declared):
        return head, 0
    tail = b" " + shebang.group(1) if shebang.group(1) else b""
    made = b"#!" + str(tree.bin / "python").encode() + tail
    return made + newline + rest, len(made) - len(first)


class TarWriter:
    """Root-owned entries dated `epoch`, each folder once before what it holds."""

    def __init__(self, tar: tarfile.TarFile, epoch: int) -> None:
        self.tar = tar
        self.epoch = epoch
        self.folders: set[PurePosixPath] = set()
        self.files = 0
        self.bytes = 0

    def file(self, target: PurePosixPath, content: bytes, mode: int) -> None:
        self._add(target, io.BytesIO(content), len(content), mode)

    def stream(self, target: PurePosixPath, head: bytes, body: Inflating, size: int,
               mode: int) -> bytes:
        """The member's bytes added at `target`; their sha256, for RECORD."""
        source = _Hashed(head, body)
        self._add(target, source, size, mode)
        body.finish()
        return source.digest.digest()

    def _add(self, target: PurePosixPath, source: _Hashed | io.BytesIO, size: int,
             mode: int) -> None:
        self._folders(target.parent)
        self.tar.addfile(self._entry(target, tarfile.REGTYPE, mode, size), source)
        self.files += 1
        self.bytes += size

    def _folders(self, folder: PurePosixPath) -> None:
        for parent in [*reversed(folder.parents), folder]:
            if parent != PurePosixPath("/") and parent not in self.folders:
                self.folders.add(parent)
                self.tar.addfile(self._entry(parent, tarfile.DIRTYPE, 0o755, 0))

    def _entry(self, path: PurePosixPath, kind: bytes, mode: int, size: int) -> tarfile.TarInfo:
        entry = tarfile.TarInfo(path.as_posix().lstrip("/"))
        entry.type, entry.mode, entry.size, entry.mtime = kind, mode, size, self.epoch
        entry.uid = entry.gid = 0
        entry.uname = entry.gname = "root"
        return entry
