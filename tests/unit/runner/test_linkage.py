"""T0 framework.libraries: ldd's `not found` lines, the driver's libraries, vendored copies."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ngc_builder.runner import linkage
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
LDD = """\
/x/torch/lib/libtorch_cuda.so:
\tlinux-vdso.so.1 (0x00007ffc)
\tlibcudart.so.13 => /opt/venv/nvidia/lib/libcudart.so.13 (0x00007f)
\tlibcuda.so.1 => not found
/x/plugin/libbackend.so:
\tlibfoo.so.2 => not found
/x/numpy.libs/libopenblas-abc.so:
\tlibgfortran-123.so.5 => not found
"""
CHECK = Check("framework.libraries", "T0", False, linkage.check_libraries)


def fake_ldd(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []

    def run(command: list[str], **kwargs: Any) -> SimpleNamespace:
        calls.append(command)
        return SimpleNamespace(stdout=LDD, returncode=1)

    monkeypatch.setattr(subprocess, "run", run)
    return calls


def test_not_found_lines_are_attributed_to_their_library(monkeypatch: pytest.MonkeyPatch,
                                                         ) -> None:
    fake_ldd(monkeypatch)
    found = list(linkage.unresolved([Path("/x/torch/lib/libtorch_cuda.so")]))
    assert found == [("libtorch_cuda.so", "libcuda.so.1"), ("libbackend.so", "libfoo.so.2"),
                     ("libopenblas-abc.so", "libgfortran-123.so.5")]


def test_a_library_the_framework_ships_under_that_name_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = fake_ldd(monkeypatch)
    scanned = [Path("/x/torch/lib/libtorch_cuda.so"), Path("/x/numpy.libs/libgfortran-123.so.5"),
               Path("/y/lib/libfoo.so.2")]
    found = list(linkage.unresolved(scanned))
    assert found == [("libtorch_cuda.so", "libcuda.so.1")]
    assert calls[0][0] == "ldd" and calls[0][1:] == [str(p) for p in scanned]


def run_with(monkeypatch: pytest.MonkeyPatch, missing: list[tuple[str, str]],
             gpu: bool) -> Any:
    monkeypatch.setattr(linkage, "shared_objects", lambda dists: [Path("/x/a.so")])
    monkeypatch.setattr(linkage, "distribution_closure", lambda name, skip: [])
    monkeypatch.setattr(linkage, "unresolved", lambda paths: iter(missing))
    env = RunEnv({"framework": "torch", "distribution": "torch"}, "required" if gpu else "none",
                 gpu, gpu)
    return run_check(CHECK, env)


def test_driver_libraries_come_from_the_host_only_without_a_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    driver = [("libtorch_cuda.so", "libcuda.so.1")]
    passed = run_with(monkeypatch, driver, gpu=False)
    assert passed.status == "pass" and "driver's libraries" in passed.message
    assert passed.evidence["driver_libraries_from_host"] == ["libcuda.so.1"]
    failed = run_with(monkeypatch, driver, gpu=True)
    assert failed.status == "fail" and "libtorch_cuda.so needs libcuda.so.1" in failed.message


def test_any_other_missing_library_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_with(monkeypatch, [("tbbpool.so", "libtbb.so.12")], gpu=False)
    assert result.status == "fail" and result.fault == "image"
    assert result.evidence["not_found"] == ["tbbpool.so: libtbb.so.12"]


def test_the_closure_follows_requirements_and_skips_the_stack() -> None:
    names = {d.metadata["Name"].lower() for d in linkage.distribution_closure("pydantic", [])}
    assert {"pydantic", "pydantic_core", "typing_extensions"} <= {n.replace("-", "_")
                                                                  for n in names}
    skipped = linkage.distribution_closure("pydantic", ["pydantic-core"])
    assert "pydantic_core" not in {d.metadata["Name"].lower().replace("-", "_")
                                   for d in skipped}
    assert linkage.shared_objects(linkage.distribution_closure("pydantic", []))  # real files
