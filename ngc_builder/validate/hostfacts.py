"""What `check-host` needs to know about this machine, read once: the NVIDIA driver and GPUs
(NVML through nvidia-ml-py), the Docker engine's `docker info`, the NVIDIA container toolkit's
binaries, the size of /dev/shm. Every source is handed in (`HostProbes`), so unit tests give
fakes; `real_probes()` gives this machine's. Reading never fails: what cannot be read is kept as
the reason, and the judge (`hostfit`) decides what that means for the image at hand.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import docker.errors
import requests

from ngc_builder.errors import EngineError

SHM = Path("/dev/shm")
# What makes `docker run --gpus` work besides a runtime `docker info` lists: the toolkit's
# prestart hook (Docker looks it up on PATH), its runtime binary, its CLI (which writes CDI specs).
TOOLKIT_BINARIES = ("nvidia-container-runtime-hook", "nvidia-container-runtime", "nvidia-ctk")
NO_PYNVML = "nvidia-ml-py is not installed (pip install 'ngc-builder[gpu]')"
GPU_DEVICE_PREFIX = "nvidia.com/gpu"  # CDI's name for NVIDIA GPUs (`docker info` 28+)


class EngineInfo(Protocol):
    """An engine that answers `docker info`."""

    def info(self) -> dict[str, Any]: ...


def gpus_in_info(info: Mapping[str, Any]) -> bool:
    """Whether `docker info` shows a way to hand GPUs to containers: the NVIDIA runtime
    registered (`Runtimes`, or as the default), or GPUs among the CDI devices it discovered."""
    runtimes = info.get("Runtimes") or {}
    if "nvidia" in runtimes or info.get("DefaultRuntime") == "nvidia":
        return True
    devices = info.get("DiscoveredDevices") or []
    return any(str(device.get("ID", "")).startswith(GPU_DEVICE_PREFIX) for device in devices)


class Nvml(Protocol):
    """The part of pynvml read here."""

    def nvmlInit(self) -> None: ...

    def nvmlShutdown(self) -> None: ...

    def nvmlSystemGetDriverVersion(self) -> str | bytes: ...

    def nvmlDeviceGetCount(self) -> int: ...

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any: ...

    def nvmlDeviceGetName(self, handle: Any) -> str | bytes: ...

    def nvmlDeviceGetCudaComputeCapability(self, handle: Any) -> tuple[int, int]: ...


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    capability: tuple[int, int]


@dataclass(frozen=True)
class DriverFacts:
    version: str | None = None
    gpus: tuple[Gpu, ...] = ()
    error: str | None = None  # why NVML gave no answer


@dataclass(frozen=True)
class EngineFacts:
    where: str
    error: str | None = None  # None: `docker info` answered
    gpu_runtime: bool = False  # the nvidia runtime or CDI GPU devices in `docker info`


@dataclass(frozen=True)
class HostFacts:
    driver: DriverFacts
    engine: EngineFacts
    toolkit: str | None  # the first toolkit binary found on PATH
    shm_bytes: int | None  # None: /dev/shm could not be read


@dataclass(frozen=True)
class HostProbes:
    """Where the facts come from: `nvml` None means nvidia-ml-py is missing (`nvml_missing`
    says so); `engine` None means no engine answered (`engine_error` says why)."""

    nvml: Nvml | None
    engine: EngineInfo | None
    engine_where: str
    engine_error: str = ""
    nvml_missing: str = NO_PYNVML
    which: Callable[[str], str | None] = shutil.which
    shm: Path = SHM
    statvfs: Callable[[Path], os.statvfs_result] = field(default=os.statvfs)


def gather(probes: HostProbes) -> HostFacts:
    return HostFacts(driver_facts(probes.nvml, probes.nvml_missing),
                     engine_facts(probes.engine, probes.engine_where, probes.engine_error),
                     toolkit_binary(probes.which), shm_size(probes.shm, probes.statvfs))


def driver_facts(nvml: Nvml | None, missing: str = NO_PYNVML) -> DriverFacts:
    if nvml is None:
        return DriverFacts(error=missing)
    try:
        nvml.nvmlInit()
    except Exception as exc:  # pynvml raises NVMLError_* subclasses, all plain Exceptions
        return DriverFacts(error=_nvml_error(exc))
    try:
        return DriverFacts(_text(nvml.nvmlSystemGetDriverVersion()), _gpus(nvml))
    except Exception as exc:
        return DriverFacts(error=_nvml_error(exc))
    finally:
        nvml.nvmlShutdown()


def _gpus(nvml: Nvml) -> tuple[Gpu, ...]:
    gpus = []
    for index in range(int(nvml.nvmlDeviceGetCount())):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
        gpus.append(Gpu(index, _text(nvml.nvmlDeviceGetName(handle)), (int(major), int(minor))))
    return tuple(gpus)


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_error(exc: Exception) -> str:
    return f"{exc.__class__.__name__}: {exc}" if str(exc) else exc.__class__.__name__


def engine_facts(engine: EngineInfo | None, where: str, error: str = "") -> EngineFacts:
    if engine is None:
        return EngineFacts(where, error or "no engine answered")
    try:
        info = engine.info()
    except (docker.errors.DockerException, requests.RequestException, EngineError) as exc:
        return EngineFacts(where, f"`docker info` failed: {exc}")
    return EngineFacts(where, None, gpus_in_info(info))


def toolkit_binary(which: Callable[[str], str | None]) -> str | None:
    return next((found for name in TOOLKIT_BINARIES if (found := which(name))), None)


def shm_size(path: Path, statvfs: Callable[[Path], os.statvfs_result] = os.statvfs) -> int | None:
    try:
        stats = statvfs(path)
    except OSError:
        return None
    return stats.f_blocks * stats.f_frsize


def load_pynvml() -> Nvml | None:
    """pynvml, from the optional `gpu` extra, or None."""
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    found: Nvml = pynvml
    return found
