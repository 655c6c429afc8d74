"""Real-format .deb files for unit tests: an `ar` archive holding debian-binary, a
control.tar.* with the given control text, and an empty data.tar."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path


def ar_member(name: str, data: bytes) -> bytes:
    header = (f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(data):<10}".encode("ascii")
              + b"`\n")
    return header + data + (b"\n" if len(data) % 2 else b"")


def tar_of(files: dict[str, bytes], compression: str = "xz") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as tar:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def write_deb(path: Path, control: str, compression: str = "xz",
              extra: dict[str, bytes] | None = None) -> Path:
    """A .deb at `path`; `extra` files go into control.tar before `./control`."""
    suffix = f".{compression}" if compression else ""
    control_tar = tar_of({**(extra or {}), "./control": control.encode()}, compression)
    path.write_bytes(b"!<arch>\n" + ar_member("debian-binary", b"2.0\n")
                     + ar_member(f"control.tar{suffix}", control_tar)
                     + ar_member("data.tar", tar_of({}, "")))
    return path
