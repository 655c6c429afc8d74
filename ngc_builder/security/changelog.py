"""What a security update fixes, from the package itself: `usr/share/doc/<name>/
changelog.Debian.gz` in its `data.tar`, each entry newer than the locked version, and the CVE
IDs those entries name. The archive's own changelog service is not reachable from every build
host; the .deb is, and it is hash-checked against the signed index before it is read here.

Bounded like every archive we open: the data member's size, the bytes it decompresses to, the
number of tar members and the changelog's size.
"""

from __future__ import annotations

import gzip
import io
import lzma
import re
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ngc_builder.files import open_regular
from ngc_builder.lock.debian import ar_member, compare_versions

DATA_LIMIT = 1 << 30  # bytes a data.tar may decompress to before the read stops
MEMBERS_LIMIT = 100_000
CHANGELOG_LIMIT = 8 * 1024 * 1024
HEADER_RE = re.compile(r"^(?P<source>[a-z0-9][a-z0-9+.-]*) \((?P<version>[^() \t]+)\) "
                       r"(?P<suite>[^;]+);", re.MULTILINE)
CVE_RE = re.compile(r"\bCVE-\d{4}-\d{4,7}\b")
BINNMU_RE = re.compile(r"\+b\d+$")  # a binary-only rebuild: not in the source's changelog


@dataclass(frozen=True)
class Entry:
    """One changelog entry: the source version it made, its suite and the CVEs it names."""

    version: str
    suite: str
    cves: tuple[str, ...]


def changelog_text(deb: Path, name: str, source: str) -> str | None:
    """The package's Debian changelog: `changelog.Debian.gz`, or for a native package
    (apt, ca-certificates) `changelog.gz` when its entries are `source`'s. None when it has
    neither (its doc folder a link to another binary of the same source) or the .deb cannot
    be read within bounds."""
    folder = f"usr/share/doc/{name}/"
    found: dict[str, str] = {}
    try:
        with open_regular(deb) as archive:
            for path, data in _tar_members(archive):
                member = path.removeprefix("./").removeprefix(folder)
                if member in ("changelog.Debian.gz", "changelog.gz") and \
                        path.removeprefix("./").startswith(folder):
                    found[member] = _gunzipped(data)
    except (OSError, ValueError, EOFError, tarfile.TarError, lzma.LZMAError, zlib.error):
        return None
    native = found.get("changelog.gz")
    if native is not None and ((first := HEADER_RE.search(native)) is None
                               or first["source"] != source):
        native = None  # an upstream changelog, not Debian's
    return found.get("changelog.Debian.gz", native)


def _tar_members(archive: IO[bytes]) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of each small regular file of the .deb's data.tar.*."""
    member, size = ar_member(archive, "data.tar")
    stream = _Bounded(archive, size, member)
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for count, entry in enumerate(tar):
            if count >= MEMBERS_LIMIT:
                raise ValueError("too many members")
            if entry.isfile() and entry.size <= CHANGELOG_LIMIT:
                extracted = tar.extractfile(entry)
                if extracted is not None:
                    yield entry.name, extracted.read()


class _Bounded(io.RawIOBase):
    """The data member decompressed as it is read, CHUNK bytes at a time (a bomb never
    expands in memory), at most DATA_LIMIT bytes in all."""

    CHUNK = 1 << 20

    def __init__(self, archive: IO[bytes], size: int, member: str) -> None:
        self.archive, self.left, self.given, self.pending = archive, size, 0, b""
        self.xz = lzma.LZMADecompressor() if member.endswith(".xz") else None
        self.gz = zlib.decompressobj(16 + zlib.MAX_WBITS) if member.endswith(".gz") else None
        if self.xz is None and self.gz is None and member != "data.tar":
            raise ValueError(f"{member}: compression not read here")

    def readable(self) -> bool:
        return True

    def _block(self) -> bytes:
        block = self.archive.read(min(self.CHUNK, self.left)) if self.left > 0 else b""
        self.left -= len(block)
        return block

    def _more(self) -> bytes:
        if self.xz is not None:
            if self.xz.eof:
                return b""
            return self.xz.decompress(b"" if not self.xz.needs_input else self._block(),
                                      self.CHUNK)
        if self.gz is not None:
            tail = self.gz.unconsumed_tail or self._block()
            return self.gz.decompress(tail, self.CHUNK) if tail else b""
        return self._block()

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        for _ in range(64):  # a stream that gives nothing 64 times in a row has ended
            if self.pending:
                break
            self.pending = self._more()
        taken = self.pending[:len(buffer)]
        self.pending = self.pending[len(taken):]
        self.given += len(taken)
        if self.given > DATA_LIMIT:
            raise ValueError("data.tar decompresses past its bound")
        buffer[:len(taken)] = taken
        return len(taken)


def _gunzipped(data: bytes) -> str:
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
        text = unpacked.read(CHANGELOG_LIMIT + 1)
    if len(text) > CHANGELOG_LIMIT:
        raise ValueError("changelog too big")
    return text.decode("utf-8", "replace")


def entries_after(text: str, locked: str) -> list[Entry]:
    """The entries newer than the locked version (a binNMU's `+bN` is the source's version):
    what the update brings. Newest first, as the changelog lists them."""
    since = BINNMU_RE.sub("", locked)
    headers = list(HEADER_RE.finditer(text))
    found = []
    for at, header in enumerate(headers):
        if compare_versions(header["version"], since) <= 0:
            break
        end = headers[at + 1].start() if at + 1 < len(headers) else len(text)
        body = text[header.end():end]
        cves = tuple(dict.fromkeys(CVE_RE.findall(body)))
        found.append(Entry(header["version"], header["suite"].strip(), cves))
    return found
