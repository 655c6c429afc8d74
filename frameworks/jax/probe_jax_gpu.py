"""The JAX probe's precision matrix (T2), device count (T2) and bf16 GEMM benchmark (T3).

Functions take the device, so the framework tests run the same code on the CPU."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext

SEED = 0
GEMM_SIZE = 8192
GEMM_CALLS = 10
# name -> (dtype, matmul precision, tolerance as max |err| / max |ref| against float64).
# "TF32" is asked for by name (see tf32_precision), never left to what DEFAULT means.
PRECISIONS = {
    "fp32": ("float32", "HIGHEST", 1e-4),
    "tf32": ("float32", "TF32", 1e-2),
    "fp16": ("float16", "DEFAULT", 1e-2),
    "bf16": ("bfloat16", "DEFAULT", 4e-2),
}
# The tf32 row must also show TF32's rounding (ctx.precision_matrix holds it to that): on an
# H100 (jax 0.11.2) the matmul gave 2.6e-07 at HIGHEST and 3.1e-04 in TF32.
TF32_MIN_CAPABILITY = (8, 0)  # Ampere: the first tensor cores with TF32


def tf32_precision(jax: Any) -> Any:
    """TF32 by name: ``DotAlgorithmPreset.TF32_TF32_F32`` (jax 0.4.35+) rounds the inputs to
    TF32 and accumulates in f32, and fails to compile where the device has no TF32. Older jax
    has no presets; there ``Precision.DEFAULT`` is what its docs name TF32 on sm_80+ GPUs.
    ``default_matmul_precision('tensorfloat32')`` would only map to ``Precision.HIGH``."""
    presets = getattr(jax.lax, "DotAlgorithmPreset", None)
    return jax.lax.Precision.DEFAULT if presets is None else presets.TF32_TF32_F32


def tf32_not_applicable(device: Any) -> str | None:
    """Why ``device`` has no TF32 to prove, or None when it has (a GPU of sm_80 or later)."""
    if device.platform != "gpu":
        return f"no TF32 on {device.platform}: the tf32 row would be fp32"
    capability = getattr(device, "compute_capability", None)  # "9.0" on CUDA devices
    parts = str(capability).split(".")
    if capability is None or len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return f"compute capability {capability!r} unknown: TF32 neither claimed nor proven"
    major, minor = int(parts[0]), int(parts[1])
    if (major, minor) < TF32_MIN_CAPABILITY:
        return f"sm_{major}{minor} has no TF32 (sm_80 or later)"
    return None


def matmul_operands() -> tuple[Any, Any, Any]:
    """Two float64 256x256 matrices and their float64 product (the reference)."""
    import numpy as np

    a, b = np.random.default_rng(SEED).standard_normal((2, 256, 256))
    return a, b, a @ b


def matmul_row(ctx: ProbeContext, device: Any, name: str, operands: tuple[Any, Any, Any]) -> float:
    import jax
    import jax.numpy as jnp

    dtype, level, tolerance = PRECISIONS[name]
    a, b, reference = operands
    x = jax.device_put(a.astype("float32"), device).astype(dtype)
    y = jax.device_put(b.astype("float32"), device).astype(dtype)
    precision = tf32_precision(jax) if level == "TF32" else getattr(jax.lax.Precision, level)
    ctx.evidence(f"{name}.precision", str(precision))
    out = jnp.matmul(x, y, precision=precision)
    if {d.platform for d in out.devices()} != {device.platform}:
        ctx.cpu_fallback(f"{name} matmul ran on {out.devices()}, not {device}")
    return float(ctx.compare(f"{name} matmul on {device}", out, reference, tolerance,
                             key=f"{name}.matmul_rel_error"))


def precision_matrix(ctx: ProbeContext, device: Any) -> str:
    """The matmul in each precision on ``device`` against float64; on a GPU with TF32 the tf32
    row must also show TF32's rounding, elsewhere it is left out."""
    operands = matmul_operands()

    def row(name: str) -> tuple[float, float]:
        error = matmul_row(ctx, device, name, operands)
        return error, error

    tolerances = {name: spec[2] for name, spec in PRECISIONS.items()}
    return ctx.precision_matrix(str(device), tolerances, row, tf32_not_applicable(device))


def device_count(ctx: ProbeContext, devices: list[Any]) -> str:
    ctx.evidence("devices", [f"{d} ({d.device_kind})" for d in devices])
    if len(devices) != ctx.host_gpus:
        ctx.fail(f"jax sees {len(devices)} GPU(s), the host passed {ctx.host_gpus} "
                 f"({ctx.gpu_count_hint()})")
    return f"jax sees all {len(devices)} GPU(s): {devices[0].device_kind}"


def gemm_bf16(ctx: ProbeContext, device: Any) -> str:
    """8192^3 bf16 GEMM, jitted; a sample times GEMM_CALLS calls, ended by block_until_ready."""
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.key(SEED))
    a, b = (jax.device_put(jax.random.normal(k, (GEMM_SIZE, GEMM_SIZE), jnp.bfloat16), device)
            for k in keys)
    matmul = jax.jit(jnp.matmul)
    ctx.evidence("command", f"jax.jit(jnp.matmul) {GEMM_SIZE}^3 bfloat16, {GEMM_CALLS} calls "
                            "per sample, wall clock to block_until_ready")

    def sample() -> float:
        start = time.perf_counter()
        for _ in range(GEMM_CALLS):
            out = matmul(a, b)
        out.block_until_ready()
        return 2 * GEMM_SIZE**3 * GEMM_CALLS / (time.perf_counter() - start) / 1e12

    return ctx.measure("gemm_bf16_tflops", "TFLOP/s", sample)


def select_platform(ctx: ProbeContext) -> None:
    """On a host with no GPU, ask JAX for its CPU platform before any backend starts.

    Left to discover plugins on its own, JAX 0.12's CUDA 13 plugin segfaults in its CUPTI
    version probe when no NVIDIA driver is loaded: users of the image on a CPU-only machine
    must set JAX_PLATFORMS=cpu, and so does this probe. With a GPU expected nothing is
    forced, so the CUDA plugin is exercised by the GPU checks.
    """
    import jax

    if not ctx.gpu_expected:
        jax.config.update("jax_platforms", "cpu")
        ctx.evidence("jax_platforms", "cpu (no GPU expected)")
