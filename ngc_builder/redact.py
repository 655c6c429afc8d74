"""Credentials never leave the machine they were given on: the userinfo of every URL
(`https://gitlab-ci-token:TOKEN@host/...`, a mirror's `user:password@`) is stripped from what
reaches a label, a record, a report, a log or an error message."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import TextIO

# scheme://userinfo@ — userinfo is everything up to the last '@' before the authority ends
# (a password may hold a raw '@' or ':', and percent-escapes): every '@'-ended run without a
# '/', a space or a quote is taken, so no tail of a password is left behind.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?:[^/\s@\"'<>]*@)+")


def strip_userinfo(text: str) -> str:
    """`text` with the userinfo of every URL in it removed."""
    return _USERINFO.sub(r"\g<scheme>", text)


class RedactedStream(io.TextIOBase):
    """A text stream whose every line reaches `target` with its URLs' userinfo stripped: what
    a command prints goes through it (commands/guard.py), so no message, echoed input or log
    line carries a credential, whoever built the text. A partial line waits for its end (a
    URL split over two writes is still seen whole) or for a flush or a carriage return."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        cut = max(self.pending.rfind("\n"), self.pending.rfind("\r")) + 1
        if cut:
            self.target.write(strip_userinfo(self.pending[:cut]))
            self.pending = self.pending[cut:]
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.target.write(strip_userinfo(self.pending))
            self.pending = ""
        self.target.flush()

    def fileno(self) -> int:
        return self.target.fileno()

    def isatty(self) -> bool:
        return self.target.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", "utf-8")


@contextlib.contextmanager
def redacted_output() -> Iterator[None]:
    """sys.stdout and sys.stderr through RedactedStream while the block runs."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactedStream(saved[0]), RedactedStream(saved[1])
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = saved
