"""Stack check (stage 1): before anything is built, prove each framework layer reuses its stack.

Every CUDA library a framework wheel asks for (an `nvidia-*` wheel or the `cuda-toolkit`
meta-package, through extras such as `jax[cuda13]` or `cuda-toolkit[cublas]`) must be
in the stack at a version the requirement accepts; otherwise pip would download a second
copy into the framework layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ngc_builder.errors import InputError, Problem, StepError
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.models import CudaStack, ImageEntry
from ngc_builder.manifest.wheels import Fetcher, Target, WheelMetadata, fetch_metadata

MAX_DEPTH = 4
PARALLEL_ROWS = 4


@dataclass(frozen=True)
class Need:
    """One requirement met while walking a framework's metadata, and where it came from."""

    requirement: Requirement
    via: str


def is_cuda_library(name: str) -> bool:
    canonical = canonicalize_name(name)
    return canonical.startswith("nvidia-") or canonical == "cuda-toolkit"


def image_requirements(loaded: LoadedRelease, image: ImageEntry) -> list[str]:
    """The pip requirement lines of one framework image, versions filled in."""
    framework = loaded.frameworks[image.framework].spec
    lines = [t.replace("{version}", image.version) for t in framework.requirements[image.variant]]
    lines += [f"{name}=={version}" for name, version in sorted(image.extra_packages.items())]
    lines += [f"{name}=={version}" for name, version in sorted(image.tools.items())]
    lines += [f"{name}=={version}" for name, version in sorted(image.addons.items())]
    return lines


def check_stacks(loaded: LoadedRelease, fetch: Fetcher = fetch_metadata) -> None:
    """Raise InputError naming every framework requirement its stack does not meet."""
    # A row known not to work is still attempted; its build is the evidence.
    rows = [index for index, image in enumerate(loaded.release.images)
            if image.expect_failure is None]
    # Rows in parallel: on a cold cache each wheel is a round trip to the index.
    with ThreadPoolExecutor(max_workers=PARALLEL_ROWS) as pool:
        found = pool.map(lambda index: _row_problems(loaded, index, fetch), rows)
        problems = [problem for row in found for problem in row]
    if problems:
        raise InputError(problems)


def _row_problems(loaded: LoadedRelease, index: int, fetch: Fetcher) -> list[Problem]:
    image = loaded.release.images[index]
    base = loaded.image_base(image)
    target = Target(base.python, base.glibc)
    stack = loaded.release.cuda_stacks[image.stack] if image.stack else None
    try:
        messages = image_mismatches(loaded, image, stack, target, fetch)
    except StepError as exc:
        messages = [f"{exc.step}: {exc.message}"]
    return [loaded.source.problem(("images", index, "version"), text) for text in messages]


def image_mismatches(
    loaded: LoadedRelease, image: ImageEntry, stack: CudaStack | None, target: Target,
    fetch: Fetcher,
) -> list[str]:
    messages: list[str] = []
    for line in image_requirements(loaded, image):
        top = fetch(_strip_extras(line), target)
        if not python_ok(top, target.python):
            messages.append(f"{line}: wheel needs Python {top.requires_python}, "
                            f"base has {target.python}")
        needs = list(walk(Requirement(line), top, stack, target, fetch, line, 0))
        if is_cuda_library(top.name) and canonicalize_name(top.name) not in image.addons:
            # A CUDA wheel named directly (e.g. in extra_packages) must be the stack's too. An
            # add-on (nvImageCodec) is a library of its own, not a part of CUDA a stack carries;
            # what it requires is still held to the stack like anything else's.
            needs.append(Need(Requirement(line), "the image's own requirements"))
        for need in needs:
            reason = mismatch(need.requirement, stack, image.stack)
            if reason:
                messages.append(f"{image.image_name}: {_short(need.requirement)} (via {need.via}) "
                                f"{reason}: the framework layer would download its own copy")
    return sorted(set(messages))


def walk(
    requirement: Requirement, meta: WheelMetadata, stack: CudaStack | None, target: Target,
    fetch: Fetcher, via: str, depth: int,
) -> Iterator[Need]:
    """Yield the CUDA-library requirements reachable through `meta` and its extras."""
    for text in meta.requires_dist:
        child = Requirement(text)
        if not applies(child, requirement.extras, target):
            continue
        if is_cuda_library(child.name):
            yield Need(child, via)
        if child.extras and depth < MAX_DEPTH:
            pinned = _follow_version(child, stack)
            sub = fetch(pinned, target)
            yield from walk(child, sub, stack, target, fetch, f"{via} -> {child.name}", depth + 1)


def applies(requirement: Requirement, extras: set[str], target: Target) -> bool:
    if requirement.marker is None:
        return True
    base_env = {"python_version": target.python, "python_full_version": f"{target.python}.0",
                "sys_platform": "linux", "platform_system": "Linux",
                "platform_machine": target.machine, "os_name": "posix",
                "implementation_name": "cpython", "platform_python_implementation": "CPython"}
    return any(requirement.marker.evaluate({**base_env, "extra": extra})
               for extra in (extras or {""}))


def mismatch(
    requirement: Requirement, stack: CudaStack | None, stack_name: str | None
) -> str | None:
    if stack is None:
        return "is a CUDA library, but the image has no CUDA stack"
    pinned = _stack_version(requirement.name, stack)
    if pinned is None:
        return f"is not in stack {stack_name}"
    if not requirement.specifier.contains(Version(pinned), prereleases=True):
        return f"does not accept {pinned} from stack {stack_name}"
    return None


def _stack_version(name: str, stack: CudaStack) -> str | None:
    wanted = canonicalize_name(name)
    for wheel, version in stack.wheels.items():
        if canonicalize_name(wheel) == wanted:
            return version
    return None


def _follow_version(requirement: Requirement, stack: CudaStack | None) -> str:
    # A CUDA meta-package is read at the stack's version; anything else at what pip picks.
    pinned = _stack_version(requirement.name, stack) if stack is not None else None
    if pinned is not None:
        return f"{requirement.name}=={pinned}"
    return f"{requirement.name}{requirement.specifier}"


def _strip_extras(line: str) -> str:
    parsed = Requirement(line)
    return f"{parsed.name}{parsed.specifier}"


def python_ok(meta: WheelMetadata, python: str) -> bool:
    """The wheel's Requires-Python admits `python` (no Requires-Python admits every one)."""
    return SpecifierSet(meta.requires_python).contains(python, prereleases=True)


def _short(requirement: Requirement) -> str:
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"
