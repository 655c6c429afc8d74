"""PyTorch validation probe, loaded by the ngc runner from ``/opt/ngc/probes/pytorch/``.

Only stdlib, torch and numpy: the runner hands us ``suite`` and ``ctx`` so we never import it.
torch is imported inside each check, so a broken install fails ``framework.import`` (reported)
instead of making this file unloadable.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import probe_pytorch_devel
import probe_pytorch_dist
from probe_pytorch_autotune import gpu_cudnn_benchmark
from probe_pytorch_bench import (
    all_reduce_bus_bandwidth,
    device_copy,
    gemm_bf16,
    gemm_fp16,
    gemm_tf32,
)
from probe_pytorch_gpu import gpu_amp_step, gpu_cudnn_conv, gpu_tensor_op
from probe_pytorch_lib import (
    CONV_CASES,
    F32_TOLERANCE,
    F64_TOLERANCE,
    ONNX_TOLERANCE,
    SEED,
    check_cuda_minor_compat,
    compare_parts,
    conv_fwd_bwd,
    cudnn_version,
    decode_nccl,
    loaded_library,
    small_cnn,
    train,
)
from probe_pytorch_matrix import (
    dataloader,
    gpu_device_count,
    gpu_nccl_all_reduce,
    gpu_precision_matrix,
    precision_matrix,
)

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "torch"


def register(suite: ProbeSuite) -> None:
    probe_pytorch_dist.register(suite)
    probe_pytorch_devel.register(suite)
    suite.check("torch.build", tier="T0")(build_info)
    suite.check("torch.nccl_version", tier="T0")(nccl_version)
    # The emulated tier's one operation (another platform under QEMU): autograd and an
    # optimizer step through the platform's own kernels.
    suite.check("torch.train_cpu", tier="T2", emulated=True)(train_cpu)
    suite.check("torch.conv_cpu", tier="T2")(conv_cpu)
    suite.check("torch.autocast_cpu_bf16", tier="T2")(autocast_cpu_bf16)
    suite.check("torch.onnx_export", tier="T2")(onnx_export)
    suite.check("torch.precision_cpu", tier="T2")(precision_cpu)
    suite.check("torch.dataloader_workers", tier="T2")(dataloader_workers)
    gpu_checks = {
        "torch.gpu.device_count": gpu_device_count, "torch.gpu.tensor_op": gpu_tensor_op,
        "torch.gpu.precision_matrix": gpu_precision_matrix, "torch.gpu.cudnn_conv": gpu_cudnn_conv,
        "torch.gpu.cudnn_benchmark": gpu_cudnn_benchmark, "torch.gpu.amp_step": gpu_amp_step,
        "torch.gpu.nccl_all_reduce": gpu_nccl_all_reduce,
    }
    for check_id, function in gpu_checks.items():
        suite.check(check_id, tier="T2", needs_gpu=True)(function)
    benchmarks = {"gemm_bf16": gemm_bf16, "gemm_fp16": gemm_fp16, "gemm_tf32": gemm_tf32,
                  "memcpy_d2d": device_copy, "allreduce_busbw": all_reduce_bus_bandwidth}
    for name, function in benchmarks.items():
        suite.check(f"torch.bench.{name}", tier="T3", needs_gpu=True)(function)


def train_cpu(ctx: ProbeContext) -> str:
    return train(ctx, "cpu")


def conv_cpu(ctx: ProbeContext) -> str:
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


def precision_cpu(ctx: ProbeContext) -> str:
    """The same precision matrix on the CPU (fp32/fp16/bf16 kernels; TF32 is a no-op there)."""
    import torch

    return precision_matrix(ctx, torch, "cpu")


def dataloader_workers(ctx: ProbeContext) -> str:
    import torch

    return dataloader(ctx, torch)


def autocast_cpu_bf16(ctx: ProbeContext) -> str:
    import torch

    return train(ctx, "cpu", amp_dtype=torch.bfloat16)


def build_info(ctx: ProbeContext) -> str:
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


def nccl_version(ctx: ProbeContext) -> str:
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


def onnx_export(ctx: ProbeContext) -> str:
    """``torch.onnx.export`` (the dynamo exporter, default since 2.9) of ``small_cnn``, run by
    onnxruntime on an input it was not exported with; outputs must match torch's."""
    import torch

    try:
        import onnx
        import onnxruntime
        import onnxscript
    except ImportError as exc:
        # An image promises its ONNX stack; a host environment (a GPU node, a conda env) may
        # simply not have it, which is no defect of the framework under test.
        if ctx.host_mode:
            ctx.skip(f"not installed here: ONNX export needs onnx, onnxscript and onnxruntime "
                     f"({exc})")
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
    error = ctx.compare("onnxruntime_vs_torch", out, expected, ONNX_TOLERANCE)
    return f"exported {len(ops)} op types, onnxruntime vs torch max rel error {error:.2e}"
