"""Track rules: which framework version a release row moves to.

A row's `track:` (`latest`, `2.15.*`, `~=2.15`) narrows the versions the index holds for the
image's Python and platform. Newest first, a version is taken when its wheels admit the base's
Python and every CUDA library it asks for is a wheel of the row's stack's CUDA major (a cu13
stack never takes a version built for `nvidia-*-cu12`). Each newer version turned down keeps
its reason, so the engineer reads why a row was held, not just that it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ngc_builder.bump.available import VersionIndex
from ngc_builder.errors import StepError
from ngc_builder.manifest.framework import Framework
from ngc_builder.manifest.models import CudaStack, ImageEntry
from ngc_builder.manifest.specifiers import track_specifier
from ngc_builder.manifest.stacks import Need, is_cuda_library, python_ok, walk
from ngc_builder.manifest.wheels import Fetcher, Target

# `nvidia-cudnn-cu13`: the CUDA major is in the name.
_SUFFIX = re.compile(r"-cu(?P<major>[0-9]+)$")
# Unsuffixed wheels whose own major is the CUDA major (cuda-toolkit 13.2.2, nvidia-cublas 13.4,
# nvidia-cuda-runtime 13.2): cuFFT, cuSOLVER... number themselves, so they say nothing.
_CUDA_NUMBERED = ("cuda-toolkit", "nvidia-cuda-", "nvidia-cublas", "nvidia-nvjitlink",
                  "nvidia-nvvm", "nvidia-nvtx")
_LOWER_BOUNDS = ("==", "===", "~=", ">=", ">")


@dataclass(frozen=True)
class Row:
    """One release row as the bump sees it: where its wheels go and what they must fit."""

    image: ImageEntry
    framework: Framework
    target: Target
    stack_name: str | None
    stack: CudaStack | None

    @property
    def version_lines(self) -> list[str]:
        """The requirement templates that carry the framework's version (`torch=={version}`;
        jax has two: jax[cuda13] and jaxlib)."""
        return [t for t in self.framework.requirements[self.image.variant] if "{version}" in t]

    @property
    def distributions(self) -> list[str]:
        return [Requirement(t.replace("{version}", "0")).name for t in self.version_lines]

    def who(self, version: str) -> str:
        """How reasons name this row at `version`: `torch 2.16.0`."""
        return f"{self.distributions[0]} {version}"


@dataclass(frozen=True)
class Candidate:
    """A version examined: its CUDA needs, and why it is turned down (None: it may be taken)."""

    version: str
    needs: tuple[Need, ...]
    reason: str | None = None


@dataclass(frozen=True)
class TrackChoice:
    current: str
    # Acceptable versions, newest first; the first is the choice, the rest are where the
    # hold-back steps to. Never empty: the current version is the last resort.
    candidates: tuple[Candidate, ...]
    rejected: tuple[Candidate, ...]  # turned down, newest first

    def reasons_above(self, version: str) -> list[str]:
        """Why each version newer than `version` was turned down."""
        return [c.reason for c in self.rejected
                if c.reason is not None and Version(c.version) > Version(version)]


def admitted(track: str | None, version: str) -> bool:
    specifier = track_specifier(track or "latest")
    return specifier is None or specifier.contains(version, prereleases=False)


def available(row: Row, index: VersionIndex) -> list[str]:
    """Versions every version-carrying distribution holds (jax and jaxlib alike), newest first."""
    found: list[str] | None = None
    for name in row.distributions:
        listed = index(name, row.target)
        held = set(listed)
        found = listed if found is None else [v for v in found if v in held]
    return found or []


def on_track(row: Row, index: VersionIndex) -> list[str]:
    """The versions the row may move to, newest first. Older than the current one only when the
    track has moved away from it (a new `2.14.*` on a 2.15 row is a deliberate step down)."""
    current = Version(row.image.version)
    keeps_current = admitted(row.image.track, row.image.version)
    return [v for v in available(row, index) if admitted(row.image.track, v)
            and (not keeps_current or Version(v) >= current)]


def choose(row: Row, index: VersionIndex, fetch: Fetcher) -> TrackChoice:
    examined = [examine(row, version, fetch) for version in on_track(row, index)]
    accepted = [c for c in examined if c.reason is None]
    rejected = [c for c in examined if c.reason is not None]
    if not accepted:
        # Nothing on the track fits: the row stays where it is, needs and all (the stack
        # check at build time still judges it).
        mine = next((c for c in examined if c.version == row.image.version), None)
        current = mine or examine(row, row.image.version, fetch)
        accepted = [Candidate(current.version, current.needs)]
    return TrackChoice(row.image.version, tuple(accepted), tuple(rejected))


def examine(row: Row, version: str, fetch: Fetcher) -> Candidate:
    needs: list[Need] = []
    for template in row.version_lines:
        line = template.replace("{version}", version)
        requirement = Requirement(line)
        try:
            meta = fetch(f"{requirement.name}=={version}", row.target)
            # The framework's own pins are followed, never the stack's: the stack is what may move.
            needs += walk(requirement, meta, None, row.target, fetch, line, 0)
        except StepError as exc:
            return Candidate(version, (), f"{version}: {exc.message}")
        if not python_ok(meta, row.target.python):
            return Candidate(version, (), f"{version} needs Python {meta.requires_python}, "
                                          f"base has {row.target.python}")
        if is_cuda_library(requirement.name):
            needs.append(Need(requirement, line))
    reason = _wrong_cuda(row, version, needs)
    return Candidate(version, tuple(needs), reason)


def _wrong_cuda(row: Row, version: str, needs: list[Need]) -> str | None:
    if not needs:
        return None
    if row.stack is None:
        names = ", ".join(sorted({canonicalize_name(n.requirement.name) for n in needs}))
        return f"{version} needs CUDA libraries ({names}), the image has no CUDA stack"
    for need in needs:
        major = cuda_major_of(need.requirement)
        if major is not None and major != row.stack.cuda_major:
            return (f"{version} needs {need.requirement.name}{need.requirement.specifier} "
                    f"(CUDA {major}), stack {row.stack_name} is CUDA {row.stack.cuda_major}")
    return None


def cuda_major_of(requirement: Requirement) -> int | None:
    """The CUDA major a CUDA-library requirement is built for, where its name or version says."""
    name = canonicalize_name(requirement.name)
    if match := _SUFFIX.search(name):
        return int(match["major"])
    if not name.startswith(_CUDA_NUMBERED):
        return None
    for spec in requirement.specifier:
        if spec.operator in _LOWER_BOUNDS:
            return Version(spec.version.removesuffix(".*")).major
    return None
