"""Tar archives made in memory for tests that read one as hostile input (a container's export,
what a build container hands back)."""

from __future__ import annotations

import io
import tarfile


def archive(*entries: tuple[str, bytes | None, str]) -> io.BytesIO:
    """(name, content or None for a folder, link target or ""); files owned by uid 1000."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, content, link in entries:
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size, info.uid, info.mtime = len(content), 1000, 123456789
                tar.addfile(info, io.BytesIO(content))
    buffer.seek(0)
    return buffer
