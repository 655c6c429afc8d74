"""This machine's facts for check-host, read through fakes handed in (no monkeypatching):
NVML, `docker info`, the toolkit's binaries, /dev/shm."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from ngc_builder.validate.hostfacts import (
    DriverFacts,
    Gpu,
    HostProbes,
    driver_facts,
    engine_facts,
    gather,
    gpus_in_info,
    shm_size,
    toolkit_binary,
)

pytestmark = pytest.mark.unit


class NVMLError_LibraryNotFound(Exception):
    pass


@dataclass
class FakeNvml:
    driver: bytes = b"580.95.05"
    gpus: list[tuple[str, tuple[int, int]]] = field(
        default_factory=lambda: [("NVIDIA H100 80GB HBM3", (9, 0)), ("NVIDIA A10", (8, 6))])
    init_error: Exception | None = None
    shut_down: bool = False

    def nvmlInit(self) -> None:
        if self.init_error:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.shut_down = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return self.driver

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetName(self, handle: int) -> str:
        return self.gpus[handle][0]

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        return self.gpus[handle][1]


def test_the_driver_and_every_gpu_through_nvml() -> None:
    nvml = FakeNvml()
    facts = driver_facts(nvml)
    assert facts == DriverFacts("580.95.05", (Gpu(0, "NVIDIA H100 80GB HBM3", (9, 0)),
                                              Gpu(1, "NVIDIA A10", (8, 6))))
    assert nvml.shut_down


def test_nvml_that_does_not_start_is_kept_as_the_reason() -> None:
    nvml = FakeNvml(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    facts = driver_facts(nvml)
    assert facts.version is None and facts.gpus == ()
    assert facts.error == "NVMLError_LibraryNotFound: NVML Shared Library Not Found"


def test_no_pynvml_says_how_to_get_it() -> None:
    assert "pip install 'ngc-builder[gpu]'" in str(driver_facts(None).error)


@dataclass
class FakeInfo:
    answer: dict[str, Any] | None

    def info(self) -> dict[str, Any]:
        if self.answer is None:
            raise docker.errors.APIError("500 Server Error")
        return self.answer


@pytest.mark.parametrize(("answer", "gpu_runtime"), [
    ({"Runtimes": {"runc": {}, "nvidia": {"path": "nvidia-container-runtime"}}}, True),
    ({"Runtimes": {"runc": {}}, "DiscoveredDevices": [{"Source": "cdi",
                                                       "ID": "nvidia.com/gpu=all"}]}, True),
    ({"Runtimes": {"runc": {}}}, False),
])
def test_docker_info_shows_the_nvidia_runtime_or_cdi_gpus(answer: dict[str, Any],
                                                          gpu_runtime: bool) -> None:
    facts = engine_facts(FakeInfo(answer), "unix:///run/docker.sock")
    assert facts.error is None and facts.gpu_runtime is gpu_runtime


def test_an_engine_that_fails_or_is_absent_is_a_reason_not_an_error() -> None:
    assert "docker info` failed" in str(engine_facts(FakeInfo(None), "x").error)
    assert engine_facts(None, "x", "it does not answer").error == "it does not answer"


def test_the_first_toolkit_binary_on_path() -> None:
    on_path = {"nvidia-ctk": "/usr/bin/nvidia-ctk"}
    assert toolkit_binary(on_path.get) == "/usr/bin/nvidia-ctk"
    assert toolkit_binary(lambda name: None) is None


def fake_statvfs(blocks: int) -> Any:
    def statvfs(path: Path) -> os.statvfs_result:
        if blocks < 0:
            raise FileNotFoundError(path)
        return os.statvfs_result((4096, 4096, blocks, blocks, blocks, 0, 0, 0, 0, 255))
    return statvfs


def test_shm_size_from_statvfs_and_none_when_missing() -> None:
    assert shm_size(Path("/dev/shm"), fake_statvfs(16384)) == 64 << 20
    assert shm_size(Path("/dev/shm"), fake_statvfs(-1)) is None


def test_gather_reads_every_source_handed_in() -> None:
    probes = HostProbes(FakeNvml(), FakeInfo({"Runtimes": {"nvidia": {}}}), "unix://x",
                        which={"nvidia-container-runtime": "/usr/bin/ncr"}.get,
                        statvfs=fake_statvfs(262144))
    facts = gather(probes)
    assert facts.driver.version == "580.95.05" and facts.engine.gpu_runtime
    assert facts.toolkit == "/usr/bin/ncr" and facts.shm_bytes == 1 << 30


@pytest.mark.parametrize(("info", "expected"), [
    ({"Runtimes": {"runc": {"path": "runc"}}, "DefaultRuntime": "runc"}, False),
    ({"Runtimes": {"runc": {}, "nvidia": {"path": "nvidia-container-runtime"}}}, True),
    ({"Runtimes": {"runc": {}}, "DefaultRuntime": "nvidia"}, True),
    ({"DiscoveredDevices": [{"Source": "cdi", "ID": "nvidia.com/gpu=0"}]}, True),
    ({"DiscoveredDevices": [{"Source": "cdi", "ID": "vendor.example/fpga=0"}]}, False),
])
def test_gpus_are_read_from_the_engines_info(info: dict[str, Any], expected: bool) -> None:
    assert gpus_in_info(info) is expected
