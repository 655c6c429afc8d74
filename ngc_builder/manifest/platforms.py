"""The platforms an image ships for: one tag, an OCI index of one manifest per platform.

linux/amd64 is the build host's own platform and every image ships it (the lock's top level
is its closure); linux/arm64 (Grace) is built on the same host, its packages unpacked
host-side and only what must run arm64 code emulated (docs/multiarch.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Platform = Literal["linux/amd64", "linux/arm64"]
HOST_PLATFORM: Platform = "linux/amd64"
OtherPlatform = Literal["linux/arm64"]  # what a lock's `platforms` may name
DEFAULT_PLATFORMS: tuple[Platform, ...] = (HOST_PLATFORM,)
# What pip's wheel tags and Debian's archive call each platform's machine.
MACHINES: dict[str, str] = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}
DEB_ARCHES: dict[str, str] = {"linux/amd64": "amd64", "linux/arm64": "arm64"}


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
