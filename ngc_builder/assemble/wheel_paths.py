"""Where a wheel's file may land in the venv: the one rule every file the host-side installer
writes goes through (wheel_install.py), members, launchers and its own INSTALLER and RECORD.

A destination is its scheme's folder joined with plain names only (no absolute path, no `..`,
no empty or control-character name), so it stays inside that folder; and it may not be, be
under, or be a file in place of anything `python -m venv` made itself. The venv is made in an
earlier layer, and the tar is ADDed over it: Docker replaces whatever stands at a path the tar
names, so a member `.data/scripts/python3/x` would turn the interpreter link into a folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from packaging.utils import canonicalize_name

from ngc_builder.errors import CONTROL

VENV = PurePosixPath("/opt/venv")
# The files a wheel lists in RECORD for itself: the installer writes RECORD anew.
OWN_RECORDS = (("RECORD",), ("RECORD.jws",), ("RECORD.p7s",))


class WheelError(ValueError):
    """A wheel that cannot be installed as it is: its file, its member, and why."""


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

    def scheme(self, name: str, project: str) -> PurePosixPath | None:
        """The folder of a `.data` scheme, as pip lays out a venv; None for an unknown one."""
        return {"purelib": self.site_packages, "platlib": self.site_packages,
                "scripts": self.bin, "data": VENV,
                "headers": VENV / "include" / "site" / f"python{self.python}" / project,
                }.get(name)

    def own_entries(self, project: str) -> dict[PurePosixPath, str]:
        """What `python -m venv` made that is not a folder, and what it is. Every one of them
        runs or steers code: the interpreter links (3.14's venv adds `𝜋thon`), the config
        the interpreter reads to find its home, the scripts a user's shell sources, the lib64
        link, the .gitignore of 3.13's venv, and pip's launchers, which only pip's own wheel
        may write again (as `pip install -U pip` does)."""
        major = self.python.split(".")[0]
        links = ("python", f"python{major}", f"python{self.python}", "𝜋thon")
        activate = ("activate", "activate.csh", "activate.fish", "Activate.ps1")
        entries = {self.bin / name: "its interpreter link" for name in links}
        entries |= {self.bin / name: "an activate script" for name in activate}
        entries |= {VENV / "pyvenv.cfg": "its configuration", VENV / "lib64": "its lib64 link",
                    VENV / ".gitignore": "its .gitignore"}
        if canonicalize_name(project) != "pip":
            pips = ("pip", f"pip{major}", f"pip{self.python}")
            entries |= {self.bin / name: "pip's launcher" for name in pips}
        return entries

    @property
    def own_folders(self) -> frozenset[PurePosixPath]:
        """The venv's folders: a file in place of one would hide all it holds."""
        lib = VENV / "lib" / f"python{self.python}"
        return frozenset({VENV, self.bin, VENV / "include",
                          VENV / "include" / f"python{self.python}", VENV / "lib", lib,
                          self.site_packages})


def destination(tree: VenvTree, folder: PurePosixPath, parts: tuple[str, ...], where: str,
                project: str) -> PurePosixPath:
    """`folder` joined with `parts`, refused (naming `where`, the wheel and its member) unless
    it stays inside `folder` and leaves the venv's own entries and folders as they are."""
    target = folder.joinpath(*_plain(parts, where))
    if target == folder or not target.is_relative_to(folder):
        raise WheelError(f"{where}: lands outside {folder}")
    own = tree.own_entries(project)
    if target in own:
        raise WheelError(f"{where}: would replace the venv's own {target} ({own[target]})")
    for parent in target.parents:
        if parent in own:
            raise WheelError(f"{where}: would put a folder where the venv's own {parent} "
                             f"({own[parent]}) is")
    if target in tree.own_folders:
        raise WheelError(f"{where}: would put a file where the venv's folder {target} is")
    return target


def _plain(parts: tuple[str, ...], where: str) -> tuple[str, ...]:
    """Each part one plain name: a control character would also forge RECORD's rows."""
    for part in parts:
        if (part in ("", ".", "..") or "/" in part or "\\" in part
                or CONTROL.search(part)):
            raise WheelError(f"{where}: is not a plain relative path")
    return parts


@dataclass(frozen=True)
class WheelLayout:
    """One wheel's names: its file (for messages), its project and its .dist-info folder."""

    file: str
    project: str
    info: str

    @property
    def data(self) -> str:
        return self.info.removesuffix(".dist-info") + ".data"

    def where(self, member: str) -> str:
        return f"{self.file}: {member!r}" if not member.isprintable() else f"{self.file}: {member}"


def member_destination(tree: VenvTree, layout: WheelLayout, name: str) -> PurePosixPath | None:
    """Where the member `name` lands; None for the wheel's own RECORD (written anew)."""
    where = layout.where(name)
    parts = _plain(tuple(name.split("/")), where)
    if parts[0] == layout.info and parts[1:] in OWN_RECORDS:
        return None
    if parts[0] != layout.data:
        return destination(tree, tree.site_packages, parts, where, layout.project)
    if len(parts) < 3:
        raise WheelError(f"{where}: not inside a .data scheme")
    folder = tree.scheme(parts[1], layout.project)
    if folder is None:
        raise WheelError(f"{where}: unknown .data scheme {parts[1]!r}")
    return destination(tree, folder, parts[2:], where, layout.project)
