"""T0 ``framework.libraries``: every shared library the framework ships resolves its
dependencies (``ldd`` shows no ``not found``).

Importing a framework loads only part of it; kernels, plugins and backends are opened later, and
a missing dependency there shows up mid-training. So every ``.so`` of the framework's
distribution and of everything it requires (except the CUDA stack's own wheels, checked by
``lib.*``) goes through ``ldd``. "Requires" as a resolver reads it: a requirement marked
``extra == "x"`` counts only where extra x was asked for, so an optional layer of a dependency
(numba's TBB pool, reached through pandas[performance]) is not held against the framework.
The NVIDIA driver's libraries (``libcuda.so.1``…) come from the host at run time: without a
GPU they are reported, not failed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .suite import Check, Context, Suite
from .versions import normalize_name

DRIVER_LIBRARY = re.compile(r"^lib(cuda|nvidia-[A-Za-z0-9_-]+|nvcuvid)\.so")
_NOT_FOUND = re.compile(r"^\s*(\S+) => not found")
_BATCH = 40
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


def register(suite: Suite) -> None:
    suite.add(Check("framework.libraries", "T0", False, check_libraries))


@dataclass(frozen=True)
class Requirement:
    """One Requires-Dist line, as far as the closure needs it (names normalised)."""

    name: str
    # The extras it asks of that distribution: pkg[a,b].
    extras: tuple[str, ...]
    # The requirer's extras it belongs to (its marker's `extra == "x"`); empty: always needed.
    # Other markers (python_version, sys_platform) are not evaluated: installed means needed.
    only_for: frozenset[str]


def parse_requirement(line: str) -> Requirement | None:
    match = _REQUIREMENT.match(line)
    if match is None:
        return None
    marker = line.partition(";")[2]
    extras = tuple(normalize_name(e.strip()) for e in (match.group(2) or "").split(",")
                   if e.strip())
    only_for = frozenset(normalize_name(e) for e in _EXTRA_MARKER.findall(marker))
    return Requirement(normalize_name(match.group(1)), extras, only_for)


def distribution_closure(
    name: str, skip: Iterable[str], extras: Iterable[str] = (),
) -> list[importlib.metadata.Distribution]:
    """The distribution, with the ``extras`` the image asked of it, and everything installed
    that those require, following each dependency's extras only where they were asked for."""
    skipped = {normalize_name(n) for n in skip}
    found: dict[str, importlib.metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    # (distribution, extra): "" is the distribution itself, without any extra.
    pending = [(normalize_name(name), normalize_name(e)) for e in ("", *extras)]
    while pending:
        current, extra = pending.pop()
        if (current, extra) in done or current in skipped:
            continue
        done.add((current, extra))
        dist = found.get(current) or _installed(current)
        if dist is not None:
            found[current] = dist
            pending += _required(dist, extra)
    return list(found.values())


def _installed(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _required(dist: importlib.metadata.Distribution, extra: str) -> list[tuple[str, str]]:
    """What ``dist`` requires for ``extra`` ("" for itself): each name, then with each extra."""
    wanted: list[tuple[str, str]] = []
    for line in dist.requires or ():
        requirement = parse_requirement(line)
        if requirement is None:
            continue
        applies = extra in requirement.only_for if extra else not requirement.only_for
        if applies:
            wanted += [(requirement.name, e) for e in ("", *requirement.extras)]
    return wanted


def shared_objects(dists: Iterable[importlib.metadata.Distribution]) -> list[Path]:
    paths = {Path(str(d.locate_file(f))) for d in dists for f in d.files or ()
             if f.name.endswith(".so") or ".so." in f.name}
    return sorted(path for path in paths if path.is_file())


def module_objects(import_name: str) -> list[Path]:
    """For an OS-packaged framework (no pip metadata): the .so files in its package folder,
    found without importing it (a library it cannot load must not hide the others)."""
    try:
        spec = importlib.util.find_spec(import_name.split(".")[0])
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin:
        return []
    return sorted(p for p in Path(spec.origin).parent.rglob("*.so*") if p.is_file())


def unresolved(paths: list[Path]) -> Iterator[tuple[str, str]]:
    """(library, missing dependency) for every `not found` line ldd prints, except those the
    framework ships itself under that very name: auditwheel's vendored copies
    (`<package>.libs/`) and plugins (triton's MLIR plugins need `libtriton.so`) are loaded by a
    library that has already loaded the dependency, which the loader then reuses; `ldd` on the
    library alone cannot know that."""
    shipped = {path.name for path in paths}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    size = max(1, min(_BATCH, -(-len(paths) // cores)))
    batches = [[str(p) for p in paths[start:start + size]]
               for start in range(0, len(paths), size)]
    # Each ldd is the loader run once per library: under QEMU about 0.2 s each, so the
    # batches go side by side, one per core.
    with ThreadPoolExecutor(max_workers=cores) as pool:
        for batch, output in pool.map(_ldd, batches):
            current = batch[0]
            for line in output.splitlines():
                if not line.startswith(("\t", " ")) and line.endswith(":"):
                    current = line[:-1]
                elif (match := _NOT_FOUND.match(line)) and match.group(1) not in shipped:
                    yield Path(current).name, match.group(1)


def _ldd(batch: list[str]) -> tuple[list[str], str]:
    done = subprocess.run(["ldd", *batch], capture_output=True, text=True, check=False)
    return batch, done.stdout


def check_libraries(ctx: Context) -> str:
    distribution = ctx.expect.get("distribution", ctx.expect.get("framework"))
    if distribution is None:
        paths = module_objects(str(ctx.expect.get("import_name") or ""))
    else:
        paths = shared_objects(distribution_closure(str(distribution),
                                                    ctx.expect.get("wheels", {}),
                                                    ctx.expect.get("extras", [])))
    if not paths:
        ctx.skip("the framework ships no shared libraries")
    missing = sorted(set(unresolved(paths)))
    driver = [(lib, dep) for lib, dep in missing if DRIVER_LIBRARY.match(dep)]
    broken = [(lib, dep) for lib, dep in missing if (lib, dep) not in driver or ctx.gpu_expected]
    ctx.evidence("libraries_checked", len(paths))
    ctx.evidence("driver_libraries_from_host", sorted({dep for _, dep in driver}))
    if broken:
        ctx.evidence("not_found", [f"{lib}: {dep}" for lib, dep in broken])
        shown = "; ".join(f"{lib} needs {dep}" for lib, dep in broken[:5])
        ctx.fail(f"{len(broken)} unresolved dependencies (ldd: not found): {shown}")
    note = f"; {len(driver)} links to the driver's libraries, which the host provides" \
        if driver else ""
    return f"{len(paths)} shared libraries resolve every dependency{note}"
