"""T0 framework.libraries: ldd's `not found` lines, the driver's libraries, vendored copies."""

from __future__ import annotations

import importlib.metadata
import os
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
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    found = list(linkage.unresolved(scanned))
    assert found == [("libtorch_cuda.so", "libcuda.so.1")]
    assert calls[0][0] == "ldd" and calls[0][1:] == [str(p) for p in scanned]


def test_the_libraries_are_split_one_batch_per_core_and_each_is_checked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ldd runs the loader once per library (about 0.2 s each under QEMU): side by side."""
    calls = fake_ldd(monkeypatch)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    scanned = [Path(f"/x/lib{n}.so") for n in range(100)]
    list(linkage.unresolved(scanned))
    assert sorted((len(call) - 1 for call in calls), reverse=True) == [34, 34, 32]
    assert sorted(arg for call in calls for arg in call[1:]) == sorted(map(str, scanned))


def run_with(monkeypatch: pytest.MonkeyPatch, missing: list[tuple[str, str]],
             gpu: bool) -> Any:
    monkeypatch.setattr(linkage, "shared_objects", lambda dists: [Path("/x/a.so")])
    monkeypatch.setattr(linkage, "distribution_closure", lambda name, skip, extras: [])
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


# torch's real chain to numba's TBB layer, and jax's CUDA extra, as Requires-Dist lines.
METADATA = {
    "torch": ["networkx>=2.5.1", "filelock", 'opt-einsum>=3.3; extra == "opt-einsum"'],
    "networkx": ['pandas>=2.0; extra == "default"', 'pytest>=7.2; extra == "test"'],
    "pandas": ["numpy>=1.26", 'numba>=0.59.0; extra == "performance"'],
    "numba": ["llvmlite"],
    "filelock": [],
    "numpy": [],
    "jax": ["jaxlib<=0.8.1,>=0.8.1", "ml_dtypes>=0.5.0",
            'jax-cuda13-plugin[with-cuda]<=0.8.1,>=0.8.1; extra == "cuda13"',
            "jax-cuda12-plugin[with_cuda]<=0.8.1; extra == 'cuda12'",
            'jaxlib==0.8.1; extra == "tpu"'],
    "jaxlib": ["scipy>=1.13", "numpy>=1.26"],
    "jax-cuda13-plugin": ["jax-cuda13-pjrt==0.8.1",
                          'nvidia-cublas>=13.1; extra == "with-cuda"'],
    "jax-cuda13-pjrt": [],
    "jax-cuda12-plugin": [],
    "nvidia-cublas": [],
    "ml-dtypes": ["numpy>=1.21"],
}


def fake_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    def distribution(name: str) -> Any:
        if name not in METADATA:
            raise importlib.metadata.PackageNotFoundError(name)
        return SimpleNamespace(name=name, requires=METADATA[name])

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)


def closure(name: str, extras: list[str], skip: tuple[str, ...] = ()) -> set[str]:
    return {d.name for d in linkage.distribution_closure(name, skip, extras)}


def test_a_dependencys_extras_are_followed_only_when_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_metadata(monkeypatch)
    # torch asks networkx for no extra: pandas (and numba's TBB layer under it) stay out.
    assert closure("torch", []) == {"torch", "networkx", "filelock"}
    assert closure("pandas", ["performance"]) == {"pandas", "numpy", "numba"}


def test_the_images_own_extras_are_followed_and_theirs_in_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_metadata(monkeypatch)
    plain = {"jax", "jaxlib", "ml-dtypes", "numpy"}
    assert closure("jax", []) == plain
    # jax[cuda13] -> jax-cuda13-plugin[with-cuda] -> nvidia-cublas; not the cuda12 plugin.
    assert closure("jax", ["cuda13"]) == plain | {"jax-cuda13-plugin", "jax-cuda13-pjrt",
                                                  "nvidia-cublas"}
    assert closure("jax", ["cuda13"], ("nvidia-cublas",)) == plain | {"jax-cuda13-plugin",
                                                                      "jax-cuda13-pjrt"}


def test_requires_dist_lines_parse_into_name_extras_and_marker_extras() -> None:
    parsed = linkage.parse_requirement(
        'jax-cuda13-plugin[with_cuda, Extra.Two]<=0.8.1 ; python_version >= "3.11" '
        'and extra == "CUDA13"')
    assert parsed == linkage.Requirement("jax-cuda13-plugin", ("with-cuda", "extra-two"),
                                         frozenset({"cuda13"}))
    either = linkage.parse_requirement("numba (>=0.59); extra == 'a' or extra == 'b'")
    assert either is not None and either.only_for == {"a", "b"} and either.extras == ()
    plain = linkage.parse_requirement('nvidia-nccl-cu13; sys_platform == "linux"')
    assert plain is not None and plain.only_for == frozenset()
    assert linkage.parse_requirement("") is None


def test_the_check_follows_the_extras_the_image_asked_for(monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    asked: list[tuple[str, list[str]]] = []

    def closure_of(name: str, skip: object, extras: list[str]) -> list[Any]:
        asked.append((name, extras))
        return []

    monkeypatch.setattr(linkage, "distribution_closure", closure_of)
    monkeypatch.setattr(linkage, "shared_objects", lambda dists: [])
    env = RunEnv({"framework": "jax", "distribution": "jax", "extras": ["cuda13"]}, "none",
                 False, False)
    assert run_check(CHECK, env).status == "skip"
    assert asked == [("jax", ["cuda13"])]
