"""The PyTorch probe's GPU checks (registered by probe.py with needs_gpu=True)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from probe_pytorch_lib import (
    CUDNN_TOLERANCE,
    F32_TOLERANCE,
    SEED,
    compare_parts,
    conv_fwd_bwd,
    cudnn_version,
    no_tf32,
    require_cuda,
    train,
)

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext


def gpu_tensor_op(ctx: ProbeContext) -> str:
    torch = require_cuda(ctx)
    generator = torch.Generator().manual_seed(SEED)
    a, b = torch.randn(2, 512, 512, generator=generator, dtype=torch.float64)
    with no_tf32(torch):
        out = a.float().cuda() @ b.float().cuda()
    if out.device.type != "cuda":
        ctx.cpu_fallback(f"matmul result lives on {out.device}")
    error = ctx.compare("matmul", out, a @ b, F32_TOLERANCE)
    return f"f32 matmul on {torch.cuda.get_device_name(0)} max rel error {error:.2e}"


def gpu_cudnn_conv(ctx: ProbeContext) -> str:
    torch = require_cuda(ctx)
    version = cudnn_version(ctx, torch)
    with no_tf32(torch):
        on_gpu = conv_fwd_bwd(torch, "cuda")
    on_cpu = conv_fwd_bwd(torch, "cpu")
    error = compare_parts(ctx, "gpu_vs_cpu", on_gpu, on_cpu, CUDNN_TOLERANCE)
    return f"cuDNN {version}: conv fwd/bwd GPU vs CPU max rel error {error:.2e}"


def gpu_amp_step(ctx: ProbeContext) -> str:
    torch = require_cuda(ctx)
    return train(ctx, "cuda", amp_dtype=torch.float16)
