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
lock first. Every name is checked: no absolute path, no `..`, nothing outside the venv.
Entries are root-owned, dated the lock's epoch and in a stable order: same lock, same tar.
"""

from __future__ import annotations

import base64
import configparser
import hashlib
import io
import re
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ngc_builder.lock.models import PipPackage

VENV = PurePosixPath("/opt/venv")
MAX_WHEEL_BYTES = 16 * 1024**3  # unpacked, per wheel: the largest CUDA wheels are ~3 GB
ENTRY_RE = re.compile(r"^(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+))?\s*(\[.*\])?$")
CHUNK = 1 << 20


class WheelError(ValueError):
    """A wheel that cannot be installed as it is: its file, and why."""


@dataclass(frozen=True)
class VenvTree:
    python: str  # X.Y, the venv's interpreter
    epoch: int  # every entry's mtime

    @property
    def site_packages(self) -> PurePosixPath:
        return VENV / "lib" / f"python{self.python}" / "site-packages"

    @property
    def bin(self) -> PurePosixPath:
        return VENV / "bin"

    @property
    def reserved(self) -> set[PurePosixPath]:
        """The venv's own files, which no wheel may replace."""
        names = ("python", "python3", f"python{self.python}", "activate", "pip")
        return {VENV / "pyvenv.cfg", *(self.bin / name for name in names)}


@dataclass(frozen=True)
class Installed:
    wheels: int
    files: int
    bytes: int


def install_wheels(packages: list[PipPackage], wheel_path: Callable[[PipPackage], Path],
                   tree: VenvTree, out: Path) -> Installed:
    """Write `out`, a tar of `packages` installed into the venv at /opt/venv; nothing is left
    at `out` when a wheel is refused."""
    partial = out.with_name(out.name + ".partial")
    try:
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            writer = _TarWriter(tar, tree.epoch)
            for package in sorted(packages, key=lambda p: p.name):
                _install_one(package, wheel_path(package), tree, writer)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return Installed(len(packages), writer.files, writer.bytes)


def _install_one(package: PipPackage, path: Path, tree: VenvTree, writer: _TarWriter) -> None:
    if _sha256_of(path) != package.sha256:
        raise WheelError(f"{package.file}: its sha256 is not the lock's")
    try:
        with zipfile.ZipFile(path) as wheel:
            _Wheel(wheel, package, tree, writer).install()
    except (zipfile.BadZipFile, OSError, KeyError, UnicodeDecodeError) as exc:
        raise WheelError(f"{package.file}: {exc}") from None


class _Wheel:
    """One wheel's members placed in the tree, its launchers made and its RECORD rewritten."""

    def __init__(self, wheel: zipfile.ZipFile, package: PipPackage, tree: VenvTree,
                 writer: _TarWriter) -> None:
        self.wheel, self.package, self.tree, self.writer = wheel, package, tree, writer
        self.info, self.data = _dist_info(wheel, package)
        self.record: list[str] = []
        self.unpacked = 0

    def install(self) -> None:
        for member in self.wheel.infolist():
            if member.is_dir():
                continue
            target = self._target(member.filename)
            if target is None:  # the wheel's own RECORD: written anew below
                continue
            self._write(target, self._bytes(member), _mode(member), member.filename)
        self._launchers()
        self._add_file(self.tree.site_packages / self.info / "INSTALLER", b"ngc-builder\n")
        record = self.tree.site_packages / self.info / "RECORD"
        self.record.append(f"{self._relative(record)},,")
        self.writer.file(record, ("\n".join(self.record) + "\n").encode(), 0o644)

    def _target(self, name: str) -> PurePosixPath | None:
        parts = _safe_parts(name, self.package.file)
        if parts[0] == self.info and parts[1:] in (("RECORD",), ("RECORD.jws",), ("RECORD.p7s",)):
            return None
        if parts[0] != self.data:
            return self.tree.site_packages.joinpath(*parts)
        if len(parts) < 3:
            raise WheelError(f"{self.package.file}: {name}: not inside a .data scheme")
        scheme, rest = parts[1], parts[2:]
        places = {"purelib": self.tree.site_packages, "platlib": self.tree.site_packages,
                  "scripts": self.tree.bin, "data": VENV,
                  "headers": VENV / "include" / "site" / f"python{self.tree.python}"
                  / self.package.name}
        if scheme not in places:
            raise WheelError(f"{self.package.file}: {name}: unknown .data scheme {scheme!r}")
        return places[scheme].joinpath(*rest)

    def _bytes(self, member: zipfile.ZipInfo) -> bytes:
        self.unpacked += member.file_size
        if self.unpacked > MAX_WHEEL_BYTES:
            raise WheelError(f"{self.package.file}: unpacks to more than "
                             f"{MAX_WHEEL_BYTES // 1024**3} GB")
        with self.wheel.open(member) as stream:
            content = stream.read(member.file_size + 1)
        if len(content) != member.file_size:
            raise WheelError(f"{self.package.file}: {member.filename}: its size is not the "
                             "one the archive declares")
        return content

    def _write(self, target: PurePosixPath, content: bytes, mode: int, name: str) -> None:
        if target.parent == self.tree.bin and _is_script_member(name, self.data):
            content, mode = _script(content, self.tree), 0o755
        self._add_file(target, content, mode)

    def _add_file(self, target: PurePosixPath, content: bytes, mode: int = 0o644) -> None:
        if target in self.tree.reserved:
            raise WheelError(f"{self.package.file}: would replace the venv's own {target}")
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
        self.record.append(f"{self._relative(target)},sha256={digest.decode()},{len(content)}")
        self.writer.file(target, content, mode)

    def _relative(self, target: PurePosixPath) -> str:
        """A RECORD path: relative to site-packages (`../../../bin/x` for a script)."""
        ups = len(self.tree.site_packages.parts) - 1
        common = VENV.parts
        if target.is_relative_to(self.tree.site_packages):
            return target.relative_to(self.tree.site_packages).as_posix()
        tail = PurePosixPath(*target.parts[len(common):])
        return "/".join([".."] * (ups - len(common) + 1) + [tail.as_posix()])

    def _launchers(self) -> None:
        name = f"{self.info}/entry_points.txt"
        if name not in self.wheel.namelist():
            return
        for script, target in _entry_points(self.wheel.read(name).decode(), self.package.file):
            module, attr = target
            text = (f"#!{self.tree.bin / 'python'}\nimport sys\nfrom {module} import "
                    f"{attr.split('.')[0]}\nif __name__ == \"__main__\":\n"
                    f"    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
                    f"    sys.exit({attr}())\n")
            self._add_file(self.tree.bin / script, text.encode(), 0o755)


def _dist_info(wheel: zipfile.ZipFile, package: PipPackage) -> tuple[str, str]:
    """The wheel's `<name>-<version>.dist-info` folder, and its `.data` folder's name."""
    found = {name.split("/", 1)[0] for name in wheel.namelist()
             if name.split("/", 1)[0].endswith(".dist-info") and name.endswith("/WHEEL")}
    if len(found) != 1:
        raise WheelError(f"{package.file}: not one .dist-info folder with a WHEEL file")
    info = found.pop()
    return info, info.removesuffix(".dist-info") + ".data"


def _safe_parts(name: str, wheel: str) -> tuple[str, ...]:
    """The member's path parts, refused if it could land outside its place."""
    parts = tuple(name.split("/"))
    if (name.startswith("/") or "\\" in name or "\x00" in name
            or any(part in ("", ".", "..") for part in parts)):
        raise WheelError(f"{wheel}: member {name!r} is not a plain relative path")
    return parts


def _mode(member: zipfile.ZipInfo) -> int:
    """pip's rule: executable for everyone if any execute bit is set, else 0644."""
    return 0o755 if (member.external_attr >> 16) & 0o111 else 0o644


def _is_script_member(name: str, data: str) -> bool:
    return name.startswith(f"{data}/scripts/")


def _script(content: bytes, tree: VenvTree) -> bytes:
    """`#!python` (and `#!pythonw`) made the venv's interpreter, as the wheel format asks."""
    first, newline, rest = content.partition(b"\n")
    shebang = re.fullmatch(rb"#!pythonw?(?:[ \t]+(.*?))?\r?", first)
    if shebang is None:
        return content
    tail = b" " + shebang.group(1) if shebang.group(1) else b""
    return b"#!" + str(tree.bin / "python").encode() + tail + newline + rest


def _entry_points(text: str, wheel: str) -> Iterator[tuple[str, tuple[str, str]]]:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise WheelError(f"{wheel}: entry_points.txt: {exc.message}") from None
    for section in ("console_scripts", "gui_scripts"):
        for script, value in (parser[section].items() if parser.has_section(section) else []):
            match = ENTRY_RE.match(value.strip())
            if not match or not match["attr"] or "/" in script or script in ("", ".", ".."):
                raise WheelError(f"{wheel}: entry point {script} = {value!r} is not "
                                 "module:attribute")
            yield script, (match["module"], match["attr"])


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class _TarWriter:
    """Root-owned entries dated `epoch`, each folder once before what it holds."""

    def __init__(self, tar: tarfile.TarFile, epoch: int) -> None:
        self.tar = tar
        self.epoch = epoch
        self.folders: set[PurePosixPath] = set()
        self.files = 0
        self.bytes = 0

    def file(self, target: PurePosixPath, content: bytes, mode: int) -> None:
        self._folders(target.parent)
        self.tar.addfile(self._entry(target, tarfile.REGTYPE, mode, len(content)),
                         io.BytesIO(content))
        self.files += 1
        self.bytes += len(content)

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
