"""Small real filesystems for disk-full faults: a tmpfs of a given size mounted by the test
(root, as `make test` runs), and a filler that takes whatever space is left."""

from __future__ import annotations

import contextlib
import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

FILLER = "filler"


@contextlib.contextmanager
def small_fs(where: Path, size: str) -> Iterator[Path]:
    """`where`, a fresh tmpfs of `size` (like 64m), unmounted afterwards."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                   check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=False)


def fill(fs: Path) -> int:
    """Write to `fs` until it is full; the bytes written (`free` gives them back)."""
    written = 0
    block = b"\0" * (1 << 20)
    with (fs / FILLER).open("ab") as out:
        while True:
            try:
                out.write(block)
                out.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
            written += len(block)
    # Small writes may still fit in the last partial block: take those too.
    with contextlib.suppress(OSError), (fs / FILLER).open("ab", buffering=0) as out:
        while out.write(b"\0" * 512):
            written += 512
    return written


def free(fs: Path) -> None:
    (fs / FILLER).unlink(missing_ok=True)
