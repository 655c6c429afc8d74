"""The GPUs a run was given (CUDA_VISIBLE_DEVICES on a host, device nodes in an image) and
which of them CUDA device 0 is, with fakes for NVML and the CUDA driver."""

from __future__ import annotations

from typing import Any

import pytest

from ngc_builder.runner import gpu, nvml, run, visibility
from ngc_builder.runner.suite import Check, run_check
from ngc_builder.runner.visibility import expected_gpus, visible_count

pytestmark = pytest.mark.unit
UUIDS = ["GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "GPU-8932aaaa-0000-0000-0000-000000000000",
         "GPU-1234abcd-0000-0000-0000-000000000000"]
H100 = "NVIDIA H100 80GB HBM3"
EIGHT = {"driver": "580.95.05",
         "gpus": [{"name": H100, "index": i, "pci_bus_id": f"0000:{i + 1:02x}:00.0"}
                  for i in range(8)]}
COUNT = Check("gpu.device_count", "T2", True, gpu.check_device_count)


@pytest.mark.parametrize(("value", "count"), [
    ("1", 1), ("0,1,2,3", 4), ("", 0), ("  ", 0), ("-1", 0),
    ("0,2,-1,1", 2),  # CUDA's own example: an invalid entry ends the list
    ("2,1", 2), ("7", 1), ("8", 0), ("0,8,1", 1), ("0, 1", 2), ("1gpu", 1), ("+0", 1),
    ("0,0", 0),  # a repeated entry: no GPU at all
    ("0,GPU-1234", 1),  # the list keeps to the kind of its first entry
])
def test_indices_count_as_cuda_enumerates_them(value: str, count: int) -> None:
    assert visible_count(value, 8) == count


def test_uuid_prefixes_must_name_exactly_one_gpu() -> None:
    assert visible_count("GPU-1234abcd,GPU-8932f", 3, UUIDS) == 2
    assert visible_count("GPU-8932,GPU-1234", 3, UUIDS) == 0  # ambiguous prefix: invalid
    assert visible_count("GPU-1234,GPU-ffff", 3, UUIDS) == 1  # unknown GPU ends the list
    assert visible_count("GPU-1234,GPU-1234abcd", 3, UUIDS) == 0  # the same GPU twice
    assert visible_count("GPU-1234,GPU-ffff", 3, None) == 2  # without NVML: taken as given
    assert visible_count("GPU-1234ABCD", 3, UUIDS) == 1  # the hex digits in either case
    assert visible_count("gpu-1234abcd", 3, UUIDS) == 0  # but not the prefix


def test_cuda_enumerates_one_mig_device_per_process() -> None:
    assert visible_count("MIG-4f2c81f0-aaaa,MIG-4f2c81f0-bbbb", 1) == 1


def test_on_a_host_the_schedulers_subset_is_what_cuda_must_show() -> None:
    count, source = expected_gpus(True, {"CUDA_VISIBLE_DEVICES": "1"}, 8, EIGHT)
    assert count == 1
    assert source == "CUDA_VISIBLE_DEVICES='1' of this environment (8 GPUs in the machine)"
    assert expected_gpus(True, {"CUDA_VISIBLE_DEVICES": ""}, 8, EIGHT)[0] == 0
    assert expected_gpus(True, {}, 8, EIGHT) == (8, "8 device nodes /dev/nvidiaN")


def test_in_an_image_the_device_nodes_count_whatever_the_image_sets() -> None:
    hidden = {"CUDA_VISIBLE_DEVICES": "0"}
    assert expected_gpus(False, hidden, 8, EIGHT) == (8, "8 device nodes /dev/nvidiaN")
    passed = {**hidden, "NGC_HOST_GPUS": "4"}
    assert expected_gpus(False, passed, 8, EIGHT) == (4, "NGC_HOST_GPUS=4")


def test_uuids_are_asked_of_nvml_only_for_a_uuid_list() -> None:
    asked: list[bool] = []

    def uuids() -> list[str]:
        asked.append(True)
        return UUIDS

    environ = {"CUDA_VISIBLE_DEVICES": "GPU-1234ab"}
    assert expected_gpus(True, environ, 3, {}, uuids)[0] == 1 and asked
    asked.clear()
    assert expected_gpus(True, {"CUDA_VISIBLE_DEVICES": "0"}, 3, {}, uuids)[0] == 1
    assert not asked


def test_bus_ids_compare_whatever_their_spelling() -> None:
    assert nvml.canonical_bus_id("00000000:3B:00.0") == "0000:3b:00.0"
    assert nvml.canonical_bus_id("0000:3b:00.0") == "0000:3b:00.0"
    assert nvml.canonical_bus_id("not a bus id") is None


def test_device_zero_is_found_by_pci_bus_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "device_zero_bus_id", lambda: "00000000:05:00.0")
    assert visibility.device_zero(EIGHT).nvml_index == 4
    monkeypatch.setattr(gpu, "device_zero_bus_id", lambda: "0000:99:00.0")
    missing = visibility.device_zero(EIGHT)
    assert missing.nvml_index is None and "none of NVML's GPUs" in missing.source


def test_device_zero_says_why_the_driver_could_not_tell(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> str:
        raise RuntimeError("cuInit returned CUDA driver status 100")

    monkeypatch.setattr(gpu, "device_zero_bus_id", refuse)
    zero = visibility.device_zero(EIGHT)
    assert zero.nvml_index is None and "status 100" in zero.source


def host_node(monkeypatch: pytest.MonkeyPatch, visible: str | None) -> None:
    """A Slurm node: eight /dev/nvidiaN, the job's GPUs in CUDA_VISIBLE_DEVICES."""
    monkeypatch.setattr(nvml, "device_nodes", lambda: 8)
    monkeypatch.setattr(nvml, "snapshot", lambda: EIGHT)
    monkeypatch.setattr(gpu, "device_zero_bus_id", lambda: "0000:02:00.0")
    monkeypatch.delenv("NGC_HOST_GPUS", raising=False)
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)


def test_a_job_given_one_of_eight_gpus_passes_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    host_node(monkeypatch, "1")
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [(H100, "9.0")])
    env = run.run_env({"host_mode": True}, "required", True)
    assert (env.host_gpus, env.host_mode, env.visible_devices) == (1, True, "1")
    assert env.device_zero.nvml_index == 1 and env.gpu_name == H100
    result = run_check(COUNT, env)
    assert result.status == "pass"
    assert result.evidence["host_gpus_source"].startswith("CUDA_VISIBLE_DEVICES='1'")
    facts: dict[str, Any] = run.environment(env)
    assert facts["host_gpus"] == 1 and facts["cuda_visible_devices"] == "1"
    assert facts["measured_gpu"] == {"name": H100,
                                     "source": "CUDA device 0 is PCI 0000:02:00.0, NVML index 1"}


def test_in_an_image_a_hiding_cuda_visible_devices_is_the_images_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host_node(monkeypatch, "1")
    monkeypatch.setenv("NGC_HOST_GPUS", "8")
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [(H100, "9.0")])
    env = run.run_env({"image": "pytorch"}, "required", True)
    result = run_check(COUNT, env)
    assert (result.status, result.fault) == ("fail", "image")
    assert result.message == ("CUDA sees 1 GPU(s), the host passed 8 (expected from "
                              "NGC_HOST_GPUS=8; CUDA_VISIBLE_DEVICES='1' is set in the image)")


def test_a_host_count_mismatch_is_the_hosts_and_names_its_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host_node(monkeypatch, None)
    monkeypatch.setattr(gpu, "cuda_devices", lambda: [(H100, "9.0")] * 7)
    result = run_check(COUNT, run.run_env({"host_mode": True}, "required", True))
    assert (result.status, result.fault) == ("fail", "host")
    assert result.message == ("CUDA sees 7 GPU(s), the host passed 8 "
                              "(expected from 8 device nodes /dev/nvidiaN)")
