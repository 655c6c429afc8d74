"""T0 ``framework.libraries``: every shared library the framework ships resolves its
dependencies (``ldd`` shows no ``not found``).

Importing a framework loads only part of it; kernels, plugins and backends are opened later, and
a missing dependency there shows up mid-training. So every ``.so`` of the framework's
distribution and of everything it requires (except the CUDA stack's own wheels, checked by
``lib.*``) goes through ``ldd``. The NVIDIA driver's libraries (``libcuda.so.1``…) come from the
host at run time: without a GPU they are reported, not failed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from .suite import Check, Context, Suite
from .versions import normalize_name

DRIVER_LIBRARY = re.compile(r"^lib(cuda|nvidia-[A-Za-z0-9_-]+|nvcuvid)\.so")
_NOT_FOUND = re.compile(r"^\s*(\S+) => not found")
_BATCH = 40
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def register(suite: Suite) -> None:
    suite.add(Check("framework.libraries", "T0", False, check_libraries))


def distribution_closure(name: str, skip: Iterable[str]) -> list[importlib.metadata.Distribution]:
    """The distribution and everything it requires that is installed (extras included)."""
    skipped = {normalize_name(n) for n in skip}
    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [name]
    while pending:
        current = normalize_name(pending.pop())
        if current in found or current in skipped:
            continue
        try:
            dist = importlib.metadata.distribution(current)
        except importlib.metadata.PackageNotFoundError:
            continue
        found[current] = dist
        pending += [m.group(1) for r in dist.requires or () if (m := _REQUIREMENT_NAME.match(r))]
    return list(found.values())


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
    for start in range(0, len(paths), _BATCH):
        batch = [str(p) for p in paths[start:start + _BATCH]]
        done = subprocess.run(["ldd", *batch], capture_output=True, text=True, check=False)
        current = batch[0]
        for line in done.stdout.splitlines():
            if not line.startswith(("\t", " ")) and line.endswith(":"):
                current = line[:-1]
            elif (match := _NOT_FOUND.match(line)) and match.group(1) not in shipped:
                yield Path(current).name, match.group(1)


def check_libraries(ctx: Context) -> str:
    distribution = ctx.expect.get("distribution", ctx.expect.get("framework"))
    if distribution is None:
        paths = module_objects(str(ctx.expect.get("import_name") or ""))
    else:
        paths = shared_objects(distribution_closure(str(distribution),
                                                    ctx.expect.get("wheels", {})))
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
