"""The platforms an image ships for: one tag, an OCI index of one manifest per platform.

linux/amd64 is the build host's own platform and every image ships it (the lock's top level
is its closure); linux/arm64 (Grace) is built on the same host, its packages unpacked
host-side and only what must run arm64 code emulated (docs/multiarch.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

Platform = Literal["linux/amd64", "linux/arm64"]
HOST_PLATFORM: Platform = "linux/amd64"
OtherPlatform = Literal["linux/arm64"]  # what a lock's `platforms` may name
DEFAULT_PLATFORMS: tuple[Platform, ...] = (HOST_PLATFORM,)
# What pip's wheel tags and Debian's archive call each platform's machine.
MACHINES: dict[str, str] = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}
DEB_ARCHES: dict[str, str] = {"linux/amd64": "amd64", "linux/arm64": "arm64"}
# A layer's Debian package, on every platform or, in Debian's own architecture restriction
# syntax (as in Build-Depends), only on some: "libquadmath0 [amd64]" (GCC has no quad-precision
# library on arm64, and torch's aarch64 wheel does not ask for one).
LAYER_PACKAGE_RE = re.compile(r"(?P<name>[a-z0-9][a-z0-9+.-]{1,80})"
                              r"(?: \[(?P<arches>[a-z0-9]{1,16}(?: [a-z0-9]{1,16}){0,7})\])?")


def check_platforms(platforms: list[Platform], optional: list[Platform]) -> None:
    """ValueError unless `platforms` lists the host's platform once and `optional` only
    others of `platforms`."""
    if len(set(platforms)) != len(platforms):
        raise ValueError(f"platforms lists a platform twice: {platforms}")
    if HOST_PLATFORM not in platforms:
        raise ValueError(f"platforms must include {HOST_PLATFORM}: every image ships the build "
                         "host's platform")
    strangers = sorted(set(optional) - set(platforms))
    if strangers:
        raise ValueError(f"optional_platforms names platforms the image does not list: "
                         f"{strangers}")
    if HOST_PLATFORM in optional:
        raise ValueError(f"{HOST_PLATFORM} cannot be optional: it is what every image ships")


def others(platforms: Iterable[str]) -> list[str]:
    """The platforms beyond the host's, in a stable order."""
    return sorted(set(platforms) - {HOST_PLATFORM})


def layer_package(value: str) -> str:
    """`value` if it is a Debian package name with an optional restriction to known
    architectures, else ValueError."""
    match = LAYER_PACKAGE_RE.fullmatch(value)
    if match is None:
        raise ValueError(f"{value[:120]!r} is not a valid Debian package (like g++, or "
                         "libquadmath0 [amd64] for some architectures only)")
    unknown = sorted(set((match["arches"] or "").split()) - set(DEB_ARCHES.values()))
    if unknown:
        raise ValueError(f"{value!r} names architectures no platform has: {unknown} (known: "
                         f"{sorted(DEB_ARCHES.values())})")
    return value


def packages_for(requests: Iterable[str], platform: str) -> list[str]:
    """The names of the Debian packages of `requests` that `platform` installs."""
    arch = DEB_ARCHES[platform]
    found = [LAYER_PACKAGE_RE.fullmatch(request) for request in requests]
    return [match["name"] for match in found
            if match is not None and (not match["arches"] or arch in match["arches"].split())]
