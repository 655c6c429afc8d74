"""The JAX probe's precision matrix (T2), device count (T2) and bf16 GEMM benchmark (T3).

Functions take the device, so the framework tests run the same code on the CPU."""

from __future__ import annotations

import time
from typing import Any

SEED = 0
GEMM_SIZE = 8192
GEMM_CALLS = 10
# name -> (dtype, matmul precision, tolerance as max |err| / max |ref| against float64).
# "DEFAULT" precision of an f32 matmul on the GPU is TF32 (10-bit mantissa) on tensor cores.
PRECISIONS = {
    "fp32": ("float32", "HIGHEST", 1e-4),
    "tf32": ("float32", "DEFAULT", 1e-2),
    "fp16": ("float16", "DEFAULT", 1e-2),
    "bf16": ("bfloat16", "DEFAULT", 4e-2),
}


def precision_matrix(ctx: Any, device: Any) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np

    a, b = np.random.default_rng(SEED).standard_normal((2, 256, 256))
    reference = a @ b
    worst = {}
    for name, (dtype, precision, tolerance) in PRECISIONS.items():
        x = jax.device_put(a.astype(np.float32), device).astype(dtype)
        y = jax.device_put(b.astype(np.float32), device).astype(dtype)
        out = jnp.matmul(x, y, precision=getattr(jax.lax.Precision, precision))
        if {d.platform for d in out.devices()} != {device.platform}:
            ctx.cpu_fallback(f"{name} matmul ran on {out.devices()}, not {device}")
        worst[name] = ctx.compare(f"{name} matmul on {device}", out, reference, tolerance,
                                  key=f"{name}.matmul_rel_error")
    return "matmul max rel error vs float64: " + ", ".join(
        f"{name} {error:.1e} (<= {PRECISIONS[name][2]:g})" for name, error in worst.items())


def device_count(ctx: Any, devices: list[Any]) -> str:
    ctx.evidence("devices", [f"{d} ({d.device_kind})" for d in devices])
    if len(devices) != ctx.host_gpus:
        ctx.fail(f"jax sees {len(devices)} GPU(s), the host passed {ctx.host_gpus} "
                 "(CUDA_VISIBLE_DEVICES set in the image?)")
    return f"jax sees all {len(devices)} GPU(s): {devices[0].device_kind}"


def gemm_bf16(ctx: Any, device: Any) -> str:
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
