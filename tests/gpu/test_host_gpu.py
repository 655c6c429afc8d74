"""T1-T3 on a real NVIDIA GPU, in host mode (GPU nodes have no Docker): `make test-gpu`.

Each test runs the real CLI against this machine's Python environment (PyTorch, JAX and
nvidia-ml-py installed). Skipped, with the reason, where no NVIDIA device is present.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

HAS_GPU = Path("/dev/nvidiactl").exists()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no GPU: no /dev/nvidiactl")]


def ngc(*args: str, **env: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "ngc_builder", *args, "--json"],
                          capture_output=True, text=True, check=False, cwd=REPO,
                          env={**os.environ, "NGC_GPU": "required", **env}, timeout=900)
    return done.returncode, json.loads(done.stdout)


def host_validate(framework: str, tmp_path: Path, *extra: str, **env: str) -> tuple[int, Any]:
    return ngc("validate", "--host", "--framework", framework, "--out", str(tmp_path), *extra,
               **env)


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["id"]: check for check in report["checks"]}


def test_preflight_passes_on_this_host() -> None:
    code, report = ngc("preflight", "--release", "releases/26.11.yaml")
    assert code == 0, report
    assert {c["status"] for c in report["checks"]} == {"pass"}


def test_a_driver_minimum_above_this_driver_is_a_host_defect() -> None:
    code, report = ngc("preflight", "--min-driver", "999.0")
    assert code == 1
    driver = by_id(report)["t1.driver"]
    assert driver["status"] == "fail" and driver["fault"] == "host" and "999.0" in driver["message"]


@pytest.mark.parametrize("framework", ["pytorch", "jax"])
def test_t0_to_t3_pass_in_host_mode(framework: str, tmp_path: Path) -> None:
    code, report = host_validate(framework, tmp_path)
    checks = by_id(report)
    assert code == 0, [c for c in checks.values() if c["status"] == "fail"]
    prefix = "torch" if framework == "pytorch" else "jax"
    gpu_checks = [c for c in checks.values() if c["id"].startswith(f"{prefix}.gpu.")]
    assert gpu_checks and all(c["status"] == "pass" for c in gpu_checks)
    benchmarks = [c for c in checks.values() if c["tier"] == "T3" and c["status"] == "pass"]
    assert benchmarks
    for check in benchmarks:
        assert check["evidence"]["measurement"]["median"] > 0
        assert check["evidence"]["gpu_before"]["gpus"]
    assert report["environment"]["gpus_start"]["gpus"][0]["name"]


def test_a_hidden_gpu_is_a_cpu_fallback_failure(tmp_path: Path) -> None:
    code, report = host_validate("pytorch", tmp_path, CUDA_VISIBLE_DEVICES="")
    assert code == 1
    checks = by_id(report)
    assert checks["torch.gpu.tensor_op"]["status"] == "fail"
    assert "CPU fallback" in checks["torch.gpu.tensor_op"]["message"]
    # On a host, hiding every GPU is the environment's choice, not the framework's defect.
    assert checks["torch.gpu.tensor_op"]["fault"] == "host"


@pytest.mark.parametrize("framework", ["pytorch", "jax"])
def test_a_schedulers_subset_of_gpus_is_what_is_expected(framework: str, tmp_path: Path) -> None:
    # As Slurm gives a job one GPU of the node: every /dev/nvidiaN stays, CUDA shows one.
    _, report = host_validate(framework, tmp_path, CUDA_VISIBLE_DEVICES="0")
    checks = by_id(report)
    prefix = "torch" if framework == "pytorch" else "jax"
    for check_id in ("gpu.device_count", f"{prefix}.gpu.device_count"):
        assert checks[check_id]["status"] == "pass", checks[check_id]
    assert report["environment"]["host_gpus"] == 1
    assert report["environment"]["host_gpus_source"].startswith("CUDA_VISIBLE_DEVICES='0'")
    # CUDA device 0 was matched to its NVML entry by PCI bus id, not assumed.
    assert "NVML index" in report["environment"]["measured_gpu"]["source"]


def test_a_drop_below_the_baseline_fails_with_both_numbers(tmp_path: Path) -> None:
    import pynvml  # nvidia-ml-py, on every GPU node

    pynvml.nvmlInit()
    try:
        name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
        branch = str(pynvml.nvmlSystemGetDriverVersion()).split(".")[0]
    finally:
        pynvml.nvmlShutdown()
    name = name.decode() if isinstance(name, bytes) else name
    book = tmp_path / "gpu.json"
    book.write_text(json.dumps({"entries": [{
        "release": "26.10", "gpu": name, "driver_branch": branch, "lineage": "host-pytorch",
        "metric": "memcpy_d2d_gbps", "unit": "GB/s", "median": 1e7, "samples": [1e7] * 5}]}))
    code, report = host_validate("pytorch", tmp_path, "--baselines", str(book),
                                 "--record-baseline", "26.11")
    assert code == 1
    copy = by_id(report)["torch.bench.memcpy_d2d"]
    assert copy["status"] == "fail"
    assert "< threshold 9.3e+06" in copy["message"] and "baseline 1e+07" in copy["message"]
