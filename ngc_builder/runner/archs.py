"""T0 ``cuda.archs``: the GPU code an image ships covers the GPUs its release targets.

The fat binaries are read by ``fatbin.py`` (headers only: no CUDA toolkit, GPU or driver)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable, Iterator
from pathlib import Path

from .fatbin import GpuCode, capability_number, coverage_gaps, scan_library
from .gpu import cuda_devices
from .suite import Check, Context, Suite
from .versions import normalize_name

__all__ = ["GpuCode", "capability_number", "coverage_gaps", "register", "scan_library"]


def nvidia_build(name: str) -> bool:
    """NVIDIA's own wheels (cuBLAS, cuDNN, the CUDA toolkit...): checked by version, not here."""
    return name.startswith(("nvidia-", "cuda-")) or name == "cuda-toolkit"


def shipped_libraries(stack_wheels: Iterable[str]) -> Iterator[Path]:
    """Shared libraries of every installed distribution except the CUDA stack's wheels and
    NVIDIA's own (on a host there is no stack list: a GPU node's nvidia-* wheels)."""
    skip = {normalize_name(name) for name in stack_wheels}
    for dist in importlib.metadata.distributions():
        name = normalize_name(dist.metadata["Name"] or "")
        if name in skip or nvidia_build(name):
            continue
        for file in dist.files or ():
            if file.name.endswith(".so") or ".so." in file.name:
                yield Path(str(dist.locate_file(file)))


def register(suite: Suite) -> None:
    suite.add(Check("cuda.archs", "T0", False, check_archs))


def check_archs(ctx: Context) -> str:
    targets = [str(t) for t in ctx.expect["gpu_targets"]]
    present = _present_capabilities(ctx)
    code = {str(path): scan_library(path)
            for path in shipped_libraries(ctx.expect.get("wheels", {})) if path.is_file()}
    code = {path: found for path, found in code.items() if not found.empty}
    ctx.evidence("libraries", {path: found.describe() for path, found in code.items()})
    ctx.evidence("targets", targets)
    ctx.evidence("present_gpus", present)
    if not code:
        if ctx.expect.get("gpu_image"):
            ctx.fail("no shipped library carries GPU code: a CPU-only build in a GPU image")
        ctx.skip("CPU-only image: no shipped library carries GPU code")
    gaps = coverage_gaps(code, targets, present)
    if gaps:
        ctx.fail("; ".join(gaps))
    wanted = ", ".join(f"sm_{capability_number(t)}" for t in dict.fromkeys(targets + present))
    return f"{len(code)} libraries with GPU code cover {wanted}"


def _present_capabilities(ctx: Context) -> list[str]:
    if not ctx.gpu_expected:
        return []
    try:
        return sorted({cc for _name, cc in cuda_devices()})
    except (OSError, RuntimeError) as exc:  # gpu.driver reports it; judge the targets alone
        ctx.evidence("present_gpus_error", str(exc))
        return []
