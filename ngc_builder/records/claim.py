"""One run per build dir and release: the record is read at a run's start and rewritten after
every step, so two runs at once would undo each other's steps.

The claim is `flock` on `<build>/<YY.MM>/.claim` (not the package lock, `lock/`): the kernel
drops it when its holder dies, so a crashed run never blocks the next one; the file names the
holder (PID, start time) for whoever finds it taken.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from ngc_builder.clock import now
from ngc_builder.errors import InputError, Problem

CLAIM_NAME = ".claim"


@contextlib.contextmanager
def claim_release_dir(release_dir: Path, say: Callable[[str], None]) -> Iterator[None]:
    """Hold the release dir's claim for the block; InputError (exit 2) naming the holder when
    another run has it. `say` hears of a claim taken over from a run that died."""
    release_dir.mkdir(parents=True, exist_ok=True)
    path = release_dir / CLAIM_NAME
    with path.open("a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError([Problem(str(path), 1, "(claim)", (
                f"{release_dir} is in use by {_holder(handle) or 'another run'}: wait for it "
                "to finish or stop it"))]) from None
        previous = _holder(handle)
        if previous:
            say(f"took over the claim of {previous}, which ended without releasing it")
        _write(handle, f"ngc-builder PID {os.getpid()} since {now()}")
        try:
            yield
        finally:
            _write(handle, "")  # a clean end leaves nothing to take over


def _holder(handle: TextIO) -> str:
    handle.seek(0)
    return str(handle.read()).strip()


def _write(handle: TextIO, text: str) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(text)
    handle.flush()
