"""Stack re-pinning: one set of CUDA wheel versions every framework on a stack accepts.

Per wheel: an exact pin (torch pins `nvidia-cudnn-cu13==9.26.0.51`) decides, and every other
framework's range must admit it; two different exact pins are a conflict. With ranges only
(TensorFlow's `<13`, JAX's `>=9.12`), the stack keeps its version while every range admits it,
else it takes the newest the index holds inside all of them: a stack moves only when a
framework makes it. The stack's `cuda:` follows its CUDA runtime wheel.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from ngc_builder.bump.available import VersionIndex
from ngc_builder.manifest.models import CudaStack
from ngc_builder.manifest.wheels import Target


@dataclass(frozen=True)
class Ask:
    """One framework's requirement on a CUDA wheel."""

    owner: str  # the image (row) that asks: what a hold-back steps back
    who: str  # `torch 2.16.0`: how messages name it
    requirement: Requirement

    @property
    def pin(self) -> Version | None:
        """The exact version asked for (`==9.28.0.40`; `==13.2.86.*` is a range)."""
        for spec in self.requirement.specifier:
            if spec.operator in ("==", "===") and not spec.version.endswith(".*"):
                return Version(spec.version)
        return None

    def admits(self, version: Version) -> bool:
        return self.requirement.specifier.contains(version, prereleases=True)

    def __str__(self) -> str:
        verb = "pins" if self.pin is not None else "asks"
        return f"{self.who} {verb} {self.requirement.specifier}"


@dataclass(frozen=True)
class WheelChange:
    wheel: str
    old: str | None  # None: a wheel new to the stack
    new: str
    reason: str  # "torch 2.16.0 pins it"


@dataclass(frozen=True)
class Conflict:
    wheel: str
    owners: tuple[str, ...]  # the rows whose requirements clash
    message: str  # "nvidia-cudnn-cu13: torch 2.16.0 pins ==9.28.0.40, jax 0.13.0 asks >=9.30"


@dataclass(frozen=True)
class StackPlan:
    name: str
    cuda_old: str
    cuda_new: str
    wheels: dict[str, str]  # the whole new set, in the stack's order (new wheels last)
    changes: tuple[WheelChange, ...]
    conflicts: tuple[Conflict, ...]
    unasked: tuple[str, ...]  # wheels no framework asks for: kept as they were


def repin(name: str, stack: CudaStack, asks: list[Ask], index: VersionIndex,
          target: Target) -> StackPlan:
    by_wheel: dict[str, list[Ask]] = {}
    for ask in asks:
        by_wheel.setdefault(canonicalize_name(ask.requirement.name), []).append(ask)
    spelled: dict[str, str] = {canonicalize_name(wheel): wheel for wheel in stack.wheels}
    wheels = dict(stack.wheels)
    changes: list[WheelChange] = []
    conflicts: list[Conflict] = []
    for key, wheel_asks in by_wheel.items():
        wheel = spelled.get(key, key)
        old = stack.wheels.get(wheel)
        outcome = settle(wheel, old, wheel_asks, index, target)
        if isinstance(outcome, Conflict):
            conflicts.append(outcome)
        elif outcome is not None:
            wheels[wheel] = outcome.new
            changes.append(outcome)
    unasked = tuple(w for w in stack.wheels if canonicalize_name(w) not in by_wheel)
    return StackPlan(name, stack.cuda, cuda_of(wheels, stack.cuda), wheels, tuple(changes),
                     tuple(conflicts), unasked)


def settle(wheel: str, old: str | None, asks: list[Ask], index: VersionIndex,
           target: Target) -> WheelChange | Conflict | None:
    """The wheel's new version (None: it stays), or why no version fits everyone."""
    pinned = [ask for ask in asks if ask.pin is not None]
    if pinned:
        return _follow_pin(wheel, old, pinned, asks)
    if old is not None and all(ask.admits(Version(old)) for ask in asks):
        return None
    listed = [Version(v) for v in index(wheel, target)]
    fitting = [v for v in listed if all(ask.admits(v) for ask in asks)]
    if not fitting:
        return _conflict(wheel, asks, f"no version of {wheel} the index holds fits: ")
    newest = str(max(fitting))
    reason = ", ".join(str(ask) for ask in asks)
    return WheelChange(wheel, old, newest, reason) if newest != old else None


def _follow_pin(wheel: str, old: str | None, pinned: list[Ask],
                asks: list[Ask]) -> WheelChange | Conflict | None:
    first = pinned[0]
    assert first.pin is not None  # pinned holds asks with a pin only
    for other in pinned[1:]:
        if other.pin != first.pin:
            return _conflict(wheel, [first, other])
    for ask in asks:
        if not ask.admits(first.pin):
            return _conflict(wheel, [first, ask])
    new = str(first.pin)
    if old is not None and Version(old) == first.pin:
        return None
    who = " and ".join(sorted({ask.who for ask in pinned}))
    return WheelChange(wheel, old, new, f"{who} pin{'s' if len(pinned) == 1 else ''} it")


def _conflict(wheel: str, asks: list[Ask], lead: str = "") -> Conflict:
    owners = tuple(dict.fromkeys(ask.owner for ask in asks))
    return Conflict(wheel, owners, f"{wheel}: {lead}{', '.join(str(ask) for ask in asks)}")


def cuda_of(wheels: dict[str, str], current: str) -> str:
    """`cuda:` follows the CUDA runtime wheel's major.minor (13.2.86 -> 13.2)."""
    for wheel, version in wheels.items():
        name = canonicalize_name(wheel)
        if name == "nvidia-cuda-runtime" or name.startswith("nvidia-cuda-runtime-cu"):
            parsed = Version(version)
            return f"{parsed.major}.{parsed.minor}"
    return current
