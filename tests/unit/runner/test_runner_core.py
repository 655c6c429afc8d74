from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ngc_builder.runner import core
from ngc_builder.runner.core import wheel_problems
from ngc_builder.runner.run import build_suite
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
STACK = {"nvidia-cuda-runtime": "13.2.86", "nvidia-cublas": "13.4.1.3", "cuda-toolkit": "13.2.2"}
GOOD = [
    ("nvidia-cuda-runtime", "13.2.86"),
    ("nvidia_cublas", "13.4.1.3"),
    ("cuda-toolkit", "13.2.2"),
    ("jax", "0.12.0"),
]


def test_the_expected_stack_passes() -> None:
    assert wheel_problems(STACK, GOOD) == []


def test_extra_nvidia_distribution_is_a_second_copy() -> None:
    problems = wheel_problems(STACK, [*GOOD, ("nvidia-cublas-cu12", "12.9.1.4")])
    assert len(problems) == 1
    assert "unexpected nvidia-cublas-cu12 12.9.1.4" in problems[0]


def test_extra_cuda_toolkit_and_duplicates_are_caught() -> None:
    problems = wheel_problems(
        {"nvidia-cublas": "13.4.1.3"},
        [("nvidia-cublas", "13.4.1.3"), ("nvidia-cublas", "13.4.1.3"), ("CUDA_Toolkit", "13.0")],
    )
    assert any("installed 2 times" in p for p in problems)
    assert any(p.startswith("unexpected cuda-toolkit 13.0") for p in problems)


def test_wrong_and_missing_versions() -> None:
    problems = wheel_problems(
        STACK, [("nvidia-cuda-runtime", "13.2.85"), ("nvidia-cublas", "13.4.1.3")]
    )
    assert problems == [
        "nvidia-cuda-runtime is 13.2.85, expected 13.2.86",
        "cuda-toolkit is not installed (expected 13.2.2)",
    ]


def test_nvml_bindings_are_not_cuda_libraries() -> None:
    assert wheel_problems(STACK, [*GOOD, ("nvidia-ml-py", "13.580.82")]) == []


def test_check_wheels_reads_installed_distributions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        core, "installed_distributions", lambda: [*GOOD, ("nvidia-nccl-cu13", "2.30.7")]
    )
    result = run_check(
        Check("stack.wheels", "T0", False, core.check_wheels),
        RunEnv({"wheels": STACK}, "none", False, False),
    )
    assert result.status == "fail" and result.fault == "image"
    assert "nvidia-nccl-cu13" in result.message
    assert result.evidence["problems"]


@pytest.mark.parametrize(("installed", "status"), [("0.9.0.20", "pass"), ("0.9.0.21", "fail")])
def test_an_nvidia_addon_the_row_asked_for_is_expected_at_its_version(
        monkeypatch: pytest.MonkeyPatch, installed: str, status: str) -> None:
    """An `nvidia-*` wheel the manifest's `addons` names is no second CUDA copy; any other, or
    the add-on at another version, still is a finding."""
    monkeypatch.setattr(core, "installed_distributions",
                        lambda: [*GOOD, ("nvidia-nvimgcodec-cu13", installed)])
    expect = {"wheels": STACK, "addons": {"nvidia-nvimgcodec-cu13": "0.9.0.20"}}
    result = run_check(Check("stack.wheels", "T0", False, core.check_wheels),
                       RunEnv(expect, "none", False, False))
    assert result.status == status, result.message
    without = run_check(Check("stack.wheels", "T0", False, core.check_wheels),
                        RunEnv({"wheels": STACK}, "none", False, False))
    assert without.status == "fail" and "nvidia-nvimgcodec-cu13" in without.message


def test_python_version() -> None:
    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    check = Check("python.version", "T0", False, core.check_python)
    assert run_check(check, RunEnv({"python": mine}, "none", False, False)).status == "pass"
    wrong = run_check(check, RunEnv({"python": "2.7"}, "none", False, False))
    assert wrong.status == "fail" and "expected 2.7" in wrong.message


def test_checks_without_expectations_are_not_emitted() -> None:
    assert build_suite({}, Path("/nonexistent")).ids == [
        "pip.check", "os.shm", "image.user", "image.workdir", "gpu.driver", "gpu.device_count"]
    full = build_suite(
        {"python": "3.13", "wheels": {}, "libraries": {"cudart": "13.2"}, "stack": "cu13",
         "cuda": "13.2", "tools": {"tensorboard": "2.21.0"}}, Path("/x")
    )
    assert full.ids == ["python.version", "pip.check", "stack.wheels", "os.shm", "image.user",
                        "image.workdir", "cuda.require", "image.environment", "lib.cudart",
                        "multinode.userspace", "multinode.mpirun", "gpu.driver",
                        "gpu.device_count", "tools.tensorboard"]
    targeted = build_suite({"gpu_targets": ["9.0"]}, Path("/x"))
    assert "cuda.archs" in targeted.ids
