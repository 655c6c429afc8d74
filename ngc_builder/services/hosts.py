"""Build hosts as the site file lists them, as engines: one `DockerEngine` per host, and
whether each host can pass GPUs into containers, asked of that host's engine (not of the
machine the CLI runs on)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import docker.errors
import requests

from ngc_builder.errors import EngineError
from ngc_builder.services.engine import DockerEngine

GPU_DEVICE_PREFIX = "nvidia.com/gpu"  # CDI's name for NVIDIA GPUs (`docker info` 28+)


class EngineInfo(Protocol):
    """An engine that answers `docker info`."""

    def info(self) -> dict[str, Any]: ...


def open_engine(name: str, url: str, tls: Path | None, timeout: int = 900) -> DockerEngine:
    """The engine of one build host, once it has answered (EngineError naming the host)."""
    engine = DockerEngine(timeout, url=url, tls=tls, name=name)
    engine.ping()
    return engine


def gpus_in_info(info: Mapping[str, Any]) -> bool:
    """Whether `docker info` shows a way to hand GPUs to containers: the NVIDIA runtime
    registered (`Runtimes`, or as the default), or GPUs among the CDI devices it discovered."""
    runtimes = info.get("Runtimes") or {}
    if "nvidia" in runtimes or info.get("DefaultRuntime") == "nvidia":
        return True
    devices = info.get("DiscoveredDevices") or []
    return any(str(device.get("ID", "")).startswith(GPU_DEVICE_PREFIX) for device in devices)


def host_gpu_mode(engine: EngineInfo, wanted: str, name: str) -> str:
    """'required' or 'none' for one build host: its site entry's `gpu:` unless that is auto,
    else what its engine's `docker info` shows."""
    if wanted in ("required", "none"):
        return wanted
    try:
        info = engine.info()
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise EngineError(f"build host {name}: `docker info` failed ({exc})") from None
    return "required" if gpus_in_info(info) else "none"
