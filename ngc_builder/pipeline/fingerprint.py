"""The no-op memo's fingerprint (pipeline/noop.py): one digest of everything that decides what
a release run does, taken before the run reads any of it.

It covers the command's options, the manifest and its lock, the project's `templates/`,
`frameworks/`, `base-images/` and `baselines/` (the template loader reads nothing else of the
project), the site file, the builder's own code, the libraries installed with it (each one's
metadata folder and RECORD: another Jinja2 renders other Dockerfiles) and the interpreter's
version, every NGC_ setting, the signing key and the host's GPU mode.

Each file is read as a regular file, and no link is followed out of those folders: a link
is hashed by its target text, and the file it names is read where it lies, in one of them.
What it cannot stand for (a link out, a manifest that is not a regular file or is too large,
a file it cannot read) means no fingerprint, so no memo: the whole run goes on as it would,
and its own checks refuse what they refuse before anything is written (a framework's link
out, as `check` does; a manifest that is not a regular file).
What the run would read late or without end is refused here at once, in one line: a FIFO,
a device or a socket inside the folders (git holds none), a lock or a site file that is not
a regular file, a site file over the loader's 1 MiB.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import ngc_builder
from ngc_builder.errors import InputError, Problem
from ngc_builder.files import INPUT_LIMIT, UnsafeFile, file_sha256
from ngc_builder.manifest.paths import PROJECT_FOLDERS, SITE_FILE, default_root, lock_path
from ngc_builder.pipeline.options import ReleaseOptions
from ngc_builder.publish.key_files import configured_key_text
from ngc_builder.services.environment import gpu_mode, setting

VERSION = 2  # 2: regular files only, links by their text, the installed libraries
# A library's RECORD lists its files: a few hundred KB for the largest.
RECORD_LIMIT = 16 << 20
LIBRARY_FILES = ("RECORD", "METADATA", "PKG-INFO")  # the first there says what is installed


class Unvouched(Exception):
    """An input the fingerprint cannot stand for: no memo is read or kept for this run."""


def fingerprint(options: ReleaseOptions) -> str | None:
    """One digest of everything that decides what a release run does (the module's list);
    None when an input is one it cannot stand for. InputError for a FIFO or a device in the
    project's folders."""
    digest = hashlib.sha256(f"ngc-builder no-op memo {VERSION}\n".encode())
    try:
        for label, data in _inputs(options):
            digest.update(f"{label}\0{len(data)}\0".encode())
            digest.update(data)
    except Unvouched:
        return None
    return digest.hexdigest()


def _inputs(options: ReleaseOptions) -> Iterator[tuple[str, bytes]]:
    manifest = options.manifest.resolve()
    root = (options.root or default_root(manifest)).resolve()
    # What is printed is not what is done: a --json or --quiet run leaves a memo for any run.
    shown = dataclasses.asdict(dataclasses.replace(options, show_logs=True, as_json=False))
    yield "options", json.dumps(shown, sort_keys=True, default=_absolute).encode()
    yield "gpu", gpu_mode().encode()
    yield "settings", json.dumps(sorted((name, value) for name, value in os.environ.items()
                                        if name.startswith("NGC_"))).encode()
    yield "signing key", configured_key_text() or b""
    yield "python", sys.version.encode()
    # The manifest's own loader refuses it before anything is written; the lock's and the
    # site file's are read later (or, the lock's, without a bound): refused here, at once.
    sites = [root / SITE_FILE, options.site, setting("NGC_SITE")]
    named = [(manifest, INPUT_LIMIT, None), (lock_path(manifest), None, "lock"),
             *((Path(site), INPUT_LIMIT, "(file)") for site in sites if site)]
    for path, limit, field in named:
        yield f"file {path}", _digest(path, limit, field).encode()
    roots = _roots(root)
    scopes = [os.path.realpath(folder) for folder, _ in roots]
    for folder, name in roots:
        yield from _tree(folder, name, scopes)
    yield from _libraries()


def _digest(path: Path, limit: int | None, refuse: str | None = None) -> str:
    """The file's sha256, "" for one that is not there (absence is an input too). One that
    is not a regular file, or is larger than `limit`: InputError `PATH:1: <refuse>: why`
    where `refuse` names the field, else Unvouched (the run reads it and says why)."""
    try:
        return file_sha256(path, limit)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except UnsafeFile as exc:
        if refuse is None:
            raise Unvouched from None
        raise InputError([Problem(str(path), 1, refuse, exc.strerror or "")]) from None
    except OSError:
        raise Unvouched from None


def _roots(root: Path) -> list[tuple[Path, str]]:
    """The folders read whole: the project's, each framework folder that is itself a link
    (as `check` allows: a checkout linking a shared framework in), and the builder's code."""
    roots = [(root / name, name) for name in PROJECT_FOLDERS]
    with contextlib.suppress(OSError):
        linked = [entry for entry in os.scandir(root / "frameworks")
                  if entry.is_symlink() and entry.is_dir()]
        roots += sorted((Path(entry.path), f"frameworks/{entry.name}") for entry in linked)
    return [*roots, (Path(ngc_builder.__file__).parent, "ngc_builder")]


def _tree(top: Path, name: str, scopes: list[str]) -> Iterator[tuple[str, bytes]]:
    """Each entry under `top` by its path: a file's bytes (a regular file only), a link's
    target text (the file it names is in one of `scopes`, read there, or Unvouched)."""
    stack = [(top, name)]
    while stack:
        folder, shown = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name, reverse=True)
        except (FileNotFoundError, NotADirectoryError):
            continue  # a project without baselines/
        except OSError:
            raise Unvouched from None  # a folder it cannot list: the run says why
        for entry in entries:
            path, label = Path(entry.path), f"{shown}/{entry.name}"
            if entry.is_symlink():
                yield f"link {label}", _link(path, scopes)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append((path, label))
            else:
                yield f"file {label}", _project_file(path, label)


def _link(path: Path, scopes: list[str]) -> bytes:
    real = os.path.realpath(path)
    if not any(os.path.commonpath([real, scope]) == scope for scope in scopes):
        raise Unvouched  # what it names is not read: another run may find it changed
    return os.fsencode(os.readlink(path))


def _project_file(path: Path, label: str) -> bytes:
    """A project file's sha256; InputError for a FIFO, a device or a socket (git holds
    none: one there is put there to hang the run)."""
    try:
        return file_sha256(path, links=False).encode()
    except UnsafeFile as exc:
        raise InputError([Problem(label, 1, "(file)", exc.strerror or "")]) from None
    except OSError:
        raise Unvouched from None


def _libraries() -> Iterator[tuple[str, bytes]]:
    """Each installed distribution on the import path by its metadata folder's name (name and
    version) and the hash of its RECORD: another Jinja2 renders other Dockerfiles."""
    for entry in dict.fromkeys(sys.path):
        folder = Path(entry or os.curdir)
        if not folder.is_dir():
            continue  # the standard library's zip
        infos = [*folder.glob("*.dist-info"), *folder.glob("*.egg-info")]
        for info in sorted(infos):
            yield f"library {entry}\0{info.name}", _library_digest(info).encode()


def _library_digest(info: Path) -> str:
    if not info.is_dir():
        return _digest(info, RECORD_LIMIT)  # an egg-info file is the metadata itself
    for name in LIBRARY_FILES:
        if found := _digest(info / name, RECORD_LIMIT):
            return found
    return ""


def _absolute(value: object) -> str:
    return str(Path(str(value)).resolve()) if isinstance(value, Path) else str(value)
