"""Files the builder writes for people and later runs (records, archive, reports): a reader
sees the old file or the new one, never half of one, even when two runs write at once or the
machine stops mid-write; and no credential is in them."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from ngc_builder.redact import strip_userinfo


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


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
