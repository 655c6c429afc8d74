"""Credentials never leave the machine they were given on: the userinfo of every URL
(`https://gitlab-ci-token:TOKEN@host/...`, a mirror's `user:password@`) is stripped from what
reaches a label, a record, a report, a log or an error message."""

from __future__ import annotations

import re

# scheme://userinfo@ — userinfo is everything up to the last '@' before the host ends.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"'<>]*@")


def strip_userinfo(text: str) -> str:
    """`text` with the userinfo of every URL in it removed."""
    return _USERINFO.sub(r"\g<scheme>", text)
