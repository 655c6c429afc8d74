"""PyTorch validation probe, loaded by the ngc runner from ``/opt/ngc/probes/pytorch.py``.

Only stdlib, torch and numpy: the runner hands us ``suite`` and ``ctx`` so we never import it.
torch is imported inside each check, so a broken install fails ``framework.import`` (reported)
instead of making this file unloadable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

IMPORT_NAME = "torch"
SEED = 0
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
F32_TOLERANCE = 1e-4  # max |err| / max |ref| with TF32 off: only summation order differs
CUDNN_TOLERANCE = 1e-3  # conv backward sums many more terms than forward


def register(suite: Any) -> None:
    suite.check("torch.train_cpu", tier="T2")(train_cpu)
    suite.check("torch.gpu.tensor_op", tier="T2", needs_gpu=True)(gpu_tensor_op)
    suite.check("torch.gpu.cudnn_conv", tier="T2", needs_gpu=True)(gpu_cudnn_conv)
    suite.check("torch.gpu.amp_step", tier="T2", needs_gpu=True)(gpu_amp_step)


def rel_error(actual: Any, reference: Any) -> float:
    ref = reference.detach().double().cpu()
    diff = (actual.detach().double().cpu() - ref).abs().max().item()
    return float(diff / max(ref.abs().max().item(), 1e-30))


def compare(ctx: Any, what: str, actual: Any, reference: Any, tolerance: float) -> float:
    error = rel_error(actual, reference)
    ctx.evidence(f"{what}_rel_error", error)
    if not error <= tolerance:  # written so that NaN fails too
        ctx.fail(f"{what}: max error {error:.3g} of max |ref| exceeds {tolerance:g}")
    return error


def small_cnn() -> Any:
    """Conv + dilated conv + linear head: exercises the conv kernels cuDNN provides on GPU."""
    import torch
    from torch import nn

    torch.manual_seed(SEED)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=2, dilation=2),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 1),
    )


def batch(device: str) -> tuple[Any, Any]:
    """A learnable target: each image's per-channel means, mixed by fixed weights."""
    import torch

    generator = torch.Generator().manual_seed(SEED)
    x = torch.randn(16, 3, 16, 16, generator=generator)
    y = x.mean(dim=(2, 3)) @ torch.tensor([[3.0], [-2.0], [1.0]]) + 1.0
    return x.to(device), y.to(device)


def train(ctx: Any, device: str, steps: int = 30, amp: bool = False) -> str:
    import torch

    model = small_cnn().to(device)
    x, y = batch(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, enabled=amp)
    losses = [sgd_step(model, optimizer, scaler, x, y, amp) for _ in range(steps)]
    ctx.evidence("loss_first", losses[0])
    ctx.evidence("loss_last", losses[-1])
    if amp:
        ctx.evidence("grad_scale", float(scaler.get_scale()))
    if not losses[-1] < LOSS_DROP * losses[0]:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {losses[0]} -> {losses[-1]}")
    return f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} steps on {device}" + (
        " (fp16 autocast)" if amp else ""
    )


def sgd_step(model: Any, optimizer: Any, scaler: Any, x: Any, y: Any, amp: bool) -> float:
    import torch

    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=torch.float16, enabled=amp):
        loss = torch.nn.functional.mse_loss(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return float(loss.item())


def train_cpu(ctx: Any) -> str:
    return train(ctx, "cpu")


def require_cuda(ctx: Any) -> Any:
    """A GPU was expected, so torch not seeing one is a CPU fallback, never a skip."""
    import torch

    ctx.evidence("torch_cuda", torch.version.cuda)
    if torch.version.cuda is None:
        # A CPU-only build cannot use any GPU: the image's fault wherever it runs.
        ctx.fail(f"CPU fallback: torch {torch.__version__} is a CPU-only build", fault="image")
    if not torch.cuda.is_available():
        ctx.cpu_fallback(
            f"torch.cuda.is_available() is False (torch built for CUDA {torch.version.cuda})"
        )
    ctx.evidence("device", torch.cuda.get_device_name(0))
    return torch


def gpu_tensor_op(ctx: Any) -> str:
    torch = require_cuda(ctx)
    generator = torch.Generator().manual_seed(SEED)
    a, b = torch.randn(2, 512, 512, generator=generator, dtype=torch.float64)
    with no_tf32(torch):
        out = a.float().cuda() @ b.float().cuda()
    if out.device.type != "cuda":
        ctx.cpu_fallback(f"matmul result lives on {out.device}")
    error = compare(ctx, "matmul", out, a @ b, F32_TOLERANCE)
    return f"f32 matmul on {torch.cuda.get_device_name(0)} max rel error {error:.2e}"


@contextlib.contextmanager
def no_tf32(torch: Any) -> Iterator[None]:
    """Compare GPU and CPU in true fp32: TF32 (10-bit mantissa) would need loose tolerances."""
    backends = torch.backends
    saved = (backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32)
    backends.cuda.matmul.allow_tf32 = backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        backends.cuda.matmul.allow_tf32, backends.cudnn.allow_tf32 = saved


def cudnn_version(ctx: Any, torch: Any) -> str:
    """torch's cuDNN must be the stack's (the image ships one copy, in the CUDA layer)."""
    if not (torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled):
        ctx.fail("cuDNN is not available/enabled in torch")
    value = int(torch.backends.cudnn.version())
    # cudnnGetVersion encoding: 9.x is M*10000+m*100+p, 8.x M*1000+m*100+p.
    parts = (
        (value // 10000, value % 10000 // 100, value % 100)
        if value >= 10000
        else (value // 1000, value % 1000 // 100, value % 100)
    )
    found = ".".join(str(p) for p in parts)
    ctx.evidence("cudnn_version", found)
    expected = ctx.expect.get("libraries", {}).get("cudnn")
    wanted = expected.split(".")[:3] if expected else []
    if wanted and found.split(".")[: len(wanted)] != wanted:
        ctx.fail(f"torch uses cuDNN {found}, the stack ships {expected}: a second copy?")
    return found


def conv_fwd_bwd(torch: Any, device: str) -> tuple[Any, Any, Any]:
    """Output, input grad and weight grad of one conv (a dilated one: a distinct cuDNN algo)."""
    generator = torch.Generator().manual_seed(SEED)
    x = torch.randn(4, 3, 32, 32, generator=generator).to(device).requires_grad_()
    w = torch.randn(8, 3, 3, 3, generator=generator).to(device).requires_grad_()
    out = torch.nn.functional.conv2d(x, w, padding=2, dilation=2)
    out.square().sum().backward()
    return out, x.grad, w.grad


def gpu_cudnn_conv(ctx: Any) -> str:
    torch = require_cuda(ctx)
    version = cudnn_version(ctx, torch)
    with no_tf32(torch):
        on_gpu = conv_fwd_bwd(torch, "cuda")
    on_cpu = conv_fwd_bwd(torch, "cpu")
    errors = [
        compare(ctx, name, g, c, CUDNN_TOLERANCE)
        for name, g, c in zip(("forward", "grad_input", "grad_weight"), on_gpu, on_cpu, strict=True)
    ]
    return f"cuDNN {version}: conv fwd/bwd GPU vs CPU max rel error {max(errors):.2e}"


def gpu_amp_step(ctx: Any) -> str:
    require_cuda(ctx)
    return train(ctx, "cuda", amp=True)
