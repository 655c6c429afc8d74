"""A row's `extra_packages` and `tools`: each moved to the newest version the index holds for
the image that fits what the row asks of it.

A version is taken when its wheel admits the base's Python, it asks for no CUDA library (an
extra package or a tool never moves a stack: one that needs CUDA wheels is moved by hand),
and every requirement on its name from the framework (at the version the bump chose) and from
the row's other packages (at theirs) admits it. A new version of one package may ask more of
another, so the choices settle in rounds. pip is the last judge: the lock resolves each image
whole afterwards, and an image it cannot resolve fails the bump's lock by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ngc_builder.bump.available import VersionIndex
from ngc_builder.bump.track import Row
from ngc_builder.errors import StepError
from ngc_builder.manifest.stacks import applies, is_cuda_library, python_ok
from ngc_builder.manifest.wheels import Fetcher, WheelMetadata

ROUNDS = 4  # each round can only raise a choice's constraints; real rows settle in two
FIELDS = ("extra_packages", "tools", "addons")


@dataclass(frozen=True)
class PackageChange:
    image: str
    field: str  # "extra_packages" or "tools"
    name: str
    old: str
    new: str
    reasons: tuple[str, ...] = ()  # why each newer version was turned down, newest first

    @property
    def changed(self) -> bool:
        return self.old != self.new


@dataclass
class _Looked:
    """What the index and the wheels said, asked once per package and version."""

    row: Row
    index: VersionIndex
    fetch: Fetcher
    wheels: dict[tuple[str, str], WheelMetadata | str] = field(default_factory=dict)

    def wheel(self, name: str, version: str) -> WheelMetadata | str:
        """The wheel's metadata, or why it cannot be read."""
        key = (name, version)
        if key not in self.wheels:
            try:
                self.wheels[key] = self.fetch(f"{name}=={version}", self.row.target)
            except StepError as exc:
                self.wheels[key] = f"{version}: {exc.message}"
        return self.wheels[key]

    def newer(self, name: str, current: str) -> list[str]:
        """The versions the row may move to, newest first, the current one last."""
        listed = [v for v in self.index(name, self.row.target) if Version(v) > Version(current)]
        return [*listed, current]


def bump_packages(row: Row, version: str, index: VersionIndex,
                  fetch: Fetcher) -> list[PackageChange]:
    """The row's packages with the framework at `version`."""
    pinned = {name: (kind, old) for kind in FIELDS
              for name, old in getattr(row.image, kind).items()}
    if not pinned:
        return []
    looked = _Looked(row, index, fetch)
    asked = _framework_asks(looked, version)
    chosen = {name: old for name, (_, old) in pinned.items()}
    reasons: dict[str, list[str]] = {}
    for _ in range(ROUNDS):
        before = dict(chosen)
        for name in sorted(pinned):
            others = [need for other, at in chosen.items() if other != name
                      for need in _requires(looked.wheel(other, at), set(), looked)]
            chosen[name], reasons[name] = _pick(looked, name, pinned[name][1], asked + others)
        if chosen == before:
            break
    return [PackageChange(row.image.image_name, kind, name, old, chosen[name],
                          tuple(reasons[name])) for name, (kind, old) in pinned.items()]


def _framework_asks(looked: _Looked, version: str) -> list[tuple[str, Requirement]]:
    """(who, requirement) the framework's wheels at `version` put on any package."""
    asks: list[tuple[str, Requirement]] = []
    for template in looked.row.version_lines:
        line = Requirement(template.replace("{version}", version))
        asks += _requires(looked.wheel(line.name, version), line.extras, looked)
    return asks


def _requires(meta: WheelMetadata | str, extras: set[str],
              looked: _Looked) -> list[tuple[str, Requirement]]:
    if isinstance(meta, str):
        return []
    who = f"{meta.name} {meta.version}"
    return [(who, need) for need in map(Requirement, meta.requires_dist)
            if applies(need, extras, looked.row.target)]


def _pick(looked: _Looked, name: str, current: str,
          asks: list[tuple[str, Requirement]]) -> tuple[str, list[str]]:
    """The newest version that fits, and why each newer one did not; the current version when
    none does (the lock then says what is wrong)."""
    mine = [(who, need) for who, need in asks
            if canonicalize_name(need.name) == canonicalize_name(name)]
    turned_down: list[str] = []
    for version in looked.newer(name, current):
        reason = _unfit(looked, name, version, mine)
        if reason is None:
            return version, turned_down
        if version != current:
            turned_down.append(reason)
    return current, turned_down


def _unfit(looked: _Looked, name: str, version: str,
           mine: list[tuple[str, Requirement]]) -> str | None:
    for who, need in mine:
        if not need.specifier.contains(version, prereleases=True):
            return f"{name} {version}: {who} asks {need.name}{need.specifier}"
    meta = looked.wheel(name, version)
    if isinstance(meta, str):
        return f"{name} {meta}"
    python = looked.row.target.python
    if not python_ok(meta, python):
        return f"{name} {version} needs Python {meta.requires_python}, base has {python}"
    cuda = sorted({canonicalize_name(need.name) for _, need in _requires(meta, set(), looked)
                   if is_cuda_library(need.name)})
    if cuda:
        return (f"{name} {version} asks for CUDA libraries ({', '.join(cuda)}): extra "
                "packages and tools never move a stack")
    return None
