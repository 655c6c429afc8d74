"""PyTorch validation probe, loaded by the ngc runner from ``/opt/ngc/probes/pytorch.py``.

Only stdlib, torch and numpy: the runner hands us ``suite`` and ``ctx`` so we never import it.
torch is imported inside each check, so a broken install fails ``framework.import`` (reported)
instead of making this file unloadable.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

IMPORT_NAME = "torch"
SEED = 0
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
F32_TOLERANCE = 1e-4  # max |err| / max |ref| with TF32 off: only summation order differs
CUDNN_TOLERANCE = 1e-3  # conv backward sums many more terms than forward
F64_TOLERANCE = 1e-10  # two float64 formulations of the same conv
ONNX_TOLERANCE = 1e-4  # onnxruntime's CPU kernels against torch's, both float32


def register(suite: Any) -> None:
    suite.check("torch.build", tier="T0")(build_info)
    suite.check("torch.nccl_version", tier="T0")(nccl_version)
    suite.check("torch.train_cpu", tier="T2")(train_cpu)
    suite.check("torch.conv_cpu", tier="T2")(conv_cpu)
    suite.check("torch.autocast_cpu_bf16", tier="T2")(autocast_cpu_bf16)
    suite.check("torch.onnx_export", tier="T2")(onnx_export)
    suite.check("torch.gpu.tensor_op", tier="T2", needs_gpu=True)(gpu_tensor_op)
    suite.check("torch.gpu.cudnn_conv", tier="T2", needs_gpu=True)(gpu_cudnn_conv)
    suite.check("torch.gpu.cudnn_benchmark", tier="T2", needs_gpu=True)(gpu_cudnn_benchmark)
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


def train(ctx: Any, device: str, steps: int = 30, amp_dtype: Any = None) -> str:
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
    ctx: Any, model: Any, optimizer: Any, scaler: Any, x: Any, y: Any, amp_dtype: Any
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


CONV_CASES = {"conv": (1, 1), "dilated_conv": (2, 2)}  # name -> (dilation, padding)
CONV_PARTS = ("forward", "grad_input", "grad_weight")


def conv_fwd_bwd(
    torch: Any,
    device: str,
    dilation: int = 2,
    padding: int = 2,
    dtype: Any = None,
    explicit: bool = False,
) -> tuple[Any, Any, Any]:
    """Output, input grad and weight grad of one conv (dilated by default: a distinct cuDNN
    algo). ``explicit`` spells the dilation out as a zero-filled kernel run undilated: an
    independent route to the same numbers. Inputs are drawn in float32 whatever ``dtype``,
    so a float64 run is an exact-input reference for the float32 one."""
    generator = torch.Generator().manual_seed(SEED)
    dtype = torch.float32 if dtype is None else dtype
    x = torch.randn(4, 3, 32, 32, generator=generator).to(device, dtype).requires_grad_()
    w = torch.randn(8, 3, 3, 3, generator=generator).to(device, dtype).requires_grad_()
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


def compare_parts(ctx: Any, prefix: str, actual: Any, reference: Any, tolerance: float) -> float:
    return max(
        compare(ctx, f"{prefix}.{part}", a, r, tolerance)
        for part, a, r in zip(CONV_PARTS, actual, reference, strict=True)
    )


def conv_cpu(ctx: Any) -> str:
    """Conv and dilated conv forward/backward: float32 against float64, then the dilated conv
    against its explicitly dilated kernel (in float64, so only the formulation differs)."""
    import torch

    errors = []
    for name, (dilation, padding) in CONV_CASES.items():
        f32 = conv_fwd_bwd(torch, "cpu", dilation, padding)
        f64 = conv_fwd_bwd(torch, "cpu", dilation, padding, dtype=torch.float64)
        errors.append(compare_parts(ctx, f"{name}.f32_vs_f64", f32, f64, F32_TOLERANCE))
    dilated = conv_fwd_bwd(torch, "cpu", dtype=torch.float64)
    spelled = conv_fwd_bwd(torch, "cpu", dtype=torch.float64, explicit=True)
    explicit_error = compare_parts(
        ctx, "dilated_conv.vs_explicit_kernel", dilated, spelled, F64_TOLERANCE
    )
    return (
        f"conv + dilated conv fwd/bwd: f32 vs f64 max rel error {max(errors):.2e}; "
        f"dilation vs explicit kernel {explicit_error:.2e}"
    )


def gpu_cudnn_conv(ctx: Any) -> str:
    torch = require_cuda(ctx)
    version = cudnn_version(ctx, torch)
    with no_tf32(torch):
        on_gpu = conv_fwd_bwd(torch, "cuda")
    on_cpu = conv_fwd_bwd(torch, "cpu")
    error = compare_parts(ctx, "gpu_vs_cpu", on_gpu, on_cpu, CUDNN_TOLERANCE)
    return f"cuDNN {version}: conv fwd/bwd GPU vs CPU max rel error {error:.2e}"


def gpu_cudnn_benchmark(ctx: Any) -> str:
    """``cudnn.benchmark=True``: the first call autotunes, the second reuses the cached algo.

    cuDNN's forward algorithms are all deterministic, so both forwards must be bit-identical;
    backward algorithms may use atomics, so gradients are held to the float64 reference only.
    """
    torch = require_cuda(ctx)
    version = cudnn_version(ctx, torch)
    saved = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        with no_tf32(torch):
            first = conv_fwd_bwd(torch, "cuda")
            second = conv_fwd_bwd(torch, "cuda")
        torch.cuda.synchronize()
    finally:
        torch.backends.cudnn.benchmark = saved
    if not torch.equal(first[0], second[0]):
        diff = (first[0] - second[0]).abs().max().item()
        ctx.fail(f"autotuned conv: two runs differ (max |diff| {diff:.3g})")
    reference = conv_fwd_bwd(torch, "cpu", dtype=torch.float64)
    error = compare_parts(ctx, "benchmark_vs_f64", second, reference, CUDNN_TOLERANCE)
    return f"cuDNN {version} benchmark mode: 2 runs bit-identical, vs f64 max rel error {error:.2e}"


def autocast_cpu_bf16(ctx: Any) -> str:
    import torch

    return train(ctx, "cpu", amp_dtype=torch.bfloat16)


def build_info(ctx: Any) -> str:
    """What torch was built for must fit the stack the image ships (one CUDA, one cuDNN)."""
    import torch

    ctx.evidence("torch_version", torch.__version__)
    ctx.evidence("git_version", torch.version.git_version)
    ctx.evidence("torch_cuda", torch.version.cuda)
    ctx.evidence("debug", bool(torch.version.debug))
    libraries = ctx.expect.get("libraries", {})
    if torch.version.cuda is None:
        if libraries:
            ctx.fail(f"torch {torch.__version__} is a CPU-only build on a CUDA stack")
        return f"torch {torch.__version__} (CPU-only build, no CUDA stack expected)"
    cudart = libraries.get("cudart")
    if cudart:
        check_cuda_minor_compat(ctx, torch.version.cuda, cudart)
    cudnn = cudnn_version(ctx, torch)
    return f"torch {torch.__version__} built for CUDA {torch.version.cuda}, uses cuDNN {cudnn}"


def check_cuda_minor_compat(ctx: Any, built: str, shipped: str) -> None:
    """CUDA minor-version compatibility: same major, and a runtime no older than the build."""
    have = tuple(int(p) for p in shipped.split(".")[:2])
    want = tuple(int(p) for p in built.split(".")[:2])
    if have[0] != want[0] or have < want:
        ctx.fail(f"torch was built for CUDA {built}, the stack ships cudart {shipped}")


def nccl_version(ctx: Any) -> str:
    """torch's NCCL must be the stack's. ncclGetVersion is a host call, so no GPU is needed."""
    import torch

    expected = ctx.expect.get("libraries", {}).get("nccl")
    if torch.version.cuda is None:
        if expected:
            ctx.fail(f"CPU-only torch build: no NCCL, the stack ships NCCL {expected}")
        ctx.skip("CPU-only torch build: no NCCL")
    ctx.evidence("distributed_nccl", torch.distributed.is_nccl_available())
    if not torch.distributed.is_nccl_available():
        ctx.fail("torch.distributed has no NCCL backend (ProcessGroupNCCL not built)")
    raw = torch.cuda.nccl.version()
    found = ".".join(str(p) for p in (raw if isinstance(raw, tuple) else decode_nccl(int(raw))))
    ctx.evidence("nccl_version", found)
    ctx.evidence("libnccl", loaded_library("libnccl"))
    if expected and found.split(".") != expected.split(".")[:3]:
        ctx.fail(f"torch uses NCCL {found}, the stack ships {expected}: a second copy?")
    return f"NCCL {found}" + (f" = stack's {expected}" if expected else "")


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


def onnx_export(ctx: Any) -> str:
    """``torch.onnx.export`` (the dynamo exporter, default since 2.9) of ``small_cnn``, run by
    onnxruntime on an input it was not exported with; outputs must match torch's."""
    import torch

    try:
        import onnx
        import onnxruntime
        import onnxscript
    except ImportError as exc:
        ctx.fail(f"ONNX export needs onnx, onnxscript and onnxruntime in the image: {exc}")
    ctx.evidence("versions", {"onnx": onnx.__version__, "onnxscript": onnxscript.__version__,
                              "onnxruntime": onnxruntime.__version__})
    model = small_cnn().eval()
    generator = torch.Generator().manual_seed(SEED + 1)
    example, fresh = torch.randn(2, 8, 3, 16, 16, generator=generator)
    with tempfile.TemporaryDirectory(prefix="ngc-onnx-") as scratch:
        path = Path(scratch) / "small_cnn.onnx"
        program = torch.onnx.export(model, (example,), dynamo=True, verbose=False)
        program.save(str(path))
        proto = onnx.load(str(path))
        onnx.checker.check_model(proto)
        ops = sorted({node.op_type for node in proto.graph.node})
        ctx.evidence("onnx_ops", ops)
        ctx.evidence("opset", {o.domain or "ai.onnx": o.version for o in proto.opset_import})
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        (out,) = session.run(None, {session.get_inputs()[0].name: fresh.numpy()})
    with torch.no_grad():
        expected = model(fresh)
    error = compare(ctx, "onnxruntime_vs_torch", torch.from_numpy(out), expected, ONNX_TOLERANCE)
    return f"exported {len(ops)} op types, onnxruntime vs torch max rel error {error:.2e}"


def gpu_amp_step(ctx: Any) -> str:
    torch = require_cuda(ctx)
    return train(ctx, "cuda", amp_dtype=torch.float16)
