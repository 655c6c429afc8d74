"""The catalog's data: what a researcher reads about one release and each of its images.

Plain frozen dataclasses, made by `catalog.extract` from the archive (and the release record
when there is one) and rendered by `catalog.render`; nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TIERS: tuple[str, ...] = ("T0", "T1", "T2", "T3")
TIER_NAMES = {"T0": "static", "T1": "host preflight", "T2": "functional",
              "T3": "micro-benchmarks"}
# An image's state as the catalog shows it.
PUBLISHED, EXPECTED_FAILURE, NOT_PUBLISHED = "published", "expected failure", "not published"


@dataclass(frozen=True)
class Component:
    """One row of an image's components table: `CUDA` `13.2`."""

    name: str
    version: str


@dataclass(frozen=True)
class Check:
    """One validation check as the runner recorded it."""

    id: str
    tier: str
    status: str  # pass, fail, skip
    message: str
    evidence: str  # JSON, keys sorted, indented: shown as recorded
    gpu: str  # the GPU it ran on, or why none ("no GPU" for a run without one)
    fault: str | None = None


@dataclass(frozen=True)
class Tier:
    """A tier's verdict (`pass (8 skipped)`, `skip: no GPU`) and its checks."""

    tier: str
    verdict: str
    checks: tuple[Check, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.tier} {TIER_NAMES.get(self.tier, '')}".strip()


@dataclass(frozen=True)
class Validation:
    """An image's validation, or `missing` saying why the catalog has none."""

    verdict: str | None = None  # pass, fail, error
    gpu_mode: str | None = None
    gpus: str = ""  # the GPUs the run saw, by name
    summary: str = ""  # `21 pass, 0 fail, 14 skip`
    tiers: tuple[Tier, ...] = ()
    missing: str | None = None  # no validation at all, and why
    short: str = "not recorded"  # the index's word for a missing validation
    note: str | None = None  # what is missing from an otherwise recorded validation


@dataclass(frozen=True)
class Failure:
    """Why an image is not published: the manifest's reason, and the step that failed."""

    reason: str | None  # the manifest's expect_failure text (None: it was expected to pass)
    step: str | None = None  # build, validation, push
    error: str | None = None
    log: tuple[str, ...] = ()  # the log's error lines, then its last lines
    missing: str | None = None  # why there is no step evidence


@dataclass(frozen=True)
class PackageChange:
    kind: str  # pip, dpkg
    name: str
    before: str | None  # None: added
    after: str | None  # None: removed


@dataclass(frozen=True)
class PackageDiff:
    """The image's packages against the previous release's same image."""

    previous: str | None  # the previous release, None when there is none
    note: str  # one sentence for people: what was compared, or why nothing was
    changes: tuple[PackageChange, ...] = ()


@dataclass(frozen=True)
class Packages:
    pip: tuple[Component, ...] = ()
    dpkg: tuple[Component, ...] = ()


@dataclass(frozen=True)
class Image:
    """One image of the release: a catalog row and a page."""

    name: str
    kind: str  # base, cuda, framework
    state: str  # PUBLISHED, EXPECTED_FAILURE, NOT_PUBLISHED
    title: str
    framework: str  # "-" for base and CUDA layers
    framework_version: str
    python: str
    os: str
    cuda: str  # "-" without a CUDA stack
    min_driver: str
    gpu_targets: tuple[str, ...]
    repository: str  # registry/name
    digest: str | None  # sha256:<64 hex>, published images only
    tags: tuple[str, ...]
    components: tuple[Component, ...]
    labels: tuple[Component, ...]
    size_bytes: int | None
    validation: Validation
    packages: Packages | None
    diff: PackageDiff
    failure: Failure | None = None
    platforms: tuple[str, ...] = ("linux/amd64",)  # one tag, an index over these

    @property
    def page(self) -> str:
        return f"images/{self.name}.html"

    @property
    def pull(self) -> str | None:
        return f"docker pull {self.repository}@{self.digest}" if self.digest else None


@dataclass(frozen=True)
class Catalog:
    release: str
    registry: str
    revision: str | None
    previous: str | None  # the newest archived release before this one
    sources: tuple[str, ...]  # the files the catalog was made from, as given
    images: tuple[Image, ...] = field(default_factory=tuple)

    def options(self, attribute: str) -> tuple[str, ...]:
        """The values a filter offers: every value some image has, sorted."""
        values: set[str] = set()
        for image in self.images:
            value = getattr(image, attribute)
            values.update(value if isinstance(value, tuple) else (value,))
        return tuple(sorted(values - {"-", ""}, key=_natural))


def _natural(text: str) -> tuple[tuple[int, str], ...]:
    """`9.0` before `12.9`: numbers compare as numbers."""
    return tuple((int(part), "") if part.isdigit() else (-1, part)
                 for part in text.replace("-", ".").split("."))
