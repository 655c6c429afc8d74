"""Device count and /dev/shm checks, NVML evidence without a GPU, with fakes."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from ngc_builder.runner import core, gpu, nvml
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
COUNT = Check("gpu.device_count", "T2", True, gpu.check_device_count)
SHM = Check("os.shm", "T2", False, core.check_shm)


def gpu_env(host_gpus: int) -> RunEnv:
    return RunEnv({}, "required", True, True, host_gpus)


def test_device_count_must_equal_the_host_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [("NVIDIA H100 80GB HBM3", "9.0")] * 2)
    assert run_check(COUNT, gpu_env(2)).status == "pass"
    fewer = run_check(COUNT, gpu_env(8))
    assert fewer.status == "fail" and fewer.fault == "host"
    assert "CUDA sees 2 GPU(s), the host passed 8" in fewer.message


def test_device_count_fails_when_the_driver_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> list[tuple[str, str]]:
        raise RuntimeError("cuInit returned CUDA driver status 100")

    monkeypatch.setattr(gpu, "cuda_devices", refuse)
    result = run_check(COUNT, gpu_env(1))
    assert result.status == "fail" and "status 100" in result.message


def test_device_count_is_skipped_without_gpu() -> None:
    assert run_check(COUNT, RunEnv({}, "none", False, False)).status == "skip"


def fake_statvfs(megabytes: int) -> object:
    return lambda path: SimpleNamespace(f_frsize=4096, f_blocks=megabytes * 256)


def test_shm_needs_a_gigabyte(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "statvfs", fake_statvfs(64))
    small = run_check(SHM, RunEnv({}, "none", False, False))
    assert small.status == "fail" and small.fault == "host" and "--shm-size" in small.message
    monkeypatch.setattr(os, "statvfs", fake_statvfs(2048))
    assert run_check(SHM, RunEnv({}, "none", False, False)).status == "pass"


def test_nvml_snapshot_says_why_it_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml, "LIBRARY", "libnvidia-ml-does-not-exist.so.1")
    assert "NVML unavailable" in nvml.snapshot()["error"]


def test_driver_branch() -> None:
    assert nvml.driver_branch("580.95.05") == "580"
    assert nvml.driver_branch(None) is None
