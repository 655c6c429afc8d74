"""``torch.gpu.cudnn_benchmark``: proof that ``cudnn.benchmark`` autotunes, then its numbers.

Why the proof counts kernels. PyTorch keeps one cuDNN plan cache per process (ATen's
``cudnn/Conv_v8.cpp``; ``Conv_v7.cpp`` before it) keyed by the conv's shapes, dtype, layout,
padding, stride, dilation, groups and the deterministic and TF32 flags, but not by the
benchmark flag: a shape that ran once in heuristic mode (``torch.gpu.cudnn_conv`` runs
``conv_fwd_bwd``'s just before) is served from that cache in benchmark mode too, and nothing is
autotuned. Hence a shape no other check uses, made new on each call. On a cache miss benchmark
mode runs each candidate plan several times, a warm-up and timed runs (at most
``cudnn.benchmark_limit`` candidates, 10 by default), before it runs the winner; heuristic
mode runs one plan once. So the first benchmark-mode call launches several times the kernels
of a repeat call (an H100 with cuDNN 9.19: 63 against 1; with ``benchmark_limit = 1`` still 3
against 1), which torch.profiler (CUPTI) counts without timing anything, so a loaded or slow
GPU can neither fake nor hide it.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from probe_pytorch_lib import (
    CUDNN_TOLERANCE,
    compare_parts,
    conv_fwd_bwd,
    cudnn_version,
    no_tf32,
    require_cuda,
)

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext

# The first call must launch at least this many times the kernels of a repeat call: the least
# autotuning can do (one candidate, benchmark_limit = 1) measured 3x, a cache hit is 1x.
AUTOTUNE_FACTOR = 2
NOT_KERNELS = ("Memcpy", "Memset")  # CUPTI reports copies and memsets among the GPU activity
_calls = itertools.count()

Shapes = tuple[tuple[int, ...], tuple[int, ...]]


def fresh_shapes() -> Shapes:
    """An (input, weight) pair used by no other check, and new on every call: cuDNN's plan
    cache lives as long as the process, so a shape seen before would not be autotuned again."""
    return (3, 6, 19, 27 + next(_calls)), (10, 6, 3, 3)


@contextlib.contextmanager
def benchmark_mode(torch: Any) -> Iterator[None]:
    saved = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = saved


def gpu_kernels(torch: Any, work: Callable[[], object]) -> list[str]:
    """The GPU kernels ``work`` launches, by name, as CUPTI records them."""
    profiler = torch.profiler
    with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]) as recorded:
        work()
        torch.cuda.synchronize()
    cuda = torch.autograd.DeviceType.CUDA
    return [event.name for event in recorded.events()
            if event.device_type == cuda and not event.name.startswith(NOT_KERNELS)]


def autotune_kernels(ctx: ProbeContext, torch: Any, shapes: Shapes) -> tuple[list[str], list[str]]:
    """Kernels of the first and of a repeat benchmark-mode conv on ``shapes`` (forward only:
    one cuDNN search, not diluted by the autograd kernels around a backward)."""
    profiler = torch.profiler
    if profiler.ProfilerActivity.CUDA not in profiler.supported_activities():
        ctx.skip("torch.profiler cannot record CUDA activity in this build (no CUPTI/kineto): "
                 "cannot tell whether cudnn.benchmark autotunes")
    x, w = (torch.randn(shape, device="cuda") for shape in shapes)
    # Also warms CUPTI up, so that its start-up stays out of the measured calls.
    if not gpu_kernels(torch, lambda: x + 1):
        ctx.skip("torch.profiler recorded no CUDA kernel for an elementwise add (CUPTI "
                 "unavailable?): cannot tell whether cudnn.benchmark autotunes")

    def conv() -> object:
        return torch.nn.functional.conv2d(x, w, padding=1)

    return gpu_kernels(torch, conv), gpu_kernels(torch, conv)


def judge_autotune(ctx: ProbeContext, first: list[str], repeat: list[str]) -> None:
    ctx.evidence("kernels_first_call", len(first))
    ctx.evidence("kernels_repeat_call", len(repeat))
    ctx.evidence("distinct_kernels_first_call", sorted(set(first)))
    if len(first) < AUTOTUNE_FACTOR * max(len(repeat), 1):
        ctx.fail(f"cudnn.benchmark did not autotune: the first conv on a new shape launched "
                 f"{len(first)} GPU kernel(s), a repeat {len(repeat)}; a search times several "
                 f"candidates, so at least {AUTOTUNE_FACTOR}x was expected")


def gpu_cudnn_benchmark(ctx: ProbeContext) -> str:
    """``cudnn.benchmark=True`` on a new shape: the first call autotunes (kernel counts above),
    later calls reuse the chosen plans. cuDNN's forward algorithms are all deterministic, so
    two forwards must be bit-identical; backward algorithms may use atomics, so gradients are
    held to the float64 reference only."""
    torch = require_cuda(ctx)
    version = cudnn_version(ctx, torch)
    shapes = fresh_shapes()
    ctx.evidence("shapes", shapes)
    ctx.evidence("benchmark_limit", getattr(torch.backends.cudnn, "benchmark_limit", None))
    with benchmark_mode(torch), no_tf32(torch):
        first, repeat = autotune_kernels(ctx, torch, shapes)
        runs = [conv_fwd_bwd(torch, "cuda", 1, 1, shapes=shapes) for _ in range(2)]
        torch.cuda.synchronize()
    judge_autotune(ctx, first, repeat)
    if not torch.equal(runs[0][0], runs[1][0]):
        diff = (runs[0][0] - runs[1][0]).abs().max().item()
        ctx.fail(f"autotuned conv: two runs differ (max |diff| {diff:.3g})")
    reference = conv_fwd_bwd(torch, "cpu", 1, 1, dtype=torch.float64, shapes=shapes)
    error = compare_parts(ctx, "benchmark_vs_f64", runs[1], reference, CUDNN_TOLERANCE)
    return (f"cuDNN {version} benchmark mode autotuned ({len(first)} kernels on the first call, "
            f"{len(repeat)} on a repeat); 2 runs bit-identical, vs f64 max rel error {error:.2e}")
