"""JAX validation probe, loaded by the ngc runner from ``/opt/ngc/probes/jax/probe.py``.

Only stdlib, jax and numpy: the runner hands us ``suite`` and ``ctx`` so we never import it.
JAX is imported inside each check, so a broken install fails ``framework.import`` (reported)
instead of making this file unloadable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import probe_jax_devel
import probe_jax_dist
import probe_jax_gpu
from probe_jax_gpu import select_platform

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "jax"
SEED = 0
BF16_TOLERANCE = 2e-2  # max |err| / max |ref|; bf16 keeps 8 significant bits (~0.4 %/element)
F32_GPU_TOLERANCE = 1e-2  # f32 GPU matmul may run in TF32 (10-bit mantissa) by default
CONV_TOLERANCE = 1e-4  # both sides at Precision.HIGHEST: only summation order differs
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first


def register(suite: ProbeSuite) -> None:
    probe_jax_dist.register(suite)
    probe_jax_devel.register(suite)
    suite.check("jax.train_cpu", tier="T2")(train_cpu)
    # The emulated tier's one operation: XLA compiles and runs the platform's own code.
    suite.check("jax.bf16_matmul", tier="T2", emulated=True)(bf16_matmul)
    suite.check("jax.precision_cpu", tier="T2")(precision_cpu)
    suite.check("jax.gpu.device_count", tier="T2", needs_gpu=True)(gpu_device_count)
    suite.check("jax.gpu.tensor_op", tier="T2", needs_gpu=True)(gpu_tensor_op)
    suite.check("jax.gpu.precision_matrix", tier="T2", needs_gpu=True)(gpu_precision_matrix)
    suite.check("jax.gpu.conv", tier="T2", needs_gpu=True)(gpu_conv)
    suite.check("jax.gpu.amp_step", tier="T2", needs_gpu=True)(gpu_amp_step)
    suite.check("jax.bench.gemm_bf16", tier="T3", needs_gpu=True)(gemm_bf16)


def precision_cpu(ctx: ProbeContext) -> str:
    import jax

    select_platform(ctx)
    return probe_jax_gpu.precision_matrix(ctx, jax.devices("cpu")[0])


def gpu_precision_matrix(ctx: ProbeContext) -> str:
    return probe_jax_gpu.precision_matrix(ctx, gpu_device(ctx))


def gpu_device_count(ctx: ProbeContext) -> str:
    import jax

    gpu_device(ctx)
    return probe_jax_gpu.device_count(ctx, jax.devices("gpu"))


def gemm_bf16(ctx: ProbeContext) -> str:
    return probe_jax_gpu.gemm_bf16(ctx, gpu_device(ctx))


def mlp_params(features: int, hidden: int = 16) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(SEED + 1)
    return {
        "w1": (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
    }


def mse(params: dict[str, Any], x: Any, y: Any, dtype: Any = None) -> Any:
    """MLP regression loss; with ``dtype`` the forward pass runs in it (mixed precision)."""
    import jax
    import jax.numpy as jnp

    if dtype is not None:
        params = jax.tree_util.tree_map(lambda p: p.astype(dtype), params)
        x = x.astype(dtype)
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    prediction = (hidden @ params["w2"]).astype(jnp.float32)
    return jnp.mean((prediction - y) ** 2)


def train(
    ctx: ProbeContext, device: Any, steps: int = 30, dtype: Any = None, lr: float = 0.05
) -> str:
    """A few jitted SGD steps on ``device``; the loss must fall."""
    import jax
    import numpy as np

    data = ctx.regression_data(seed=SEED)
    x, y = (jax.device_put(np.asarray(a, np.float32), device) for a in data)
    params = jax.device_put(mlp_params(x.shape[1]), device)
    grad = jax.jit(jax.value_and_grad(lambda p: mse(p, x, y, dtype)))
    first, last = None, None
    for _ in range(steps):
        loss, grads = grad(params)
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        first = float(loss) if first is None else first
        last = float(loss)
    ctx.evidence("platform", sorted(d.platform for d in loss.devices()))
    ctx.evidence("loss_first", first)
    ctx.evidence("loss_last", last)
    if first is None or last is None or not last < LOSS_DROP * first:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {first} -> {last}")
    return f"loss {first:.4f} -> {last:.4f} in {steps} steps on {device.platform}"


def train_cpu(ctx: ProbeContext) -> str:
    import jax

    select_platform(ctx)
    return train(ctx, jax.devices("cpu")[0])


def bf16_matmul(ctx: ProbeContext) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np

    select_platform(ctx)

    rng = np.random.default_rng(SEED)
    a, b = rng.standard_normal((2, 64, 64))
    cpu = jax.devices("cpu")[0]
    out = jnp.matmul(
        jax.device_put(a.astype(np.float32), cpu).astype(jnp.bfloat16),
        jax.device_put(b.astype(np.float32), cpu).astype(jnp.bfloat16),
    )
    return ctx.assert_close(f"bf16 matmul {out.dtype}", out, a @ b, BF16_TOLERANCE)


def gpu_device(ctx: ProbeContext) -> Any:
    """The first GPU; a GPU was expected, so seeing none is a CPU fallback, never a skip."""
    import jax

    try:
        devices = jax.devices("gpu")
    except RuntimeError as exc:  # jax raises when no GPU backend initialised; say why
        ctx.evidence("default_devices", [str(d) for d in jax.devices()])
        ctx.cpu_fallback(f"jax has no GPU backend: {exc}")
    if not devices:
        ctx.cpu_fallback(f"jax.devices() = {jax.devices()}")
    ctx.evidence("device", f"{devices[0]} ({devices[0].device_kind})")
    return devices[0]


def gpu_tensor_op(ctx: ProbeContext) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np

    device = gpu_device(ctx)
    rng = np.random.default_rng(SEED)
    a, b = rng.standard_normal((2, 512, 512))
    out = jnp.matmul(
        jax.device_put(a.astype(np.float32), device), jax.device_put(b.astype(np.float32), device)
    )
    platforms = sorted(d.platform for d in out.devices())
    if platforms != ["gpu"]:
        ctx.cpu_fallback(f"matmul result lives on {platforms}")
    return ctx.assert_close(f"f32 matmul on {device}", out, a @ b, F32_GPU_TOLERANCE)


def conv(x: Any, w: Any) -> Any:
    """A padded, dilated 2D convolution (NCHW/OIHW); cuDNN runs it on GPU."""
    from jax import lax

    return lax.conv_general_dilated(
        x,
        w,
        window_strides=(1, 1),
        padding="SAME",
        rhs_dilation=(2, 2),
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
        precision=lax.Precision.HIGHEST,
    )


def gpu_conv(ctx: ProbeContext) -> str:
    import jax
    import numpy as np

    device = gpu_device(ctx)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((4, 3, 32, 32)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    on_gpu = conv(jax.device_put(x, device), jax.device_put(w, device))
    cpu = jax.devices("cpu")[0]
    on_cpu = conv(jax.device_put(x, cpu), jax.device_put(w, cpu))
    return ctx.assert_close("dilated conv GPU vs CPU", on_gpu, on_cpu, CONV_TOLERANCE)


def gpu_amp_step(ctx: ProbeContext) -> str:
    import jax.numpy as jnp

    # bf16 forward with f32 master weights and loss: bf16's f32-sized exponent needs no scaling.
    return train(ctx, gpu_device(ctx), dtype=jnp.bfloat16)
