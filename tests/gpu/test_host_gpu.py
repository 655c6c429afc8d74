"""T1-T3 on a real NVIDIA GPU with nothing but the node (`make test-gpu`): the GPU-node command
(`python -m ngc_builder.commands.gpunode`) run by this interpreter, which is the node's own
Python with its PyTorch, JAX and nvidia-ml-py. Nothing here imports ngc-builder's own
dependencies: GPU nodes have none of them. Skipped, with the reason, where no GPU is present.
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
PREFIX = {"pytorch": "torch", "jax": "jax"}
# The one T3 check a single GPU cannot run: bus bandwidth needs two ranks on two GPUs.
NEEDS_TWO_GPUS = {"torch.bench.allreduce_busbw"}


def node(tmp_path: Path, *args: str, **env: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "ngc_builder.commands.gpunode", "--json",
                           "--out", str(tmp_path), *args], capture_output=True, text=True,
                          check=False, cwd=REPO, env={**os.environ, "NGC_GPU": "required", **env},
                          timeout=1800)
    assert done.stdout, done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout)


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["id"]: check for check in report["checks"]}


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    return node(tmp_path_factory.mktemp("node"), "--framework", "pytorch", "--framework", "jax")


def test_preflight_passes_on_this_host(full_run: tuple[int, dict[str, Any]]) -> None:
    checks = full_run[1]["preflight"]["checks"]
    assert {c["status"] for c in checks} == {"pass"}, checks


def test_a_driver_minimum_above_this_driver_is_a_host_defect() -> None:
    from ngc_builder.validate.preflight import preflight_report

    driver = by_id(preflight_report("999.0").to_dict())["t1.driver"]
    assert driver["status"] == "fail" and driver["fault"] == "host" and "999.0" in driver["message"]


@pytest.mark.parametrize("framework", ["pytorch", "jax"])
def test_t0_to_t3_pass_in_host_mode(framework: str,
                                    full_run: tuple[int, dict[str, Any]]) -> None:
    run = full_run[1]["frameworks"][framework]
    checks = by_id(run)
    assert run["interpreter"], f"no interpreter here imports {framework}"
    assert run["verdict"] == "pass", [c for c in checks.values() if c["status"] != "pass"]
    gpu_checks = [c for c in checks.values() if c["id"].startswith(f"{PREFIX[framework]}.gpu.")]
    assert gpu_checks and all(c["status"] == "pass" for c in gpu_checks)
    assert run["environment"]["gpus_start"]["gpus"][0]["name"]


DEVEL_CHECKS = {"pytorch": ["torch.devel.cuda_extension", "torch.devel.cuda_extension_run"],
                "jax": ["jax.devel.ffi_cpu", "jax.devel.ffi_cuda_build", "jax.devel.ffi_gpu"]}


@pytest.mark.parametrize("framework", ["pytorch", "jax"])
def test_a_cuda_extension_builds_and_runs_on_the_gpu(framework: str,
                                                     full_run: tuple[int, dict[str, Any]]) -> None:
    """What a devel image's validation does, with the node's CUDA toolkit: nvcc builds a
    kernel with SASS for every release target, the framework's extension loads and runs."""
    checks = by_id(full_run[1]["frameworks"][framework])
    if checks["devel.toolchain"]["status"] == "skip":
        pytest.skip(checks["devel.toolchain"]["message"])
    for check_id in ["devel.toolchain", "devel.nvcc_targets", "devel.nvcc_kernel_run",
                     *DEVEL_CHECKS[framework]]:
        assert checks[check_id]["status"] == "pass", checks[check_id]


@pytest.mark.parametrize("framework", ["pytorch", "jax"])
def test_every_benchmark_was_held_to_a_floor(framework: str,
                                             full_run: tuple[int, dict[str, Any]]) -> None:
    """A GPU missing from baselines/gpu.json would measure without judging: not here."""
    benchmarks = [c for c in full_run[1]["frameworks"][framework]["checks"]
                  if c["tier"] == "T3" and c["id"] not in NEEDS_TWO_GPUS]
    assert benchmarks
    for check in benchmarks:
        measured = check["evidence"]["measurement"]
        assert check["status"] == "pass", check["message"]
        assert measured["floor"] is not None and measured["median"] >= measured["threshold"]
        assert check["evidence"]["gpu_before"]["gpus"]


def test_a_hidden_gpu_is_a_cpu_fallback_of_this_environment(tmp_path: Path) -> None:
    code, document = node(tmp_path, "--framework", "pytorch", CUDA_VISIBLE_DEVICES="")
    assert code == 1
    tensor_op = by_id(document["frameworks"]["pytorch"])["torch.gpu.tensor_op"]
    assert tensor_op["status"] == "fail" and "CPU fallback" in tensor_op["message"]
    assert tensor_op["fault"] == "host"  # the environment hid the GPU, not an image


def test_a_drop_below_the_baseline_fails_with_both_numbers(tmp_path: Path) -> None:
    """Also: a GPU with no floor measures but is not judged (skip), and a job given a subset of
    the GPUs (CUDA_VISIBLE_DEVICES) is counted by what it was given."""
    from ngc_builder.runner import nvml

    gpu = nvml.snapshot()["gpus"][0]["name"]
    branch = nvml.driver_branch(nvml.snapshot()["driver"])
    book = tmp_path / "gpu.json"
    book.write_text(json.dumps({"entries": [{
        "release": "26.10", "gpu": gpu, "driver_branch": branch, "lineage": "host-pytorch",
        "metric": "memcpy_d2d_gbps", "unit": "GB/s", "median": 1e7, "samples": [1e7] * 5}]}))
    code, document = node(tmp_path, "--framework", "pytorch", "--baselines", str(book),
                          CUDA_VISIBLE_DEVICES="0")
    assert code == 1
    checks = by_id(document["frameworks"]["pytorch"])
    copy = checks["torch.bench.memcpy_d2d"]
    assert copy["status"] == "fail"
    assert "< threshold 9.3e+06" in copy["message"] and "baseline 1e+07" in copy["message"]
    gemm = checks["torch.bench.gemm_bf16"]
    assert gemm["status"] == "skip" and "no floor or baseline" in gemm["message"]
    assert checks["gpu.device_count"]["status"] == "pass"
    assert checks["torch.gpu.device_count"]["status"] == "pass"
    environment = document["frameworks"]["pytorch"]["environment"]
    assert environment["host_gpus"] == 1
    assert environment["host_gpus_source"].startswith("CUDA_VISIBLE_DEVICES='0'")
    # CUDA device 0 was matched to its NVML entry by PCI bus id, not assumed.
    assert "NVML index" in environment["measured_gpu"]["source"]
