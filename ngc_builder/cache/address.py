"""Where builds find the package cache. Dockerfiles name it `ngc-cache`, a host name that
exists only inside builds (the engine maps it to the address the cache listens on), so no
address of the build host is written into an image or its history."""

from __future__ import annotations

from ngc_builder.services.environment import setting_int

BUILD_HOST_NAME = "ngc-cache"
DEFAULT_PORT = 3149


def cache_port() -> int:
    """$NGC_CACHE_PORT, else 3149 (next to devpi's 3141 and apt-cacher-ng's 3142)."""
    return setting_int("NGC_CACHE_PORT", DEFAULT_PORT)


def build_url() -> str:
    """The cache as a build sees it."""
    return f"http://{BUILD_HOST_NAME}:{cache_port()}/"
