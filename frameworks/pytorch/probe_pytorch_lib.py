"""Helpers shared by the PyTorch probe's CPU and GPU checks (see probe.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext

SEED = 0


LOSS_DROP = 0.5  # the final loss must be below this fraction of the first


F32_TOLERANCE = 1e-4  # max |err| / max |ref| with TF32 off: only summation order differs


CUDNN_TOLERANCE = 1e-3  # conv backward sums many more terms than forward


F64_TOLERANCE = 1e-10  # two float64 formulations of the same conv


ONNX_TOLERANCE = 1e-4  # onnxruntime's CPU kernels against torch's, both float32


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


def train(ctx: ProbeContext, device: str, steps: int = 30, amp_dtype: Any = None) -> str:
    """SGD on ``small_cnn``; with ``amp_dtype`` the forward runs under autocast in that dtype.

    float16 needs a GradScaler (its range underflows small gradients); bfloat16 has float32's
    range and is used without one, as on CPU.
    """
    import torch

    model = small_cnn().to(device)
    x, y = batch(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, enabled=amp_dtype == torch.float16)
    losses = [sgd_step(ctx, model, optimizer, scaler, x, y, amp_dtype) for _ in range(steps)]
    ctx.evidence("loss_first", losses[0])
    ctx.evidence("loss_last", losses[-1])
    if scaler.is_enabled():
        scale = float(scaler.get_scale())
        ctx.evidence("grad_scale", scale)
        if not 0.0 < scale < float("inf"):
            ctx.fail(f"GradScaler scale is {scale}: every step overflowed")
    if not losses[-1] < LOSS_DROP * losses[0]:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {losses[0]} -> {losses[-1]}")
    return f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} steps on {device}" + (
        f" ({str(amp_dtype).removeprefix('torch.')} autocast"
        + (", GradScaler)" if scaler.is_enabled() else ")")
        if amp_dtype is not None
        else ""
    )


def sgd_step(
    ctx: ProbeContext, model: Any, optimizer: Any, scaler: Any, x: Any, y: Any, amp_dtype: Any
) -> float:
    import torch

    optimizer.zero_grad(set_to_none=True)
    enabled = amp_dtype is not None
    with torch.autocast(device_type=x.device.type, dtype=amp_dtype, enabled=enabled):
        out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)
    if enabled and out.dtype != amp_dtype:
        # Autocast silently off (e.g. an unsupported device/dtype pair) would train in fp32.
        ctx.fail(f"autocast({amp_dtype}) left the model output in {out.dtype}")
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return float(loss.item())


def require_cuda(ctx: ProbeContext) -> Any:
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


def new_tf32_api(torch: Any) -> bool:
    """PyTorch 2.9+ sets TF32 per backend and op through ``fp32_precision`` ("tf32"/"ieee").
    There the legacy ``allow_tf32`` flags warn, and reading one raises a "mix of legacy and new
    APIs" RuntimeError once anything set ``fp32_precision``: feature-detected, never by version,
    so a backport or a build from main is judged by what it has."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    return hasattr(torch.backends.cuda.matmul, "fp32_precision") and hasattr(
        conv, "fp32_precision")


@contextlib.contextmanager
def tf32_mode(torch: Any, enabled: bool) -> Iterator[None]:
    """TF32 (10-bit mantissa on tensor cores) for fp32 matmul and conv, on or off meanwhile;
    the previous settings come back afterwards. One API only: the two are never mixed."""
    backends = torch.backends
    if new_tf32_api(torch):
        switches, name = (backends.cuda.matmul, backends.cudnn.conv), "fp32_precision"
        value: object = "tf32" if enabled else "ieee"
    else:
        switches, name, value = (backends.cuda.matmul, backends.cudnn), "allow_tf32", enabled
    saved = [getattr(switch, name) for switch in switches]
    for switch in switches:
        setattr(switch, name, value)
    try:
        yield
    finally:
        for switch, previous in zip(switches, saved, strict=True):
            setattr(switch, name, previous)


def no_tf32(torch: Any) -> contextlib.AbstractContextManager[None]:
    """Compare GPU and CPU in true fp32: TF32 would need loose tolerances."""
    return tf32_mode(torch, False)


def cudnn_version(ctx: ProbeContext, torch: Any) -> str:
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


CONV_CASES = {"conv": (1, 1), "dilated_conv": (2, 2)}  # name -> (dilation, padding)


CONV_PARTS = ("forward", "grad_input", "grad_weight")


CONV_SHAPES = ((4, 3, 32, 32), (8, 3, 3, 3))  # (input NCHW, weight OIHW) of conv_fwd_bwd


def conv_fwd_bwd(
    torch: Any,
    device: str,
    dilation: int = 2,
    padding: int = 2,
    dtype: Any = None,
    explicit: bool = False,
    shapes: tuple[tuple[int, ...], tuple[int, ...]] = CONV_SHAPES,
) -> tuple[Any, Any, Any]:
    """Output, input grad and weight grad of one conv (dilated by default: a distinct cuDNN
    algo). ``explicit`` spells the dilation out as a zero-filled kernel run undilated: an
    independent route to the same numbers. Inputs are drawn in float32 whatever ``dtype``,
    so a float64 run is an exact-input reference for the float32 one."""
    generator = torch.Generator().manual_seed(SEED)
    dtype = torch.float32 if dtype is None else dtype
    x_shape, w_shape = shapes
    x = torch.randn(x_shape, generator=generator).to(device, dtype).requires_grad_()
    w = torch.randn(w_shape, generator=generator).to(device, dtype).requires_grad_()
    kernel = dilate(w, dilation) if explicit else w
    out = torch.nn.functional.conv2d(
        x, kernel, padding=padding, dilation=1 if explicit else dilation
    )
    out.square().sum().backward()
    return out, x.grad, w.grad


def dilate(w: Any, dilation: int) -> Any:
    """The kernel a dilated conv applies: taps spread ``dilation`` apart, zeros between."""
    out_ch, in_ch, kh, kw = w.shape
    kernel = w.new_zeros(out_ch, in_ch, (kh - 1) * dilation + 1, (kw - 1) * dilation + 1)
    kernel[:, :, ::dilation, ::dilation] = w  # differentiable: grads flow back into w
    return kernel


def compare_parts(
    ctx: ProbeContext, prefix: str, actual: Any, reference: Any, tolerance: float
) -> float:
    return max(
        ctx.compare(f"{prefix}.{part}", a, r, tolerance)
        for part, a, r in zip(CONV_PARTS, actual, reference, strict=True)
    )


def check_cuda_minor_compat(ctx: ProbeContext, built: str, shipped: str) -> None:
    """CUDA minor-version compatibility: same major, and a runtime no older than the build."""
    have = tuple(int(p) for p in shipped.split(".")[:2])
    want = tuple(int(p) for p in built.split(".")[:2])
    if have[0] != want[0] or have < want:
        ctx.fail(f"torch was built for CUDA {built}, the stack ships cudart {shipped}")


def decode_nccl(value: int) -> tuple[int, int, int]:
    """Older torch returns ncclGetVersion's int: M*10000+m*100+p from 2.9, M*1000+m*100+p before."""
    if value >= 20900:
        return value // 10000, value % 10000 // 100, value % 100
    return value // 1000, value % 1000 // 100, value % 100


def loaded_library(stem: str) -> str | None:
    """Where this process loaded ``stem`` from (Linux): evidence for a second-copy hunt."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = {line.split()[-1] for line in maps.splitlines() if f"/{stem}" in line}
    return ", ".join(sorted(paths)) or None
