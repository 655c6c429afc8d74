"""GPU mode resolution and the ``gpu.driver`` host check."""

from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path

from .libs import decode_cudart, load
from .report import Fault
from .suite import Check, Context, Suite
from .versions import dotted, release_components

MODES = ("auto", "required", "none")
DEVICE_NODE = Path("/dev/nvidiactl")
DRIVER_LIBRARY = "libcuda.so.1"


def gpu_visible(device_node: Path = DEVICE_NODE) -> bool:
    """The NVIDIA container toolkit mounts both the device nodes and nvidia-smi."""
    return device_node.exists() or shutil.which("nvidia-smi") is not None


def resolve_mode(cli_value: str | None, environ: dict[str, str] | None = None) -> str:
    """``--gpu`` wins, then ``NGC_GPU``, then ``auto``; raises ValueError on an unknown mode."""
    env = os.environ if environ is None else environ
    mode = cli_value or env.get("NGC_GPU") or "auto"
    if mode not in MODES:
        raise ValueError(f"GPU mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def gpu_expected(mode: str, visible: bool) -> bool:
    if mode == "auto":
        return visible
    return mode == "required"


def register(suite: Suite) -> None:
    suite.add(Check("gpu.driver", "T1", True, check_driver))
    suite.add(Check("gpu.device_count", "T2", True, check_device_count, ("gpu.driver",)))


_CC_MAJOR, _CC_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_{MAJOR,MINOR}
_BUS_ID_LENGTH = 32  # cuDeviceGetPCIBusId writes '0000:3b:00.0' and a NUL: 13 bytes suffice


def cuda_devices() -> list[tuple[str, str]]:
    """(name, compute capability) of every GPU the driver shows this process; OSError if no
    driver library, RuntimeError if the driver refuses."""
    lib, _ = load(DRIVER_LIBRARY)
    _cu(lib, "cuInit", ctypes.c_uint(0))
    count = ctypes.c_int()
    _cu(lib, "cuDeviceGetCount", ctypes.byref(count))
    return [_cuda_device(lib, index) for index in range(count.value)]


def _cuda_device(lib: ctypes.CDLL, index: int) -> tuple[str, str]:
    device, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    name = ctypes.create_string_buffer(256)
    _cu(lib, "cuDeviceGet", ctypes.byref(device), ctypes.c_int(index))
    _cu(lib, "cuDeviceGetName", name, ctypes.c_int(256), device)
    _cu(lib, "cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(_CC_MAJOR), device)
    _cu(lib, "cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(_CC_MINOR), device)
    return name.value.decode("utf-8", "replace"), f"{major.value}.{minor.value}"


def device_zero_bus_id() -> str:
    """The PCI bus id of CUDA device 0, the device frameworks compute on unless told otherwise;
    OSError if no driver library, RuntimeError if the driver refuses (no device visible)."""
    lib, _ = load(DRIVER_LIBRARY)
    _cu(lib, "cuInit", ctypes.c_uint(0))
    device, text = ctypes.c_int(), ctypes.create_string_buffer(_BUS_ID_LENGTH)
    _cu(lib, "cuDeviceGet", ctypes.byref(device), ctypes.c_int(0))
    _cu(lib, "cuDeviceGetPCIBusId", text, ctypes.c_int(_BUS_ID_LENGTH), device)
    return text.value.decode("ascii", "replace")


def _cu(lib: ctypes.CDLL, function: str, *args: object) -> None:
    code = getattr(lib, function)(*args)
    if code != 0:
        raise RuntimeError(f"{function} returned CUDA driver status {code}")


def check_device_count(ctx: Context) -> str:
    """The driver must show every GPU this process was given: in an image one /dev/nvidiaN
    each (or NGC_HOST_GPUS); on a host CUDA_VISIBLE_DEVICES where the scheduler set it."""
    try:
        devices = cuda_devices()
    except (OSError, RuntimeError) as exc:
        ctx.fail(f"CUDA driver API: {exc}", "host")
    ctx.evidence("devices", [{"name": name, "compute_capability": cc} for name, cc in devices])
    ctx.evidence("host_gpus", ctx.host_gpus)
    ctx.evidence("host_gpus_source", ctx.host_gpus_source)
    if len(devices) != ctx.host_gpus:
        ctx.fail(f"CUDA sees {len(devices)} GPU(s), the host passed {ctx.host_gpus} "
                 f"({ctx.gpu_count_hint()})", _count_fault(ctx))
    return f"{len(devices)} GPU(s): " + ", ".join(f"{n} (sm_{cc.replace('.', '')})"
                                                  for n, cc in devices)


def _count_fault(ctx: Context) -> Fault:
    # An image that sets CUDA_VISIBLE_DEVICES hides GPUs the host passed in: its own defect.
    # On a host the variable is the environment's (a scheduler's) choice, already counted.
    return "image" if not ctx.host_mode and ctx.env.visible_devices is not None else "host"


def check_driver(ctx: Context) -> str:
    """The driver is the host's part: a missing or too old one is the host's fault."""
    ctx.evidence("device_node", DEVICE_NODE.exists())
    ctx.evidence("nvidia_smi", shutil.which("nvidia-smi"))
    try:
        lib, path = load(DRIVER_LIBRARY)
    except OSError as exc:
        ctx.fail(
            f"NVIDIA driver library not visible ({exc}); was the container started with --gpus?",
            "host",
        )
    ctx.evidence("path", path)
    value = ctypes.c_int()
    code = lib.cuDriverGetVersion(ctypes.byref(value))
    if code != 0:
        ctx.fail(f"cuDriverGetVersion returned status {code}", "host")
    driver = decode_cudart(value.value)
    ctx.evidence("driver_cuda", dotted(driver))
    return _compare_runtime(ctx, driver)


def _compare_runtime(ctx: Context, driver: tuple[int, int]) -> str:
    runtime_text = ctx.expect.get("libraries", {}).get("cudart")
    if runtime_text is None:
        return f"driver supports CUDA {dotted(driver)}"
    runtime = release_components(runtime_text)[:2]
    if driver[0] < runtime[0]:
        ctx.fail(
            f"driver supports CUDA {dotted(driver)}, image needs CUDA {dotted(runtime)}: "
            "upgrade the driver",
            "host",
        )
    if driver < runtime:
        # CUDA minor version compatibility: same major runs, minus PTX JIT of newer code.
        return (
            f"driver CUDA {dotted(driver)} < runtime {dotted(runtime)}: minor-version compatibility"
        )
    return f"driver supports CUDA {dotted(driver)} (runtime {dotted(runtime)})"
