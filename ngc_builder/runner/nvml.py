"""GPU evidence through NVML (``libnvidia-ml.so.1``, mounted by the NVIDIA container toolkit).

Stdlib ctypes only, like the rest of the runner: name, PCI bus id, driver, clocks,
temperature and power of every GPU, read at the start and end of a run and around every
benchmark. Without NVML the snapshot is empty and says why; evidence is never invented.
NVML lists every GPU of the machine in PCI order, whatever CUDA_VISIBLE_DEVICES says.
"""

from __future__ import annotations

import ctypes
import glob
import re
from collections.abc import Callable
from typing import Any

LIBRARY = "libnvidia-ml.so.1"
_TEXT = 96
_GPU_TEMPERATURE = 0  # NVML_TEMPERATURE_GPU
_CLOCK_SM, _CLOCK_MEM = 1, 2  # nvmlClockType_t


_BUS_ID = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)")


class NvmlError(Exception):
    pass


class _PciInfo(ctypes.Structure):
    # nvmlPciInfo_t as nvml.h lays it out; only busId is read, the fields before it place it.
    _fields_ = [("bus_id_legacy", ctypes.c_char * 16), ("domain", ctypes.c_uint),
                ("bus", ctypes.c_uint), ("device", ctypes.c_uint),
                ("pci_device_id", ctypes.c_uint), ("pci_subsystem_id", ctypes.c_uint),
                ("bus_id", ctypes.c_char * 32)]


def _call(lib: ctypes.CDLL, name: str, *args: Any) -> None:
    code = getattr(lib, name)(*args)
    if code != 0:
        raise NvmlError(f"{name} returned NVML status {code}")


def snapshot() -> dict[str, Any]:
    """{'driver': ..., 'gpus': [...]} or {'error': why}; one NVML session per call."""
    return _session(lambda lib: {"driver": _text(lib, "nvmlSystemGetDriverVersion"),
                                 "gpus": _devices(lib)})


def uuids() -> list[str] | None:
    """Every GPU's UUID, in NVML order; None without NVML. Kept out of the snapshot, which is
    published evidence: a UUID names one physical board."""
    found = _session(lambda lib: {"uuids": [_text(lib, "nvmlDeviceGetUUID", handle)
                                            for handle in _handles(lib)]})
    return found.get("uuids")


def _session(read: Callable[[ctypes.CDLL], dict[str, Any]]) -> dict[str, Any]:
    try:
        lib = ctypes.CDLL(LIBRARY)
        _call(lib, "nvmlInit_v2")
    except (OSError, AttributeError, NvmlError) as exc:
        return {"error": f"NVML unavailable: {exc}"}
    try:
        return read(lib)
    except (AttributeError, NvmlError) as exc:
        return {"error": str(exc)}
    finally:
        lib.nvmlShutdown()


def _text(lib: ctypes.CDLL, name: str, *args: Any) -> str:
    buffer = ctypes.create_string_buffer(_TEXT)
    _call(lib, name, *args, buffer, ctypes.c_uint(_TEXT))
    return buffer.value.decode("utf-8", "replace")


def _handles(lib: ctypes.CDLL) -> list[ctypes.c_void_p]:
    count = ctypes.c_uint()
    _call(lib, "nvmlDeviceGetCount_v2", ctypes.byref(count))
    handles = []
    for index in range(count.value):
        handle = ctypes.c_void_p()
        _call(lib, "nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(handle))
        handles.append(handle)
    return handles


def _devices(lib: ctypes.CDLL) -> list[dict[str, Any]]:
    return [_device(lib, index, handle) for index, handle in enumerate(_handles(lib))]


def _device(lib: ctypes.CDLL, index: int, handle: ctypes.c_void_p) -> dict[str, Any]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _call(lib, "nvmlDeviceGetCudaComputeCapability", handle, ctypes.byref(major),
          ctypes.byref(minor))
    return {
        "index": index,
        "name": _text(lib, "nvmlDeviceGetName", handle),
        "pci_bus_id": _bus_id(lib, handle),
        "compute_capability": f"{major.value}.{minor.value}",
        "temperature_c": _uint(lib, "nvmlDeviceGetTemperature", handle, _GPU_TEMPERATURE),
        "sm_clock_mhz": _uint(lib, "nvmlDeviceGetClockInfo", handle, _CLOCK_SM),
        "mem_clock_mhz": _uint(lib, "nvmlDeviceGetClockInfo", handle, _CLOCK_MEM),
        "power_w": _watts(lib, handle),
    }


def _bus_id(lib: ctypes.CDLL, handle: ctypes.c_void_p) -> str | None:
    """Where the GPU sits on the PCI bus: how CUDA's device 0 is found among NVML's GPUs."""
    info = _PciInfo()
    try:
        _call(lib, "nvmlDeviceGetPciInfo_v3", handle, ctypes.byref(info))
    except (AttributeError, NvmlError):  # a driver without the call: leave it out, don't guess
        return None
    return canonical_bus_id(info.bus_id.decode("ascii", "replace"))


def canonical_bus_id(text: str) -> str | None:
    """One spelling of a PCI address: NVML writes an 8-digit domain ('00000000:3B:00.0'),
    CUDA a 4-digit one ('0000:3B:00.0'); None for anything else."""
    match = _BUS_ID.fullmatch(text.strip())
    if match is None:
        return None
    domain, bus, device, function = (int(part, 16) for part in match.groups())
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function:x}"


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
