"""Which GPUs this process was given, and which of them frameworks compute on.

In an image the host passes GPUs in as device nodes (and says how many in NGC_HOST_GPUS); a
CUDA_VISIBLE_DEVICES there comes from the image and hiding GPUs with it is the image's defect.
On a host (``validate --host``) every /dev/nvidiaN of the node is present, and a scheduler
(Slurm, for one) hands a job its GPUs through CUDA_VISIBLE_DEVICES: that is what CUDA must show.

CUDA_VISIBLE_DEVICES, as CUDA documents it: a comma-separated list of GPU indices, GPU UUIDs
(``GPU-…``, or a prefix naming one GPU) or MIG devices (``MIG-…``); GPUs are enumerated in list
order and an invalid entry ends the list (``0,2,-1,1`` shows 2 GPUs); an empty value shows none.
Observed on a driver (H100, and relied on by PyTorch's own device count): a repeated entry shows
none, an index is read like ``strtoul`` (``+0`` and ``0gpu`` are 0), a list keeps to the kind of
its first entry, the ``GPU-`` prefix is case-sensitive and the hex digits after it are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import gpu, nvml
from .context import DeviceZero

ENV_VAR = "CUDA_VISIBLE_DEVICES"
HOST_GPUS_VAR = "NGC_HOST_GPUS"
_INDEX = re.compile(r"\+?([0-9]+)")
_UUID_KINDS = ("GPU-", "MIG-")


def expected_gpus(
    host_mode: bool, environ: Mapping[str, str], nodes: int, info: dict[str, Any],
    uuids: Callable[[], list[str] | None] = nvml.uuids,
) -> tuple[int, str]:
    """How many GPUs CUDA must show this process, and where that number comes from."""
    passed = environ.get(HOST_GPUS_VAR)
    if passed:
        return int(passed), f"{HOST_GPUS_VAR}={passed}"
    value = environ.get(ENV_VAR)
    if not host_mode or value is None:
        return nodes, f"{nodes} device nodes /dev/nvidiaN"
    # NVML counts the GPUs even where a driver setup makes no /dev/nvidiaN nodes.
    total = max(nodes, len(info.get("gpus") or []))
    known = uuids() if _kind(value.split(",")[0].strip()) == "GPU-" else None
    return (visible_count(value, total, known),
            f"{ENV_VAR}={value!r} of this environment ({total} GPUs in the machine)")


def visible_count(value: str, total: int, uuids: Sequence[str] | None = None) -> int:
    """GPUs CUDA enumerates under CUDA_VISIBLE_DEVICES=``value`` with ``total`` GPUs present;
    ``uuids`` (NVML's, when known) decide which ``GPU-`` entries name a GPU."""
    entries = [entry.strip() for entry in value.split(",")]
    kind = _kind(entries[0])
    seen: list[str] = []
    for entry in entries:
        found = _identify(entry, kind, total, uuids)
        if found is None:
            break
        if found in seen:
            return 0
        seen.append(found)
    # CUDA enumerates a single MIG device per process, however many are listed.
    return min(len(seen), 1) if kind == "MIG-" else len(seen)


def _kind(entry: str) -> str:
    # Case matters to the driver: 'gpu-…' is no UUID (the hex digits after it may be either).
    return next((prefix for prefix in _UUID_KINDS if entry.startswith(prefix)), "index")


def _identify(entry: str, kind: str, total: int, uuids: Sequence[str] | None) -> str | None:
    """What the entry names (an index, a full UUID, a MIG id), or None if it ends the list."""
    if _kind(entry) != kind:
        return None
    if kind == "index":
        digits = _INDEX.match(entry)
        return digits.group(1) if digits and int(digits.group(1)) < total else None
    if kind == "GPU-" and uuids is not None:
        named = [uuid for uuid in uuids if uuid.lower().startswith(entry.lower())]
        return named[0] if len(named) == 1 else None
    return entry


def device_zero(info: dict[str, Any]) -> DeviceZero:
    """NVML's entry for CUDA device 0, matched by PCI bus id: CUDA counts within
    CUDA_VISIBLE_DEVICES and fastest first, NVML counts every GPU in PCI order."""
    try:
        cuda_bus_id = gpu.device_zero_bus_id()
    except (OSError, RuntimeError) as exc:
        return DeviceZero(None, f"CUDA device 0 unknown ({exc})")
    wanted = nvml.canonical_bus_id(cuda_bus_id)
    for entry in info.get("gpus") or []:
        if wanted is not None and entry.get("pci_bus_id") == wanted:
            index = int(entry["index"])
            return DeviceZero(index, f"CUDA device 0 is PCI {wanted}, NVML index {index}")
    return DeviceZero(None, f"CUDA device 0 (PCI {cuda_bus_id}) is none of NVML's GPUs")
