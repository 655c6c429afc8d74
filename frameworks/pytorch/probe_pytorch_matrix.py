"""The PyTorch probe's T2 functional matrix: precisions against float64, the DataLoader's
shared memory, device count and NCCL all-reduce. Every function takes the device, so the
same code runs on the CPU in the framework tests (no GPU there) and on the GPU here."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from probe_pytorch_lib import SEED, require_cuda, tf32_mode

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext

# name -> (dtype name, TF32 on, tolerance as max |err| / max |ref| against float64 on the CPU).
# The error is dominated by rounding the inputs: 2^-24 (fp32), 2^-11 (tf32, fp16), 2^-8 (bf16)
# per element, times a few for the output rounding and the summation order.
PRECISIONS = {
    "fp32": ("float32", False, 1e-4),
    "tf32": ("float32", True, 1e-2),
    "fp16": ("float16", False, 1e-2),
    "bf16": ("bfloat16", False, 4e-2),
}
# The tf32 row must also show TF32's rounding (ctx.precision_matrix holds it to that).
TF32_MIN_CAPABILITY = (8, 0)  # Ampere: the first tensor cores with TF32
DATALOADER_WORKERS = 2


def tf32_not_applicable(torch: Any, device: str) -> str | None:
    """Why ``device`` has no TF32 to prove, or None when it has (a GPU of sm_80 or later)."""
    if torch.device(device).type != "cuda":
        return f"no TF32 on {device}: the tf32 row would be fp32"
    capability = tuple(torch.cuda.get_device_capability(torch.device(device)))
    if capability < TF32_MIN_CAPABILITY:
        return f"sm_{capability[0]}{capability[1]} has no TF32 (sm_80 or later)"
    return None


def tf32_evidence(ctx: ProbeContext, errors: dict[str, float]) -> None:
    """cuDNN treats TF32 as a permission and may pick an fp32 kernel for a small conv (it did
    for this one on an H100, cuDNN 9.19), so only the matmul is held to show TF32."""
    ctx.evidence("tf32.conv_error", errors["conv"])
    ctx.evidence("NVIDIA_TF32_OVERRIDE", os.environ.get("NVIDIA_TF32_OVERRIDE"))


def matrix_inputs(torch: Any) -> tuple[dict[str, tuple[Any, Any]], dict[str, Any]]:
    """Float64 CPU operands of the matmul and the conv, and their float64 results."""
    generator = torch.Generator().manual_seed(SEED)
    a, b = torch.randn(2, 256, 256, generator=generator, dtype=torch.float64)
    x = torch.randn(4, 8, 16, 16, generator=generator, dtype=torch.float64)
    w = torch.randn(8, 8, 3, 3, generator=generator, dtype=torch.float64)
    conv = torch.nn.functional.conv2d
    return {"matmul": (a, b), "conv": (x, w)}, {"matmul": a @ b, "conv": conv(x, w, padding=1)}


def precision_row(
    ctx: ProbeContext, torch: Any, device: str, name: str, operands: dict[str, tuple[Any, Any]],
    references: dict[str, Any],
) -> dict[str, float]:
    """One row of the matrix on ``device``: each op's error against float64."""
    dtype_name, tf32, tolerance = PRECISIONS[name]
    dtype = getattr(torch, dtype_name)
    (a, b), (x, w) = operands["matmul"], operands["conv"]
    with tf32_mode(torch, tf32):
        results = {"matmul": a.to(device, dtype) @ b.to(device, dtype),
                   "conv": torch.nn.functional.conv2d(
                       x.to(device, dtype), w.to(device, dtype), padding=1)}
    errors = {}
    for op, result in results.items():
        if result.device.type != torch.device(device).type:
            ctx.cpu_fallback(f"{name} {op} ran on {result.device}, not {device}")
        errors[op] = ctx.compare(f"{name}.{op}", result, references[op], tolerance)
    return errors


def precision_matrix(ctx: ProbeContext, torch: Any, device: str) -> str:
    """matmul and conv in each precision on ``device`` against a float64 CPU reference; on a
    GPU with TF32 the tf32 row must also show TF32's rounding, elsewhere it is left out."""
    operands, references = matrix_inputs(torch)

    def row(name: str) -> tuple[float, float]:
        errors = precision_row(ctx, torch, device, name, operands, references)
        if name == "tf32":
            tf32_evidence(ctx, errors)
        return max(errors.values()), errors["matmul"]

    tolerances = {name: spec[2] for name, spec in PRECISIONS.items()}
    return ctx.precision_matrix(device, tolerances, row, tf32_not_applicable(torch, device))


class _Squares:
    """A map-style dataset whose items are computed in the worker processes."""

    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> Any:
        import torch

        return torch.full((256, 256), float(index)), index * index


def dataloader(ctx: ProbeContext, torch: Any, workers: int = DATALOADER_WORKERS) -> str:
    """Worker processes hand their batches back through /dev/shm: too little of it makes
    them die with 'bus error' / 'unable to write to file </torch_...>'."""
    loader = torch.utils.data.DataLoader(_Squares(), batch_size=8, num_workers=workers)
    total, seen = 0.0, 0
    for tensors, squares in loader:
        total += float(tensors[:, 0, 0].sum())
        seen += int(squares.sum())
    expected_total, expected_seen = float(sum(range(64))), sum(i * i for i in range(64))
    ctx.evidence("workers", workers)
    if (total, seen) != (expected_total, expected_seen):
        ctx.fail(f"batches from {workers} workers sum to {(total, seen)}, "
                 f"expected {(expected_total, expected_seen)}")
    return f"64 items (256 KiB each) through {workers} worker processes, all accounted for"


def gpu_precision_matrix(ctx: ProbeContext) -> str:
    return precision_matrix(ctx, require_cuda(ctx), "cuda")


def gpu_device_count(ctx: ProbeContext) -> str:
    torch = require_cuda(ctx)
    count = torch.cuda.device_count()
    names = [torch.cuda.get_device_name(i) for i in range(count)]
    ctx.evidence("devices", names)
    if count != ctx.host_gpus:
        ctx.fail(f"torch sees {count} GPU(s), the host passed {ctx.host_gpus} "
                 f"({ctx.gpu_count_hint()})")
    return f"torch sees all {count} GPU(s): {', '.join(names)}"


def nccl_all_reduce(ctx: ProbeContext, torch: Any, devices: list[Any]) -> str:
    """NCCL all-reduce with one rank per device (one device: the single-rank path), then
    the same through torch.distributed's NCCL process group with world size 1."""
    tensors = [torch.full((1 << 20,), float(rank + 1), device=d) for rank, d in enumerate(devices)]
    torch.cuda.nccl.all_reduce(tensors)
    torch.cuda.synchronize()
    expected = len(devices) * (len(devices) + 1) / 2
    wrong = [str(t.device) for t in tensors if not bool((t == expected).all())]
    if wrong:
        ctx.fail(f"NCCL all-reduce over {len(devices)} rank(s): wrong sums on {wrong}")
    distributed = torch.distributed
    distributed.init_process_group("nccl", store=distributed.HashStore(), rank=0, world_size=1,
                                   device_id=torch.device(devices[0]))
    try:
        value = torch.ones(1024, device=devices[0])
        distributed.all_reduce(value)
        torch.cuda.synchronize()
    finally:
        distributed.destroy_process_group()
    if not bool((value == 1).all()):
        ctx.fail("ProcessGroupNCCL all-reduce with world size 1 changed the tensor")
    return f"NCCL all-reduce over {len(devices)} GPU(s) and through ProcessGroupNCCL: correct"


def gpu_nccl_all_reduce(ctx: ProbeContext) -> str:
    torch = require_cuda(ctx)
    return nccl_all_reduce(ctx, torch, [f"cuda:{i}" for i in range(torch.cuda.device_count())])
