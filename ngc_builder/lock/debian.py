"""What a .deb says about itself, read the way dpkg reads it: the control file out of the
package's `control.tar.*` member, its relation fields, and Debian's version order.

Why our own reader: the builder runs on hosts without dpkg (and must not trust one inside an
image); the format is small (an `ar` archive holding a tar) and the standard library opens
it. A .deb is hostile input like any archive: every size is bounded, a member before the
control file that is too big ends the read, and anything unreadable is None (the package's
relations are then unknown, never guessed).
"""

from __future__ import annotations

import io
import lzma
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ngc_builder.files import open_regular

AR_MAGIC = b"!<arch>\n"
AR_HEADER = 60
CONTROL_LIMIT = 4 * 1024 * 1024  # bytes of control.tar.* and of the control file itself
MEMBERS_LIMIT = 64  # control.tar holds a handful of maintainer scripts and lists
SIZE_RE = re.compile(rb"[0-9]{1,10} *")  # an ar header's size field: decimal, space-padded
RELATION_RE = re.compile(
    r"(?P<name>[a-z0-9][a-z0-9+.-]*)(?::[a-z0-9-]+)?\s*"
    r"(?:\(\s*(?P<op><<|<=|>=|>>|=|<|>)\s*(?P<version>[^)\s]+)\s*\))?"
    r"(?:\s*\[[^\]]*\])?(?:\s*<[^>]*>)*")


@dataclass(frozen=True)
class Relation:
    """One alternative of a relation: `name`, and `op version` when it asks for versions."""

    name: str
    op: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        return f"{self.name} ({self.op} {self.version})" if self.op else self.name


@dataclass(frozen=True)
class DebControl:
    """The fields of a control file that the lock's closure reads; each relation is a
    list of alternatives (`a | b`)."""

    depends: tuple[tuple[Relation, ...], ...]
    provides: tuple[Relation, ...]


def deb_control(path: Path) -> DebControl | None:
    """The control of the .deb at `path`, None when it cannot be read within bounds."""
    try:
        fields = control_fields(control_text(path))
    except (OSError, ValueError, EOFError, tarfile.TarError, lzma.LZMAError, zlib.error):
        return None
    return DebControl(
        depends=tuple(relations(fields.get("Pre-Depends", "")) + relations(
            fields.get("Depends", ""))),
        provides=tuple(group[0] for group in relations(fields.get("Provides", ""))))


def control_text(path: Path) -> str:
    """The .deb's `control` file, read within the bounds above (ValueError, OSError and the
    decompressors' errors for what cannot be read so)."""
    return _control_text(*_control_member(path))


def _control_member(path: Path) -> tuple[str, bytes]:
    with open_regular(path) as archive:
        name, size = ar_member(archive, "control.tar")
        if size > CONTROL_LIMIT:
            raise ValueError("control member too big")
        return name, archive.read(size)


def ar_member(archive: IO[bytes], prefix: str) -> tuple[str, int]:
    """The name and size of the .deb's first member named `prefix*`, the archive left at its
    first byte (ValueError when there is none or the archive is not one)."""
    if archive.read(len(AR_MAGIC)) != AR_MAGIC:
        raise ValueError("not an ar archive")
    while len(header := archive.read(AR_HEADER)) == AR_HEADER:
        if not SIZE_RE.fullmatch(header[48:58]):  # a negative size would seek back
            raise ValueError("bad ar member size")
        name, size = header[:16].decode("ascii").strip().rstrip("/"), int(header[48:58])
        if name.startswith(prefix):
            return name, size
        archive.seek(size + size % 2, io.SEEK_CUR)
    raise ValueError(f"no {prefix} member")


def _control_text(member: str, data: bytes) -> str:
    """The `control` file of the control tarball, decompressed here into a bounded buffer
    first: tarfile's own streams read a long-name header whole, a bomb's way in."""
    with tarfile.open(fileobj=io.BytesIO(_decompressed(member, data)), mode="r:") as tar:
        for count, entry in enumerate(tar):
            if count >= MEMBERS_LIMIT or entry.size > CONTROL_LIMIT:
                break
            if entry.isfile() and entry.name.removeprefix("./") == "control":
                extracted = tar.extractfile(entry)
                if extracted is not None:
                    return str(extracted.read(CONTROL_LIMIT).decode("utf-8", "replace"))
    raise ValueError("no control file")


def _decompressed(member: str, data: bytes) -> bytes:
    """The member's tar bytes, at most CONTROL_LIMIT of them (more: ValueError)."""
    if member == "control.tar":
        return data
    if member == "control.tar.gz":
        unpacker: zlib._Decompress | lzma.LZMADecompressor = zlib.decompressobj(
            16 + zlib.MAX_WBITS)
    elif member == "control.tar.xz":
        unpacker = lzma.LZMADecompressor()
    else:
        raise ValueError(f"{member}: compression not read here")
    found = unpacker.decompress(data, CONTROL_LIMIT + 1)
    if len(found) > CONTROL_LIMIT:
        raise ValueError("control tarball too big")
    return found


def control_fields(text: str) -> dict[str, str]:
    """The first stanza's fields, continuation lines joined (a long Depends may wrap)."""
    fields: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0].isspace() and key is not None:
            fields[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip()
            fields[key] = value.strip()
    return fields


def relations(text: str) -> list[tuple[Relation, ...]]:
    """`a (>= 1) | b, c:any` as [(a >= 1, b), (c,)]; an alternative that does not parse is
    left out (dpkg would have refused the package: nothing it asks for can be known)."""
    groups = []
    for group in text.split(","):
        alternatives = tuple(Relation(m["name"], m["op"], m["version"])
                             for alternative in group.split("|")
                             if (m := RELATION_RE.fullmatch(alternative.strip())))
        if alternatives:
            groups.append(alternatives)
    return groups


def satisfies(version: str, relation: Relation) -> bool:
    """Whether `version` meets the relation's version constraint (none: any version)."""
    if relation.op is None or relation.version is None:
        return True
    order = compare_versions(version, relation.version)
    return {"<<": order < 0, "<=": order <= 0, "<": order <= 0, "=": order == 0,
            ">=": order >= 0, ">": order >= 0, ">>": order > 0}[relation.op]


def compare_versions(left: str, right: str) -> int:
    """Debian's order (epoch, then upstream, then revision): <0, 0 or >0."""
    left_parts, right_parts = _split_version(left), _split_version(right)
    if left_parts[0] != right_parts[0]:
        return left_parts[0] - right_parts[0]
    return (_compare_part(left_parts[1], right_parts[1])
            or _compare_part(left_parts[2], right_parts[2]))


def _split_version(version: str) -> tuple[int, str, str]:
    epoch, _, rest = version.partition(":") if ":" in version else ("0", "", version)
    upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
    return int(epoch) if epoch.isdigit() else 0, upstream, revision


def _compare_part(left: str, right: str) -> int:
    """Alternating runs of non-digits (by `_weight`) and of digits (as numbers)."""
    left_runs, right_runs = _runs(left), _runs(right)
    for index in range(max(len(left_runs), len(right_runs))):
        a = left_runs[index] if index < len(left_runs) else ""
        b = right_runs[index] if index < len(right_runs) else ""
        found = _compare_number(a, b) if index % 2 else _compare_text(a, b)
        if found:
            return found
    return 0


def _compare_number(left: str, right: str) -> int:
    """Digit runs as numbers, however long (no int(): a 5000-digit run is valid input)."""
    left, right = left.lstrip("0"), right.lstrip("0")
    if len(left) != len(right):
        return len(left) - len(right)
    return (left > right) - (left < right)


def _runs(part: str) -> list[str]:
    """`1.2~rc1` as ['', '1', '.', '2', '~rc', '1']: non-digits first, then digits, ..."""
    return [run for pair in re.findall(r"([^0-9]*)([0-9]*)", part) for run in pair]


def _compare_text(left: str, right: str) -> int:
    for index in range(max(len(left), len(right))):
        found = _weight(left[index:index + 1]) - _weight(right[index:index + 1])
        if found:
            return found
    return 0


def _weight(char: str) -> int:
    """`~` sorts before everything, even the end of the string; letters before other marks."""
    if char == "~":
        return -1
    if not char:
        return 0
    return ord(char) if char.isalpha() else ord(char) + 256
