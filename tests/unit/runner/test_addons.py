"""The add-on checks (runner/addons.py) against stand-in modules: which checks an image's
add-ons bring, each held to the manifest's version, an import failure named, the GPU side
skipped without GPUs. The real libraries run in the image's validation (docs/addons.md)."""

from __future__ import annotations

import importlib.metadata
import sys
import types
from contextlib import nullcontext
from typing import Any

import pytest

from ngc_builder.runner import addons
from ngc_builder.runner.context import Context, RunEnv
from ngc_builder.runner.suite import Suite, run_checks

pytestmark = pytest.mark.unit
EXPECT = {"addons": {"nvtx": "0.2.17", "nvidia-nvimgcodec-cu13": "0.9.0.20"}}


class Nvtx(types.ModuleType):
    """nvtx as a program without a profiler sees it, keeping what it was asked."""

    def __init__(self) -> None:
        super().__init__("nvtx")
        self.calls: list[str] = []

    def push_range(self, message: str, color: str = "") -> None:
        self.calls.append(f"push {message}")

    def pop_range(self) -> None:
        self.calls.append("pop")

    def mark(self, message: str) -> None:
        self.calls.append(f"mark {message}")

    def annotate(self, message: str, color: str = "") -> Any:
        self.calls.append(f"annotate {message}")
        return _Annotation()

    def enabled(self) -> bool:
        return False


class _Annotation(nullcontext[None]):
    def __call__(self, function: Any) -> Any:
        return function


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """distribution -> the version importlib.metadata reports (absent: not installed)."""
    versions = {"nvtx": "0.2.17"}

    def version(name: str) -> str:
        if name not in versions:
            raise importlib.metadata.PackageNotFoundError(name)
        return versions[name]
    monkeypatch.setattr(importlib.metadata, "version", version)
    return versions


def _context(expect: dict[str, Any] = EXPECT) -> Context:
    return Context(RunEnv(expect, "none", False, False), "addons.nvtx")


def test_each_addon_brings_its_checks_the_gpu_side_only_where_the_library_has_one() -> None:
    suite = Suite()
    addons.register(suite, EXPECT)
    checks = {check.id: (check.needs_gpu, check.in_emulated_tier) for check in suite.checks}
    assert checks == {"addons.nvtx": (False, True), "addons.nvimgcodec": (False, True),
                      "addons.nvimgcodec.gpu": (True, False)}
    empty = Suite()
    addons.register(empty, {"tools": {"jupyterlab": "4.6.6"}})
    assert empty.checks == []


def test_nvtx_runs_its_ranges_mark_and_annotation(installed: dict[str, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    nvtx = Nvtx()
    monkeypatch.setitem(sys.modules, "nvtx", nvtx)
    ctx = _context()
    assert addons.check_nvtx(ctx) == "nvtx: ranges, a mark and an annotated function ran"
    assert nvtx.calls[:3] == ["push ngc-builder", "pop", "mark ngc-builder"]
    assert ctx.evidence_data["version"] == "0.2.17"


@pytest.mark.parametrize(("found", "message"), [
    ("0.2.16", "nvtx 0.2.16, the manifest asks 0.2.17"),
    (None, "nvtx is not installed; the manifest asks 0.2.17"),
])
def test_an_addon_at_another_version_or_missing_fails(
        installed: dict[str, str], monkeypatch: pytest.MonkeyPatch, found: str | None,
        message: str) -> None:
    monkeypatch.setitem(sys.modules, "nvtx", Nvtx())
    if found is None:
        del installed["nvtx"]
    else:
        installed["nvtx"] = found
    with pytest.raises(Exception, match=message):
        addons.check_nvtx(_context())


def test_an_addon_that_does_not_import_fails_with_why(installed: dict[str, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    installed["nvidia-nvimgcodec-cu13"] = "0.9.0.20"
    monkeypatch.setitem(sys.modules, "nvidia.nvimgcodec", None)  # import raises ImportError
    with pytest.raises(Exception, match=r"import nvidia\.nvimgcodec: ModuleNotFoundError"):
        addons.check_nvimgcodec(_context())


def test_without_gpus_the_gpu_side_is_skipped_and_says_so(
        installed: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nvtx", Nvtx())
    installed["nvidia-nvimgcodec-cu13"] = "0.9.0.20"
    monkeypatch.setitem(sys.modules, "nvidia.nvimgcodec", None)
    suite = Suite()
    addons.register(suite, EXPECT)
    results = {r.id: (r.status, r.message) for r in run_checks(suite, RunEnv(
        EXPECT, "none", False, False))}
    assert results["addons.nvtx"][0] == "pass"
    assert results["addons.nvimgcodec"][0] == "fail"
    assert results["addons.nvimgcodec.gpu"][0] == "skip"
    assert "no GPU" in results["addons.nvimgcodec.gpu"][1]
