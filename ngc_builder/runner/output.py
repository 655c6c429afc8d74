"""What a check printed, and the known failure texts that fail it even when it "passed".

Frameworks often report a broken GPU setup only as a warning and carry on (slowly, or on the
CPU): PyTorch warns that the GPU "is not compatible with the current PyTorch installation",
TensorFlow logs a cuDNN mismatch, NCCL prints ``NCCL WARN``. Each check's output (file
descriptors 1 and 2, so C libraries and worker processes too) is captured, passed on to stderr
for the log, and searched for these texts.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import re
import sys
import tempfile
from collections.abc import Iterator

KNOWN_FAILURE_TEXTS = tuple(re.compile(pattern, re.IGNORECASE) for pattern in (
    r"no kernel image is available for execution on the device",
    r"NCCL WARN",
    r"cuDNN version incompatibility",
    r"Loaded runtime CuDNN library: .* but source was compiled with",
    r"CUDA driver version is insufficient for CUDA runtime version",
    r"CUBLAS_STATUS_ARCH_MISMATCH",
    r"PTX was compiled with an unsupported toolchain",
    r"is not compatible with the current PyTorch installation",
))
_KEEP = 4000


def known_failures(text: str) -> list[str]:
    """The lines of ``text`` that hold a known failure text, in order, each once."""
    lines = (line.strip() for line in text.splitlines())
    found = [line for line in lines if any(p.search(line) for p in KNOWN_FAILURE_TEXTS)]
    return list(dict.fromkeys(found))


@contextlib.contextmanager
def captured() -> Iterator[list[str]]:
    """Send fds 1 and 2 to a scratch file meanwhile; the yielded list receives the text."""
    holder: list[str] = []
    _flush()
    saved = [os.dup(1), os.dup(2)]
    crash_dumps = faulthandler.is_enabled()
    with tempfile.TemporaryFile() as scratch:
        os.dup2(scratch.fileno(), 1)
        os.dup2(scratch.fileno(), 2)
        if crash_dumps:  # a crash ends the process before we restore: dump to the real stderr
            faulthandler.enable(file=saved[1])
        try:
            yield holder
        finally:
            _flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            if crash_dumps:
                faulthandler.enable(file=2)
            for fd in saved:
                os.close(fd)
            scratch.seek(0)
            text = scratch.read().decode("utf-8", "replace")
            sys.stderr.write(text)  # the log still gets everything
            sys.stderr.flush()
            holder.append(text)


def tail(text: str) -> str:
    return text if len(text) <= _KEEP else "...[cut] " + text[-_KEEP:]


def _flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)
