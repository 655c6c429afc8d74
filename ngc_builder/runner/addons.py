"""T2 checks of NVIDIA's add-ons an image carries (the manifest's ``addons``).

Each add-on is installed at the version the manifest asks, imports, and does one CPU-side
operation whose result is checked (in the emulated tier too: its machine code runs); where the
library has a GPU operation, a second check does it when GPUs are expected (else `skipped: no
GPU`). Nothing here installs or sets anything: the image as users get it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from typing import Any

from .suite import Check, Context, Suite

SIDE = 16  # pixels of the test image: a gradient, so a swapped channel or row shows


def register(suite: Suite, expect: dict[str, Any]) -> None:
    addons = expect.get("addons") or {}
    for name, (short, cpu, gpu) in CHECKS.items():
        if name in addons:
            suite.add(Check(f"addons.{short}", "T2", False, cpu, emulated=True))
            if gpu is not None:
                suite.add(Check(f"addons.{short}.gpu", "T2", True, gpu))


def at_version(ctx: Context, distribution: str, module: str) -> Any:
    """The add-on's module, once its installed version is the manifest's."""
    try:
        version = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        ctx.fail(f"{distribution} is not installed; the manifest asks "
                 f"{ctx.expect['addons'][distribution]}")
    wanted = str(ctx.expect["addons"][distribution])
    ctx.evidence("version", version)
    if version != wanted:
        ctx.fail(f"{distribution} {version}, the manifest asks {wanted}")
    try:
        return importlib.import_module(module)
    except Exception as exc:  # any import failure is the finding
        ctx.fail(f"import {module}: {exc.__class__.__name__}: {exc}")


def check_nvtx(ctx: Context) -> str:
    """Ranges, a mark and a decorated function: without a profiler attached each is a no-op
    that must still run and return (a tool attaching later sees the same calls)."""
    nvtx = at_version(ctx, "nvtx", "nvtx")
    nvtx.push_range("ngc-builder", color="green")
    nvtx.pop_range()
    nvtx.mark("ngc-builder")

    summed = nvtx.annotate("ngc-builder.sum", color="blue")(lambda: sum(range(101)))
    with nvtx.annotate("ngc-builder.outer"):
        total = summed()
    if total != 5050:
        ctx.fail(f"a function under nvtx.annotate returned {total}, not 5050")
    ctx.evidence("profiler_attached", bool(nvtx.enabled()))
    return "nvtx: ranges, a mark and an annotated function ran"


def _gradient(ctx: Context) -> Any:
    try:
        numpy = importlib.import_module("numpy")
    except ImportError:
        ctx.fail("numpy is not in the image: nvImageCodec's arrays need it")
    ramp = numpy.arange(SIDE, dtype=numpy.uint8) * (256 // SIDE)
    blue = numpy.full((SIDE, SIDE), 7, numpy.uint8)
    return numpy.stack([*numpy.meshgrid(ramp, ramp[::-1]), blue], axis=-1)


def _cpu_codec(ctx: Context) -> tuple[Any, Any, bytes]:
    """(nvimgcodec, the CPU-only backends, a PNG of the gradient written by them). Without
    `device_id=CPU_ONLY` a coder asks the CUDA runtime for a device first, even for CPU
    backends: on a node without a GPU that is CUDA error 35."""
    codec = at_version(ctx, "nvidia-nvimgcodec-cu13", "nvidia.nvimgcodec")
    backends = [codec.Backend(codec.BackendKind.CPU_ONLY)]
    encoder = codec.Encoder(device_id=codec.NVIMGCODEC_DEVICE_CPU_ONLY, backends=backends)
    stream = encoder.encode(_gradient(ctx), "png")
    if stream is None:
        ctx.fail(f"the CPU encoder wrote no PNG of a {SIDE}x{SIDE} image")
    return codec, backends, bytes(stream)


def check_nvimgcodec(ctx: Context) -> str:
    codec, backends, encoded = _cpu_codec(ctx)
    decoder = codec.Decoder(device_id=codec.NVIMGCODEC_DEVICE_CPU_ONLY, backends=backends)
    decoded = decoder.decode(encoded)
    if decoded is None:
        ctx.fail("the CPU decoder could not read the PNG the CPU encoder wrote")
    numpy = importlib.import_module("numpy")
    _same(ctx, numpy, numpy.asarray(decoded.cpu()), _gradient(ctx), "the CPU decoder")
    return f"nvImageCodec wrote and read a {SIDE}x{SIDE} PNG on the CPU, pixel for pixel"


def check_nvimgcodec_gpu(ctx: Context) -> str:
    """The decoded image moved to the GPU and back (nvImageCodec's CUDA path, through the
    stack's CUDA runtime); which GPU decoders the image has goes to the evidence."""
    codec, backends, encoded = _cpu_codec(ctx)
    numpy = importlib.import_module("numpy")
    on_gpu = codec.Decoder(backends=backends).decode(encoded).cuda()
    _same(ctx, numpy, numpy.asarray(on_gpu.cpu()), _gradient(ctx), "the GPU round trip")
    try:
        codec.Decoder(backends=[codec.Backend(codec.BackendKind.GPU_ONLY)]).decode(encoded)
        ctx.evidence("gpu_decoder", "available")
    except Exception as exc:  # evidence: not every stack has nvJPEG
        ctx.evidence("gpu_decoder", f"{exc.__class__.__name__}: {exc}"[:300])
    return "nvImageCodec's image went to the GPU and came back unchanged"


def _same(ctx: Context, numpy: Any, found: Any, wanted: Any, what: str) -> None:
    if found.shape != wanted.shape or not numpy.array_equal(found, wanted):
        ctx.fail(f"{what} gave {found.shape} pixels unlike the {wanted.shape} gradient")


# A batched half-precision matmul: [4, 16, 32] @ [4, 32, 8].
LEFT, RIGHT, PRODUCT = [4, 16, 32], [4, 32, 8], [4, 16, 8]


def _matmul_graph(cudnn: Any, handle: Any = None) -> tuple[Any, Any, Any, Any]:
    """(graph, A, B, C): cuDNN's frontend graph of the matmul, not yet validated."""
    half, single = cudnn.data_type.HALF, cudnn.data_type.FLOAT
    graph = cudnn.pygraph(handle=handle, io_data_type=half, intermediate_data_type=single,
                          compute_data_type=single)
    left = graph.tensor(name="A", dim=LEFT, stride=[LEFT[1] * LEFT[2], LEFT[2], 1],
                        data_type=half)
    right = graph.tensor(name="B", dim=RIGHT, stride=[RIGHT[1] * RIGHT[2], RIGHT[2], 1],
                         data_type=half)
    product = graph.matmul(left, right, name="matmul")
    product.set_output(True).set_data_type(half)
    return graph, left, right, product


def check_cudnn_frontend(ctx: Context) -> str:
    """The frontend finds the image's cuDNN and validates a matmul graph on the CPU: the
    product's shape is inferred, no GPU asked."""
    cudnn = at_version(ctx, "nvidia-cudnn-frontend", "cudnn")
    backend = cudnn.backend_version()
    ctx.evidence("cudnn_backend_version", backend)
    graph, _, _, product = _matmul_graph(cudnn)
    graph.validate()
    if list(product.get_dim()) != PRODUCT:
        ctx.fail(f"the validated matmul graph gives {product.get_dim()}, not {PRODUCT}")
    return f"cuDNN frontend on cuDNN {backend}: a matmul graph validated, {PRODUCT} inferred"


def check_cudnn_frontend_gpu(ctx: Context) -> str:
    """The graph built into cuDNN's plans and run on the GPU against torch's matmul."""
    cudnn = at_version(ctx, "nvidia-cudnn-frontend", "cudnn")
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        ctx.skip("the GPU run hands cuDNN torch's device tensors: this image has no torch")
    handle = cudnn.create_handle()
    graph, left, right, product = _matmul_graph(cudnn, handle)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    a = torch.randn(*LEFT, device="cuda", dtype=torch.float16)
    b = torch.randn(*RIGHT, device="cuda", dtype=torch.float16)
    c = torch.empty(*PRODUCT, device="cuda", dtype=torch.float16)
    workspace = torch.empty(graph.get_workspace_size(), device="cuda", dtype=torch.uint8)
    graph.execute({left: a, right: b, product: c}, workspace, handle=handle)
    torch.cuda.synchronize()
    error = float((c.float() - (a.float() @ b.float())).abs().max())
    ctx.evidence("max_abs_error", error)
    if error > 0.05:
        ctx.fail(f"cuDNN's matmul differs from torch's by {error} (fp16, K={LEFT[2]})")
    return f"cuDNN ran the matmul graph on the GPU; max error {error:.4f} against torch"


CheckFn = Callable[[Context], str]
# distribution -> (check id, CPU check, GPU check or None)
CHECKS: dict[str, tuple[str, CheckFn, CheckFn | None]] = {
    "nvtx": ("nvtx", check_nvtx, None),
    "nvidia-nvimgcodec-cu13": ("nvimgcodec", check_nvimgcodec, check_nvimgcodec_gpu),
    "nvidia-cudnn-frontend": ("cudnn_frontend", check_cudnn_frontend, check_cudnn_frontend_gpu),
}
