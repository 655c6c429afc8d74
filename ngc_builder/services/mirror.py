"""The Debian mirror of this host: builds and the cache use the user's own mirror."""

from __future__ import annotations

import re
from pathlib import Path

from ngc_builder.files import INPUT_LIMIT, read_text
from ngc_builder.services.environment import setting

APT_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))


def host_debian_mirror() -> str | None:
    """The mirror this host's apt uses: users behind a corporate mirror get theirs."""
    return _host_mirror("NGC_DEBIAN_MIRROR", security=False)


def host_security_mirror() -> str | None:
    """Where this host's apt gets Debian's security suites (`.../debian-security`)."""
    return _host_mirror("NGC_DEBIAN_SECURITY_MIRROR", security=True)


def _host_mirror(variable: str, security: bool) -> str | None:
    configured = setting(variable)
    if configured:
        return configured
    for path in APT_SOURCES:
        if path.exists():
            found = _first_mirror(read_text(path, INPUT_LIMIT, errors="replace"), security)
            if found:
                return found
    return None


def _first_mirror(text: str, security: bool = False) -> str | None:
    for pattern in (r"^URIs:\s*(\S+)", r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)"):
        for match in re.finditer(pattern, text, re.MULTILINE):
            if ("security" in match.group(1)) == security:
                return match.group(1).rstrip("/")
    return None
