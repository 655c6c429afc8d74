"""GPU evidence through NVML (``libnvidia-ml.so.1``, mounted by the NVIDIA container toolkit).

Stdlib ctypes only, like the rest of the runner: name, driver, clocks, temperature and power of
every GPU, read at the start and end of a run and around every benchmark. Without NVML the
snapshot is empty and says why; evidence is never invented.
"""

from __future__ import annotations

import ctypes
import glob
from typing import Any

LIBRARY = "libnvidia-ml.so.1"
_TEXT = 96
_GPU_TEMPERATURE = 0  # NVML_TEMPERATURE_GPU
_CLOCK_SM, _CLOCK_MEM = 1, 2  # nvmlClockType_t


class NvmlError(Exception):
    pass


def _call(lib: ctypes.CDLL, name: str, *args: Any) -> None:
    code = getattr(lib, name)(*args)
    if code != 0:
        raise NvmlError(f"{name} returned NVML status {code}")


def snapshot() -> dict[str, Any]:
    """{'driver': ..., 'gpus': [...]} or {'error': why}; one NVML session per call."""
    try:
        lib = ctypes.CDLL(LIBRARY)
        _call(lib, "nvmlInit_v2")
    except (OSError, AttributeError, NvmlError) as exc:
        return {"error": f"NVML unavailable: {exc}"}
    try:
        return {"driver": _text(lib, "nvmlSystemGetDriverVersion"), "gpus": _devices(lib)}
    except (AttributeError, NvmlError) as exc:
        return {"error": str(exc)}
    finally:
        lib.nvmlShutdown()


def _text(lib: ctypes.CDLL, name: str, *args: Any) -> str:
    buffer = ctypes.create_string_buffer(_TEXT)
    _call(lib, name, *args, buffer, ctypes.c_uint(_TEXT))
    return buffer.value.decode("utf-8", "replace")


def _devices(lib: ctypes.CDLL) -> list[dict[str, Any]]:
    count = ctypes.c_uint()
    _call(lib, "nvmlDeviceGetCount_v2", ctypes.byref(count))
    devices = []
    for index in range(count.value):
        handle = ctypes.c_void_p()
        _call(lib, "nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
        devices.append(_device(lib, index, handle))
    return devices


def _device(lib: ctypes.CDLL, index: int, handle: ctypes.c_void_p) -> dict[str, Any]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _call(lib, "nvmlDeviceGetCudaComputeCapability", handle, ctypes.byref(major),
          ctypes.byref(minor))
    return {
        "index": index,
        "name": _text(lib, "nvmlDeviceGetName", handle),
        "compute_capability": f"{major.value}.{minor.value}",
        "temperature_c": _uint(lib, "nvmlDeviceGetTemperature", handle, _GPU_TEMPERATURE),
        "sm_clock_mhz": _uint(lib, "nvmlDeviceGetClockInfo", handle, _CLOCK_SM),
        "mem_clock_mhz": _uint(lib, "nvmlDeviceGetClockInfo", handle, _CLOCK_MEM),
        "power_w": _watts(lib, handle),
    }


def _uint(lib: ctypes.CDLL, name: str, handle: ctypes.c_void_p, *args: int) -> int | None:
    value = ctypes.c_uint()
    try:
        _call(lib, name, handle, *(ctypes.c_int(a) for a in args), ctypes.byref(value))
    except NvmlError:  # a query this GPU does not support: leave it out, don't guess
        return None
    return value.value


def _watts(lib: ctypes.CDLL, handle: ctypes.c_void_p) -> float | None:
    milliwatts = _uint(lib, "nvmlDeviceGetPowerUsage", handle)
    return None if milliwatts is None else milliwatts / 1000


def device_nodes() -> int:
    """GPUs this process was given: one /dev/nvidiaN node each (host, or container --gpus)."""
    return len([node for node in glob.glob("/dev/nvidia[0-9]*") if node[11:].isdigit()])


def driver_branch(driver: str | None) -> str | None:
    """'580.95.05' -> '580': baselines are kept per driver branch."""
    return driver.split(".")[0] if driver else None
