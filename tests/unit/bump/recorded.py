"""Recorded wheel metadata and index listings for bump tests: no index is reached.

The 26.11 wheels are as their real METADATA declares them (trimmed to what the stack check
reads); the newer versions are made up in the same shape, one story per test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ngc_builder.errors import StepError
from ngc_builder.manifest.wheels import Target, WheelMetadata

LINUX = '; sys_platform == "linux"'


def torch(version: str, toolkit: str, cudnn: str, python: str = ">=3.11") -> WheelMetadata:
    return WheelMetadata("torch", version, python, (
        "filelock",
        f'cuda-toolkit[cublas,cudart]=={toolkit}; platform_system == "Linux"',
        f'{cudnn}; platform_system == "Linux"',
        'optree>=0.13.0; extra == "optree"',
    ))


def toolkit(version: str, cublas: str, runtime: str) -> WheelMetadata:
    return WheelMetadata("cuda-toolkit", version, "", (
        f"nvidia-cublas=={cublas}.*; sys_platform == 'linux' and extra == 'cublas'",
        f"nvidia-cuda-runtime=={runtime}.*; sys_platform == 'linux' and extra == 'cudart'",
        "nvidia-npp==13.1.0.59.*; sys_platform == 'linux' and extra == 'npp'",
    ))


def jax(version: str, python: str = ">=3.12") -> WheelMetadata:
    return WheelMetadata("jax", version, python, (
        f"jaxlib<={version},>={version}",
        f'jax-cuda13-plugin[with-cuda]<={version},>={version}; extra == "cuda13"',
    ))


def jaxlib(version: str, python: str = ">=3.12") -> WheelMetadata:
    return WheelMetadata("jaxlib", version, python, ("numpy>=2.2",))


def plugin(version: str, cudnn: str = "nvidia-cudnn-cu13<10.0,>=9.12.0.46",
           nvshmem: str = "nvidia-nvshmem-cu13>=3.3.20") -> WheelMetadata:
    with_cuda = ' and extra == "with-cuda"'
    return WheelMetadata("jax-cuda13-plugin", version, ">=3.12", (
        f"jax-cuda13-pjrt=={version}",
        f"nvidia-cublas>=13.0.0.19{LINUX}{with_cuda}",
        f"{cudnn}{LINUX}{with_cuda}",
        f"{nvshmem}{LINUX}{with_cuda}",
    ))


def plain(name: str, version: str) -> WheelMetadata:
    return WheelMetadata(name, version, "", ())


# The 26.11 release as it stands: torch 2.15.0 and jax 0.12.0 on the cu13 stack.
CURRENT = (
    torch("2.15.0", "13.2.2", "nvidia-cudnn-cu13==9.26.0.51"),
    toolkit("13.2.2", "13.4.1.3", "13.2.86"),
    jax("0.12.0"), jaxlib("0.12.0"), plugin("0.12.0"),
    plain("nvidia-cudnn-cu13", "9.26.0.51"), plain("nvidia-cuda-runtime", "13.2.86"),
    plain("nvidia-cublas", "13.4.1.3"), plain("nvidia-nvshmem-cu13", "3.7.2"),
)
# torch 2.16.0: CUDA 13.3 (cuda-toolkit 13.3.0) and cuDNN 9.28.0.40, both pinned exactly.
TORCH_216 = (
    torch("2.16.0", "13.3.0", "nvidia-cudnn-cu13==9.28.0.40"),
    toolkit("13.3.0", "13.5.0.1", "13.3.20"),
    plain("nvidia-cudnn-cu13", "9.28.0.40"), plain("nvidia-cuda-runtime", "13.3.20"),
    plain("nvidia-cublas", "13.5.0.1"),
)


@dataclass
class Recorded:
    """A fake index (versions per distribution) and fetcher (metadata per version) in one."""

    wheels: list[WheelMetadata] = field(default_factory=lambda: list(CURRENT))
    fetched: list[str] = field(default_factory=list)

    def add(self, *wheels: WheelMetadata) -> Recorded:
        self.wheels += wheels
        return self

    def index(self, name: str, target: Target) -> list[str]:
        versions = {Version(w.version) for w in self.wheels
                    if canonicalize_name(w.name) == canonicalize_name(name)}
        return [str(v) for v in sorted(versions, reverse=True)]

    def fetch(self, requirement: str, target: Target) -> WheelMetadata:
        """The newest recorded wheel the requirement admits, as pip would pick it."""
        self.fetched.append(requirement)
        wanted = Requirement(requirement)
        fitting = [w for w in self.wheels
                   if canonicalize_name(w.name) == canonicalize_name(wanted.name)
                   and wanted.specifier.contains(w.version, prereleases=True)]
        if not fitting:
            raise StepError("stack-check", f"wheel metadata of {requirement}",
                            "ERROR: No matching distribution found")
        return max(fitting, key=lambda w: Version(w.version))
