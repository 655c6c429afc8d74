"""The Debian mirror of this host: builds and the cache use the user's own mirror."""

from __future__ import annotations

import re
from pathlib import Path

from ngc_builder.files import INPUT_LIMIT, read_text
from ngc_builder.services.environment import setting

APT_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))


def host_debian_mirror() -> str | None:
    """The mirror this host's apt uses: users behind a corporate mirror get theirs."""
    configured = setting("NGC_DEBIAN_MIRROR")
    if configured:
        return configured
    for path in APT_SOURCES:
        if path.exists():
            found = _first_mirror(read_text(path, INPUT_LIMIT, errors="replace"))
            if found:
                return found
    return None


def _first_mirror(text: str) -> str | None:
    for pattern in (r"^URIs:\s*(\S+)", r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)"):
        for match in re.finditer(pattern, text, re.MULTILINE):
            if "security" not in match.group(1):
                return match.group(1).rstrip("/")
    return None
