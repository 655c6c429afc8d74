"""Typed input data: the release manifest, OS bases and framework definitions.

Every string that ends up in a Dockerfile or a build context is checked here against a
narrow pattern, so no manifest value can carry shell syntax into a `RUN` line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ngc_builder.manifest.platforms import DEFAULT_PLATFORMS, Platform, check_platforms
from ngc_builder.manifest.sizes import parse_size
from ngc_builder.manifest.specifiers import track_specifier
from ngc_builder.runner.expect import DEFAULT_GPU_TARGETS
from ngc_builder.services.reference import NAME_RE, reference_problem, registry_problem

DEBIAN_PACKAGE_RE = re.compile(r"[a-z0-9][a-z0-9+.-]{1,80}")
PACKAGE_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,126}[A-Za-z0-9])?")
# Linear time: the numeric part is atomic and each tail step takes exactly one character
# after an optional separator (the former `([.+_-]?[A-Za-z0-9]+)*` backtracked exponentially
# on a near miss: 35 characters took 28 s). Same language; tests/unit/manifest/test_models.py.
VERSION_RE = re.compile(r"(?>[0-9]+(?:\.[0-9]+)*)(?:[.+_-]?[A-Za-z0-9])*")
MAX_VALUE = 512  # characters of any one patterned value: no field needs more
MAJOR_MINOR_RE = re.compile(r"[0-9]+\.[0-9]+")
RELEASE_RE = re.compile(r"[0-9]{2}\.(0[1-9]|1[0-2])")  # a monthly release: YY.MM
# What names a published release (its tags, record and archive folder): a monthly release or a
# patch release of one between months (`26.12.1`, docs/security.md).
RELEASE_ID_RE = re.compile(r"[0-9]{2}\.(0[1-9]|1[0-2])(\.[1-9][0-9]?)?")
IMAGE_REF_RE = re.compile(r"[a-z0-9][a-z0-9._/:-]*(:[A-Za-z0-9._-]+)?(@sha256:[0-9a-f]{64})?")
URL_RE = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+")
REASON_RE = re.compile(r"[^\x00-\x1f\x7f]{1,400}")  # one line, no terminal escapes
REQUIREMENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\[\],=<>!~*{}-]*")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
TITLE_RE = re.compile(r"[A-Za-z0-9 ._()+/-]{1,80}")


def _pattern(kind: str, pattern: re.Pattern[str], hint: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if len(value) > MAX_VALUE:
            raise ValueError(f"a {kind} of {len(value)} characters (the limit is {MAX_VALUE})")
        if not pattern.fullmatch(value):
            raise ValueError(f"{value!r} is not a valid {kind} ({hint})")
        return value

    return check


def _parses(parser: Callable[[str], object], error: type[Exception],
            what: str) -> Callable[[str], str]:
    """A validator that accepts what `parser` accepts, naming `what` was expected."""

    def check(value: str) -> str:
        try:
            parser(value)
        except error:
            raise ValueError(f"{value!r} is not {what}") from None
        return value

    return check


_pep440 = _parses(Version, InvalidVersion, "a PEP 440 version")
_specifier = _parses(SpecifierSet, InvalidSpecifier, "a version range like '>=3.12'")


def _requirement_template(value: str) -> str:
    if "{version}" not in value and "==" not in value:
        raise ValueError(f"{value!r} must pin a version: use '{{version}}' or '=='")
    try:
        parsed = Requirement(value.replace("{version}", "0"))
    except InvalidRequirement as exc:
        raise ValueError(f"{value!r} is not a pip requirement: {exc}") from None
    if parsed.url or parsed.marker:
        raise ValueError(f"{value!r}: URLs and markers are not allowed")
    return value


Name = Annotated[str, AfterValidator(_pattern("name", NAME_RE, "lower-case a-z 0-9 . _ -"))]
PackageName = Annotated[
    str, AfterValidator(_pattern("package name", PACKAGE_RE, "letters, digits, . _ -"))
]
PinnedVersion = Annotated[
    str,
    AfterValidator(_pattern("version", VERSION_RE, "digits and dots, like 2.15.0")),
    AfterValidator(_pep440),
]
MajorMinor = Annotated[
    str, AfterValidator(_pattern("major.minor version", MAJOR_MINOR_RE, "like 2.41"))
]
ReleaseId = Annotated[str, AfterValidator(_pattern("release id", RELEASE_RE, "YY.MM"))]
def _registry(value: str) -> str:
    problem = registry_problem(value)
    if problem:
        raise ValueError(problem)
    return value


Registry = Annotated[str, AfterValidator(_registry)]
# The OS image is tagged with it (`ngc-local/os-<name>:<os_version>`): Docker's tag grammar.
OsVersion = Annotated[str, AfterValidator(_pattern(
    "OS version", re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"),
    "it becomes an image tag: letters, digits, . _ -, like 13 or 13.2"))]
def _reference(value: str) -> str:
    problem = reference_problem(value)
    if problem:
        raise ValueError(f"{value!r}: {problem}")
    return value


ImageRef = Annotated[str, AfterValidator(_pattern("image reference", IMAGE_REF_RE, "name:tag")),
                     AfterValidator(_reference)]
Url = Annotated[str, AfterValidator(_pattern("URL", URL_RE, "http(s)://..."))]
Identifier = Annotated[str, AfterValidator(_pattern("module name", IDENT_RE, "like jax"))]
DebianPackage = Annotated[
    str, AfterValidator(_pattern("Debian package name", DEBIAN_PACKAGE_RE, "like g++"))
]
Reason = Annotated[str, AfterValidator(_pattern("reason", REASON_RE, "one line, <=400 chars"))]
Title = Annotated[str, AfterValidator(_pattern("title", TITLE_RE, "plain words"))]
PythonRange = Annotated[str, AfterValidator(_specifier)]
RequirementTemplate = Annotated[
    str,
    AfterValidator(_pattern("requirement", REQUIREMENT_RE, "like jax[cuda13]=={version}")),
    AfterValidator(_requirement_template),
]
LibraryName = Literal["cudart", "cublas", "cudnn", "nccl"]
# Researcher tools an image may carry (each is also its pip distribution's name); the runner
# starts each one's server inside the image to check it.
ToolName = Literal["jupyterlab", "tensorboard"]
# NVIDIA's libraries from PyPI that NGC's images carry beside the framework (each also its pip
# distribution's name): the runner checks each one an image carries (runner/addons.py). Those
# PyPI has no fitting wheel for are listed, with the evidence, in docs/addons.md.
AddonName = Literal["nvtx", "nvidia-nvimgcodec-cu13", "nvidia-cudnn-frontend"]
ComputeCapability = Annotated[
    str, AfterValidator(_pattern("compute capability", re.compile(r"[0-9]{1,2}\.[0-9]"),
                                 "like 9.0"))
]
TagName = Annotated[
    str, AfterValidator(_pattern("tag", re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"),
                                 "like latest"))
]


# `latest`, `2.15.*`, `~=2.15`, `>=2.15,<2.17`: which versions the monthly bump may move to.
Track = Annotated[str, AfterValidator(_pattern("track", re.compile(r"[A-Za-z0-9.*=<>!~, ]+"),
                                               "like latest, 2.15.* or ~=2.15")),
                  AfterValidator(_parses(track_specifier, InvalidSpecifier,
                                         "'latest' or a version range like '2.15.*'"))]


SizeText = Annotated[str, AfterValidator(_parses(parse_size, ValueError, "a size like '6.3 GB'"))]


class Strict(BaseModel):
    """Unknown keys are errors: a typo in a release file must never be ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class CudaStack(Strict):
    cuda: PinnedVersion
    base: Name | None = None
    wheels: dict[PackageName, PinnedVersion] = Field(min_length=1)
    libraries: dict[LibraryName, PackageName] = Field(default_factory=dict)
    # Compiler and header wheels only the -devel images on this stack install (nvcc, crt,
    # nvvm, cccl), at this stack's CUDA version: those the runtime already has stay in `wheels`.
    devel_wheels: dict[PackageName, PinnedVersion] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _libraries_come_from_wheels(self) -> CudaStack:
        missing = sorted(set(self.libraries.values()) - set(self.wheels))
        if missing:
            raise ValueError(f"libraries name wheels that are not in wheels: {missing}")
        repeated = sorted(set(self.devel_wheels) & set(self.wheels))
        if repeated:
            raise ValueError(f"devel_wheels repeat wheels (one copy of CUDA): {repeated}")
        return self

    @property
    def cuda_major(self) -> int:
        return Version(self.cuda).major


class ImageEntry(Strict):
    framework: Name
    version: PinnedVersion
    stack: Name | None = None
    base: Name | None = None
    name: Name | None = None
    variant: Name = "default"
    extra_packages: dict[PackageName, PinnedVersion] = Field(default_factory=dict)
    # JupyterLab / TensorBoard at these versions, in the image's own tags (no second tag):
    # only tools the framework offers (its framework.yaml `tools`).
    tools: dict[ToolName, PinnedVersion] = Field(default_factory=dict)
    # NVIDIA's add-ons at these versions (only those the framework offers: framework.yaml
    # `addons`), each checked by the image's probes and listed in the notes and the catalog.
    addons: dict[AddonName, PinnedVersion] = Field(default_factory=dict)
    # What NGC's image carries that this one cannot, and why (the evidence, one line each):
    # the notes and the catalog say so, as an expected failure does for a whole row.
    unavailable_addons: dict[PackageName, Reason] = Field(default_factory=dict)
    # A row that is known not to build or validate here, and why: it is still attempted every
    # release (its evidence goes to the support matrix) but does not fail the run; if it ever
    # passes, the run fails so that the manifest is corrected.
    expect_failure: Reason | None = None
    # Narrower GPU targets for an image whose wheel predates the release's (say why in YAML).
    gpu_targets: list[ComputeCapability] | None = Field(default=None, min_length=1)
    # The image fails if it grows past 1.2 x this ("6.3 GB", "900 MiB").
    size_baseline: SizeText | None = None
    # Which framework versions the monthly bump may choose (ngc_builder/bump/track.py);
    # left out: the newest (`latest`).
    track: Track | None = None
    # One tag, an index of these platforms (manifest/platforms.py); `optional_platforms` may
    # be missing from it when their build or validation fails (an experiment: the release says).
    platforms: list[Platform] = Field(default_factory=lambda: list(DEFAULT_PLATFORMS))
    optional_platforms: list[Platform] = Field(default_factory=list)
    # Also ship <name>-devel: this image plus the stack's nvcc and headers, g++ and ninja, for
    # building CUDA extensions (manifest/devel.py; docs/researchers.md).
    devel: bool = False
    # Also publish, per platform, a SquashFS of the image's root filesystem beside it, signed,
    # for nodes that start it with `ch-run` from one file (docs/squashfs.md); its -devel too.
    squashfs: bool = False

    @model_validator(mode="after")
    def _platforms_agree(self) -> ImageEntry:
        check_platforms(self.platforms, self.optional_platforms)
        return self

    @property
    def image_name(self) -> str:
        return self.name or self.framework


class Release(Strict):
    release: ReleaseId
    registry: Registry
    base: Name
    source: Url | None = None
    cuda_stacks: dict[Name, CudaStack] = Field(min_length=1)
    images: list[ImageEntry] = Field(min_length=1)
    # A patch release of `release` between months (docs/security.md): its images are the
    # monthly release's, rendered as they were, published under `<release>.<patch>-py3`.
    patch: int | None = Field(default=None, ge=1, le=99)
    # Moving tags (e.g. latest) set on every image after its release tag; they may move.
    aliases: list[TagName] = Field(default_factory=list)
    # Compute capabilities whose SASS every GPU image must carry (T0 cuda.archs).
    gpu_targets: list[ComputeCapability] = Field(default=list(DEFAULT_GPU_TARGETS), min_length=1)

    @property
    def release_id(self) -> str:
        """What the published release is called: `26.12`, or `26.12.1` for a patch."""
        return self.release if self.patch is None else f"{self.release}.{self.patch}"

    def targets_of(self, entry: ImageEntry) -> list[str]:
        return list(entry.gpu_targets or self.gpu_targets)


class Bootstrap(Strict):
    suite: Name
    variant: Literal["minbase", "buildd"] = "minbase"
    mirror: Url | None = None


class BaseImage(Strict):
    name: Name
    os: Name
    os_version: OsVersion
    python: MajorMinor
    glibc: MajorMinor
    pull: ImageRef | None = None
    bootstrap: Bootstrap | None = None
    apt_packages: list[DebianPackage] = Field(min_length=1)
    # What every CUDA stack on this OS adds: the multi-node userspace (rdma-core's libibverbs,
    # providers and librdmacm, UCX, OpenMPI). NCCL dlopens libibverbs at run time and falls back
    # to TCP sockets, silently, without it; package names differ between Debian suites.
    cuda_apt_packages: list[DebianPackage] = Field(default_factory=list)
    # What a -devel image adds for building CUDA extensions: the host compiler and ninja.
    devel_apt_packages: list[DebianPackage] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_a_source(self) -> BaseImage:
        if self.pull is None and self.bootstrap is None:
            raise ValueError("give 'pull', 'bootstrap' or both")
        return self
