"""``framework.import`` / ``framework.version`` and loading the framework's probe file."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import linkage
from .suite import Check, Context, Suite, describe
from .versions import versions_equal

IMPORT = "framework.import"
VERSION = "framework.version"


@dataclass
class Probe:
    """A loaded probe: its checks, or why it could not be loaded."""

    name: str
    # None for a framework with no Python module (Lua Torch): the probe's
    # installed_version() hook then stands in for the import and the version.
    import_name: str | None
    path: Path | None = None
    version_hook: Callable[[], str] | None = None
    checks: Suite = field(default_factory=Suite)
    error: str | None = None


def probe_path(probes_dir: Path, name: str) -> Path | None:
    # Images and the repository keep <dir>/<name>/probe.py (plus its probe_*.py siblings);
    # a single-file probe may also sit at <dir>/<name>.py.
    for candidate in (probes_dir / name / "probe.py", probes_dir / f"{name}.py"):
        if candidate.is_file():
            return candidate
    return None


def load_probe(probes_dir: Path, name: str, default_import: str | None) -> Probe:
    probe = Probe(name, default_import, probe_path(probes_dir, name))
    if probe.path is None:
        probe.error = f"probe {name!r} not found in {probes_dir}"
        return probe
    try:
        module = _exec_file(probe.path, f"ngc_probe_{name.replace('-', '_')}")
        found = getattr(module, "IMPORT_NAME", default_import)
        probe.import_name = None if found is None else str(found)
        probe.version_hook = getattr(module, "installed_version", None)
        module.register(probe.checks)
    except Exception as exc:  # a broken probe is the image's defect, reported, not a crash
        probe.error = f"probe {probe.path} failed to load: {describe(exc)}"
        probe.checks = Suite()
    return probe


def _exec_file(path: Path, module_name: str) -> Any:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    # Registered before exec so dataclasses and pickling inside the probe can find it.
    sys.modules[module_name] = module
    # A probe in its own folder may split itself into sibling modules (probe_gpu.py, ...).
    own_folder = path.name == "probe.py"
    if own_folder:
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        if own_folder:
            sys.path.remove(str(path.parent))
    return module


def register(suite: Suite, expect: dict[str, Any], probes_dir: Path) -> None:
    framework = str(expect["framework"])
    # The probe's IMPORT_NAME wins; the expectation's import_name covers a probe without one.
    raw_import = expect.get("import_name", framework)
    default_import = None if raw_import is None else str(raw_import)
    probe = load_probe(probes_dir, str(expect.get("probe", framework)), default_import)
    clashes = sorted(set(probe.checks.ids) & {*suite.ids, IMPORT, VERSION})
    if clashes:
        probe.error = f"probe {probe.path} reuses check ids {', '.join(clashes)}"
        probe.checks = Suite()
    suite.add(Check(IMPORT, "T0", False, _import_check(probe)))
    if "version" in expect:
        suite.add(Check(VERSION, "T0", False, _version_check(probe), (IMPORT,)))
    if probe.import_name is not None:
        linkage.register(suite)
    suite.extend(probe.checks.checks, requires=(IMPORT,))


def _import_check(probe: Probe) -> Callable[[Context], str]:
    def check(ctx: Context) -> str:
        ctx.evidence("probe", None if probe.path is None else str(probe.path))
        if probe.error is not None:
            ctx.fail(probe.error)
        if probe.import_name is None:
            return _tool_check(ctx, probe)
        try:
            module = importlib.import_module(probe.import_name)
        except Exception as exc:
            ctx.fail(f"import {probe.import_name} failed: {describe(exc)}")
        location = getattr(module, "__file__", None)
        ctx.evidence("module_file", location)
        return (
            f"import {probe.import_name} ({location}); probe adds {len(probe.checks.checks)} checks"
        )

    return check


def _tool_check(ctx: Context, probe: Probe) -> str:
    if probe.version_hook is None:
        ctx.fail(f"probe {probe.path} gives neither IMPORT_NAME nor installed_version()")
    found = probe.version_hook()
    ctx.evidence("installed_version", found)
    return f"no Python module; the framework reports version {found}"


def _version_check(probe: Probe) -> Callable[[Context], str]:
    def check(ctx: Context) -> str:
        expected = str(ctx.expect["version"])
        if probe.import_name is None and probe.version_hook is not None:
            found = probe.version_hook()
            _compare(ctx, "installed_version()", found, expected)
            return f"{probe.name} {found}"
        import_name = str(probe.import_name)
        module_version = str(getattr(sys.modules[import_name], "__version__", ""))
        ctx.evidence("module_version", module_version)
        if "distribution" in ctx.expect and ctx.expect["distribution"] is None:
            # Installed from OS packages (e.g. Debian's python3-caffe): no pip metadata,
            # so the module's own __version__ is the only witness.
            _compare(ctx, f"{import_name}.__version__", module_version, expected)
            return f"{import_name} {module_version} (OS package)"
        distribution = str(ctx.expect.get("distribution", ctx.expect["framework"]))
        try:
            installed = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            ctx.fail(f"distribution {distribution!r} is not installed")
        ctx.evidence("distribution_version", installed)
        _compare(ctx, f"{distribution} (metadata)", installed, expected)
        if module_version:
            # Some framework modules carry no __version__ (caffe2.python): metadata decides.
            _compare(ctx, f"{import_name}.__version__", module_version, expected)
        return f"{distribution} {installed}"

    return check


def _compare(ctx: Context, what: str, actual: str, expected: str) -> None:
    if not versions_equal(actual, expected):
        ctx.fail(f"{what} is {actual or 'missing'}, expected {expected}")
