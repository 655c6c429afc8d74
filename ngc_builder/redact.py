"""What reaches a terminal, a log, a label, a record or a report carries no credential and no
control character.

Credentials never leave the machine they were given on: the userinfo of every URL
(`https://gitlab-ci-token:TOKEN@host/...`, a mirror's `user:password@`) and of every
scheme-less `user:secret@host/...` (a docker reference or a `--registry` someone pasted a
token into) is stripped. Control characters never reach a terminal: an escape sequence in a
hostile reference could retitle it, move its cursor or forge a line of output, so each is
written as its escape (`\\x1b`, `\\r`).
"""

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

# Without a scheme the same userinfo is `user:secret@`: a run with no space, quote or '/' (as
# in a URL, userinfo holds no '/'), whose secret ends at the run's last '@' (or `%40`, as
# docker-py quotes a reference into the URL an engine error names). A user and a password
# make a secret: `git@host:path` (a user alone) and `name@example.com` hold none, and
# `host:port/path` has no '@' before its '/'.
_RUN = re.compile(r"[^\s/\"'<>`]+")
_AT = re.compile(r"@|%40", re.IGNORECASE)
# The user (empty in `:TOKEN@host`, as a token alone is given) starts the run or follows a
# separator (`--registry=robot:...`, `(robot:...`) and holds none; possessive, so a run of
# thousands of ':' is read once, not once per ':'.
_SEPARATORS = "@:(){}\\[\\],;=|"
_USER = re.compile(rf"(?:^|(?<=[{_SEPARATORS}]))[^{_SEPARATORS}]*+:")
# `name:tag@sha256:<hex>` is a reference with a tag and a digest, not a secret.
_DIGEST = re.compile(r"sha(?:256|384|512):")


def strip_userinfo(text: str) -> str:
    """`text` with the userinfo of every URL and every `user:secret@host` in it removed."""
    return _RUN.sub(_without_secret, _USERINFO.sub(r"\g<scheme>", text))


def _without_secret(match: re.Match[str]) -> str:
    run = match.group()
    end = _last_secret_end(run)
    if end is None:
        return run
    user = _USER.search(run, 0, end.start())
    return run if user is None else run[:user.start()] + run[end.end():]


def _last_secret_end(run: str) -> re.Match[str] | None:
    """The run's last '@' (or `%40`) that does not start a digest; only the last one is kept,
    so a run of a hundred thousand '@' holds one match at a time, not a list of them."""
    last = None
    for at in _AT.finditer(run):
        if not _DIGEST.match(run, at.end()):
            last = at
    return last


def escape_controls(text: str, keep: str = "") -> str:
    """`text` with every character that is not printable (control characters, line and
    paragraph separators, bidi overrides) but those in `keep` written as its escape."""
    if text.isprintable():  # the common case, at C speed
        return text
    return "".join(char if char.isprintable() or char in keep else repr(char)[1:-1]
                   for char in text)


def printable(text: str) -> str:
    """`text` as it may reach a terminal or a log: newlines and tabs kept, a CR kept only
    right before a newline (a line end: it moves the cursor to where the next line starts),
    every other control character escaped (ESC as `\\x1b`, a lone CR as `\\r`)."""
    lines = text.split("\n")
    ends = [line.endswith("\r") for line in lines[:-1]] + [False]  # the last: no newline
    return "\n".join(escape_controls(line[:-1] if end else line, "\t") + ("\r" if end else "")
                     for line, end in zip(lines, ends, strict=True))


def clean(text: str) -> str:
    """What a command may print of `text`: credentials stripped (while the raw characters
    still separate words), then control characters escaped."""
    return printable(strip_userinfo(text))


class RedactedStream(io.TextIOBase):
    """A text stream whose every line reaches `target` cleaned (`clean`): what a command
    prints goes through it (commands/guard.py), so no message, echoed input or log line
    carries a credential or a control character, whoever built the text. A partial line
    waits for its end (a URL split over two writes is still seen whole) or for a flush."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        cut = self.pending.rfind("\n") + 1
        if cut:
            self.target.write(clean(self.pending[:cut]))
            self.pending = self.pending[cut:]
        return len(text)

    def flush(self) -> None:
        if self.pending:  # a CR it ends with is followed by no newline: escaped
            self.target.write(clean(self.pending))
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
    """sys.stdout and sys.stderr through RedactedStream while the block runs (once: the
    CLI's streams are cleaned already when a command's guard asks again)."""
    if isinstance(sys.stdout, RedactedStream) and isinstance(sys.stderr, RedactedStream):
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactedStream(saved[0]), RedactedStream(saved[1])
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = saved
