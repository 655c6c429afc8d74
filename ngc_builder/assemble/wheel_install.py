"""Install locked wheels into a venv tree written as a tar, on the build host, for an image of
another platform (linux/arm64 on an amd64 host): a wheel is a zip whose files only need
placing, so nothing of the target platform has to run for it, the way cross builds install
into a target tree. The image's Dockerfile ADDs the tar; only compiling the bytecode runs
emulated there (docs/multiarch.md).

What pip does for a wheel in a venv, per the wheel format (PEP 427, PEP 376 RECORD): the
root and `.data/purelib|platlib` go to site-packages, `.data/scripts` to bin with `#!python`
made the venv's interpreter, `.data/data` to the venv root, `.data/headers` to
include/site/python<X.Y>/<name>, console and GUI entry points become launchers in bin, and
RECORD lists every file written with its hash. Each wheel's bytes are checked against the
lock first. Every file written goes through one path rule (wheel_paths.py): inside its
scheme's folder, and never over what the venv made itself. Members are streamed, each bounded
by its declared size and the wheel by MAX_WHEEL_BYTES (wheel_stream.py). Entries are
root-owned, dated the lock's epoch and in a stable order: same lock, same tar.
"""

from __future__ import annotations

import base64
import configparser
import contextlib
import csv
import hashlib
import io
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ngc_builder.assemble.wheel_paths import (
    VENV,
    VenvTree,
    WheelError,
    WheelLayout,
    destination,
    member_destination,
)
from ngc_builder.assemble.wheel_stream import Inflating, TarWriter, read_small, script_head
from ngc_builder.files import file_sha256
from ngc_builder.lock.models import PipPackage

__all__ = ["MAX_WHEEL_BYTES", "VENV", "Installed", "VenvTree", "WheelError", "install_wheels"]

MAX_WHEEL_BYTES = 16 * 1024**3  # unpacked, per wheel: the largest CUDA wheels are ~3 GB
MAX_TEXT_BYTES = 4 * 1024**2  # entry_points.txt, read whole: real ones are a few KB
ENTRY_RE = re.compile(r"^(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+))?\s*(\[.*\])?$")
# What zipfile and its decompressors raise on a damaged member; the disk's own errors too,
# so a full disk names the member it was writing.
DAMAGED = (zipfile.BadZipFile, EOFError, OSError, zlib.error, lzma.LZMAError,
           NotImplementedError, UnicodeDecodeError)


@dataclass(frozen=True)
class Installed:
    wheels: int
    files: int
    bytes: int


def install_wheels(packages: list[PipPackage], wheel_path: Callable[[PipPackage], Path],
                   tree: VenvTree, out: Path, limit: int = MAX_WHEEL_BYTES) -> Installed:
    """Write `out`, a tar of `packages` installed into the venv at /opt/venv, each wheel
    unpacking to at most `limit` bytes; nothing is left at `out` when a wheel is refused."""
    partial = out.with_name(out.name + ".partial")
    try:
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            writer = TarWriter(tar, tree.epoch)
            for package in sorted(packages, key=lambda p: p.name):
                _install_one(package, wheel_path(package), tree, writer, limit)
        partial.replace(out)
    except BaseException:
        out.unlink(missing_ok=True)  # an earlier run's tar is not this lock's either
        raise
    finally:
        partial.unlink(missing_ok=True)
    return Installed(len(packages), writer.files, writer.bytes)


def _install_one(package: PipPackage, path: Path, tree: VenvTree, writer: TarWriter,
                 limit: int) -> None:
    if file_sha256(path) != package.sha256:
        raise WheelError(f"{package.file}: its sha256 is not the lock's")
    with _damaged(package.file):
        wheel = zipfile.ZipFile(path)
    with wheel:
        _Wheel(wheel, package, tree, writer).install(limit)


@contextlib.contextmanager
def _damaged(where: str) -> Iterator[None]:
    """What a damaged zip raises, as one line naming `where` (the wheel, and its member)."""
    try:
        yield
    except DAMAGED as exc:
        raise WheelError(f"{where}: {exc.__class__.__name__}: {exc}") from None


class _Wheel:
    """One wheel's members placed in the tree, its launchers made and its RECORD rewritten."""

    def __init__(self, wheel: zipfile.ZipFile, package: PipPackage, tree: VenvTree,
                 writer: TarWriter) -> None:
        self.wheel, self.tree, self.writer = wheel, tree, writer
        self.layout = WheelLayout(package.file, package.name, _dist_info(wheel, package))
        self.record: list[tuple[str, str, str]] = []

    def install(self, limit: int) -> None:
        members = [member for member in self.wheel.infolist() if not member.is_dir()]
        _bound(members, self.layout, limit)
        for member in members:
            self._place(member)
        self._launchers()
        info = self.layout.info
        self._add_file(self._own(info, "INSTALLER"), b"ngc-builder\n", 0o644)
        record = self._own(info, "RECORD")
        self.record.append((self._relative(record), "", ""))
        self.writer.file(record, _record_text(self.record), 0o644)

    def _own(self, *parts: str) -> PurePosixPath:
        where = f"{self.layout.file}: {'/'.join(parts)}"
        return destination(self.tree, self.tree.site_packages, parts, where, self.layout.project)

    def _place(self, member: zipfile.ZipInfo) -> None:
        target = member_destination(self.tree, self.layout, member.filename)
        if target is None:  # the wheel's own RECORD: written anew at the end
            return
        script = (target.parent == self.tree.bin
                  and member.filename.startswith(f"{self.layout.data}/scripts/"))
        mode = 0o755 if script else _mode(member)
        where = self.layout.where(member.filename)
        with _damaged(where), Inflating(self.wheel, member, where) as body:
            head, grown = script_head(body, self.tree) if script else (b"", 0)
            size = member.file_size + grown
            digest = self.writer.stream(target, head, body, size, mode)
        self._row(target, digest, size)

    def _add_file(self, target: PurePosixPath, content: bytes, mode: int) -> None:
        self._row(target, hashlib.sha256(content).digest(), len(content))
        self.writer.file(target, content, mode)

    def _row(self, target: PurePosixPath, digest: bytes, size: int) -> None:
        encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        self.record.append((self._relative(target), f"sha256={encoded}", str(size)))

    def _relative(self, target: PurePosixPath) -> str:
        """A RECORD path: relative to site-packages (`../../../bin/x` for a script)."""
        ups = len(self.tree.site_packages.parts) - 1
        common = VENV.parts
        if target.is_relative_to(self.tree.site_packages):
            return target.relative_to(self.tree.site_packages).as_posix()
        tail = PurePosixPath(*target.parts[len(common):])
        return "/".join([".."] * (ups - len(common) + 1) + [tail.as_posix()])

    def _launchers(self) -> None:
        name = f"{self.layout.info}/entry_points.txt"
        if name not in self.wheel.namelist():
            return
        where = self.layout.where(name)
        with _damaged(where):
            text = read_small(self.wheel, self.wheel.getinfo(name), where,
                              MAX_TEXT_BYTES).decode()
        for script, (module, attr) in _entry_points(text, where):
            target = destination(self.tree, self.tree.bin, (script,),
                                 f"{where}: {script}", self.layout.project)
            launcher = (f"#!{self.tree.bin / 'python'}\nimport sys\nfrom {module} import "
                        f"{attr.split('.')[0]}\nif __name__ == \"__main__\":\n"
                        f"    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
                        f"    sys.exit({attr}())\n")
            self._add_file(target, launcher.encode(), 0o755)


def _bound(members: list[zipfile.ZipInfo], layout: WheelLayout, limit: int) -> None:
    """Refused, before anything is inflated, when the declared sizes add up past `limit`;
    each member is then held to its declared size as it inflates."""
    total = 0
    for member in members:
        total += member.file_size
        if total > limit:
            raise WheelError(f"{layout.where(member.filename)}: would unpack the wheel past "
                             f"{_amount(limit)} (the bound for one wheel)")


def _amount(size: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def _dist_info(wheel: zipfile.ZipFile, package: PipPackage) -> str:
    """The wheel's `<name>-<version>.dist-info` folder."""
    found = {name.split("/", 1)[0] for name in wheel.namelist()
             if name.split("/", 1)[0].endswith(".dist-info") and name.endswith("/WHEEL")}
    if len(found) != 1:
        raise WheelError(f"{package.file}: not one .dist-info folder with a WHEEL file")
    return found.pop()


def _mode(member: zipfile.ZipInfo) -> int:
    """pip's rule: executable for everyone if any execute bit is set, else 0644."""
    return 0o755 if (member.external_attr >> 16) & 0o111 else 0o644


def _record_text(rows: list[tuple[str, str, str]]) -> bytes:
    """RECORD as pip writes it: CSV, so a comma in a name is quoted, not a new column."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    return text.getvalue().encode()


def _entry_points(text: str, where: str) -> Iterator[tuple[str, tuple[str, str]]]:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise WheelError(f"{where}: {exc.message}") from None
    for section in ("console_scripts", "gui_scripts"):
        for script, value in (parser[section].items() if parser.has_section(section) else []):
            match = ENTRY_RE.match(value.strip())
            if not match or not match["attr"]:
                raise WheelError(f"{where}: entry point {script} = {value!r} is not "
                                 "module:attribute")
            yield script, (match["module"], match["attr"])
