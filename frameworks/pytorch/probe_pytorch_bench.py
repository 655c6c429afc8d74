"""The PyTorch probe's T3 micro-benchmarks; ``ctx.measure`` takes the median of >= 5 timed
samples after warm-up and holds it to max(floor for the GPU model, 0.93 x baseline)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from probe_pytorch_lib import require_cuda, tf32_mode

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext

GEMM_SIZE = 8192
GEMM_CALLS = 10  # per sample: one 8192^3 bf16 GEMM takes ~1-2 ms on an H100
COPY_BYTES = 1 << 30
ALL_REDUCE_BYTES = 256 << 20


def elapsed_s(torch: Any, work: Callable[[], object], calls: int) -> float:
    """Seconds per call, timed by CUDA events around ``calls`` back-to-back launches."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        work()
    end.record()
    end.synchronize()
    milliseconds: float = start.elapsed_time(end)
    return milliseconds / 1000 / calls


def gemm(ctx: ProbeContext, dtype_name: str, tf32: bool = False) -> str:
    torch = require_cuda(ctx)
    dtype = getattr(torch, dtype_name)
    a = torch.randn(GEMM_SIZE, GEMM_SIZE, device="cuda", dtype=dtype)
    b = torch.randn(GEMM_SIZE, GEMM_SIZE, device="cuda", dtype=dtype)
    flops = 2 * GEMM_SIZE**3
    ctx.evidence("command", f"torch.matmul {GEMM_SIZE}^3 {dtype_name} tf32={tf32}, "
                            f"{GEMM_CALLS} calls per sample, CUDA events")
    label = "tf32" if tf32 else {"bfloat16": "bf16", "float16": "fp16"}[dtype_name]
    with tf32_mode(torch, tf32):
        return ctx.measure(f"gemm_{label}_tflops", "TFLOP/s",
                           lambda: flops / elapsed_s(torch, lambda: a @ b, GEMM_CALLS) / 1e12)


def gemm_bf16(ctx: ProbeContext) -> str:
    return gemm(ctx, "bfloat16")


def gemm_fp16(ctx: ProbeContext) -> str:
    return gemm(ctx, "float16")


def gemm_tf32(ctx: ProbeContext) -> str:
    return gemm(ctx, "float32", tf32=True)


def device_copy(ctx: ProbeContext) -> str:
    """Device-to-device copy; GB/s counts the bytes read plus the bytes written."""
    torch = require_cuda(ctx)
    source = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda")
    target = torch.empty_like(source)
    ctx.evidence("command", f"Tensor.copy_ of {COPY_BYTES >> 20} MiB on one GPU, CUDA events")
    return ctx.measure("memcpy_d2d_gbps", "GB/s",
                       lambda: 2 * COPY_BYTES / elapsed_s(torch, lambda: target.copy_(source), 5)
                       / 1e9)


def all_reduce_bus_bandwidth(ctx: ProbeContext) -> str:
    torch = require_cuda(ctx)
    count: int = torch.cuda.device_count()
    if count < 2:
        ctx.skip(f"{count} GPU: all-reduce bus bandwidth needs >= 2 GPUs")
    tensors = [torch.ones(ALL_REDUCE_BYTES // 4, device=f"cuda:{i}") for i in range(count)]
    ctx.evidence("command", f"torch.cuda.nccl.all_reduce of {ALL_REDUCE_BYTES >> 20} MiB "
                            f"per GPU over {count} GPUs")

    def sample() -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        torch.cuda.nccl.all_reduce(tensors)
        for index in range(count):
            torch.cuda.synchronize(index)
        seconds = time.perf_counter() - start
        # bus bandwidth = algorithm bandwidth x 2(n-1)/n (NCCL's convention)
        return ALL_REDUCE_BYTES / seconds / 1e9 * 2 * (count - 1) / count

    return ctx.measure("allreduce_busbw_gbps", "GB/s", sample)
