"""The oldest NVIDIA driver an image's CUDA runtime works with.

From NVIDIA's published table for CUDA minor version compatibility (CUDA Compatibility guide,
"CUDA Toolkit 11.x, 12.x and 13.x Driver Version Ranges", and the CUDA Toolkit release notes
for the exact Linux x86_64 versions): a runtime of one major release runs, with the limited
feature set of minor version compatibility, on any driver from this version on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import Version

if TYPE_CHECKING:
    from ngc_builder.manifest.load import LoadedRelease

MIN_LINUX_DRIVER = {
    13: "580",
    12: "525.60.13",
    11: "450.80.02",
}


def minimum_driver(cuda: str) -> str | None:
    """'13.2' -> '580'; None for a CUDA major release the table does not cover."""
    return MIN_LINUX_DRIVER.get(Version(cuda).major)


def require_cuda(cuda: str) -> str:
    """NVIDIA_REQUIRE_CUDA for a CUDA runtime: 'cuda>=13.2 driver>=580'.

    libnvidia-container reads space-separated constraints as alternatives: a driver that
    reports this CUDA version or newer, or one of the branch this table accepts (minor version
    compatibility: a 580 driver reports CUDA 13.0 yet runs a 13.2 runtime). The runtime
    refuses to start the container on any other driver, instead of CUDA failing inside it.
    """
    driver = minimum_driver(cuda)
    return f"cuda>={cuda}" + (f" driver>={driver}" if driver else "")


def strictest_driver(loaded: LoadedRelease) -> str | None:
    """The newest of the release's CUDA stacks' minimum drivers: what a host must have."""
    found = [minimum_driver(stack.cuda) for stack in loaded.release.cuda_stacks.values()]
    versions = [version for version in found if version is not None]
    return max(versions, key=Version) if versions else None
