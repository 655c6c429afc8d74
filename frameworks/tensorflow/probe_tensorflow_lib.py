"""Helpers shared by the TensorFlow probe's CPU and GPU checks (see probe.py)."""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext

SEED = 0


LOSS_DROP = 0.5  # the final loss must be below this fraction of the first


TRAIN_STEPS = 30


F32_TOLERANCE = 1e-4  # max |err| / max |ref| in true fp32 (TF32 off): only summation order


CONV_DILATIONS = (2, 3)  # unequal rates: a height/width mix-up cannot pass


CPU = "/CPU:0"


GPU = "/GPU:0"


# CUDA libraries whose mapped copies are counted: the image must load exactly one of each.
CUDA_SONAMES = re.compile(r"lib(cudart|cublas|cublasLt|cudnn|nccl)\.so[.0-9]*$")


def load_tf() -> Any:
    """Import TensorFlow; ask for GPU memory on demand, not all of it at the first op.

    Memory growth can only be set before the GPUs are initialised: the first check that runs
    sets it, later calls find it set (RuntimeError) and leave it.
    """
    import tensorflow as tf

    for gpu in tf.config.list_physical_devices("GPU"):
        with contextlib.suppress(RuntimeError, ValueError):
            tf.config.experimental.set_memory_growth(gpu, True)
    return tf


def major(version: object) -> str:
    return str(version).split(".")[0]


def kernel_source(capabilities: list[str], device: tuple[int, int]) -> str | None:
    """How this GPU gets kernels: SASS built for it (sm_XY), or PTX the driver JIT-compiles
    (compute_XY for it or an older GPU); None if the build has neither.

    TensorFlow 2.21's wheels carry compute_90 but no sm_90: an H100 runs on JIT-compiled PTX,
    so its first kernels are slow to start (the driver caches them afterwards).
    """
    wanted = device[0] * 10 + device[1]
    ptx = []
    for item in capabilities:
        kind, _, number = item.partition("_")
        if not number.isdigit():
            continue
        if kind == "sm" and int(number) == wanted:
            return f"SASS {item}"
        if kind == "compute" and int(number) <= wanted:
            ptx.append(int(number))
    return f"PTX JIT from compute_{max(ptx)}" if ptx else None


def mixed_model(tf: Any, features: int) -> Any:
    """An MLP under the mixed_float16 policy: float16 compute, float32 variables."""
    keras = tf.keras
    policy = keras.mixed_precision.DTypePolicy("mixed_float16")
    return keras.Sequential(
        [
            keras.Input((features,)),
            keras.layers.Dense(
                16,
                activation="relu",
                dtype=policy,
                kernel_initializer=keras.initializers.GlorotUniform(seed=SEED),
            ),
            keras.layers.Dense(
                1, dtype=policy, kernel_initializer=keras.initializers.GlorotUniform(seed=SEED + 1)
            ),
        ]
    )


def check_policy(ctx: ProbeContext, model: Any) -> None:
    """mixed_float16 must really be in effect, or the step below proves nothing about it."""
    layer = model.layers[0]
    dtypes = {"compute": str(layer.compute_dtype), "variable": str(layer.variable_dtype)}
    ctx.evidence("layer_dtypes", dtypes)
    if dtypes != {"compute": "float16", "variable": "float32"}:
        ctx.fail(f"mixed_float16 policy not in effect: {dtypes}")


def train_mixed(ctx: ProbeContext, device: str) -> tuple[list[float], str]:
    """A few loss-scaled SGD steps (tf.GradientTape + LossScaleOptimizer) pinned to ``device``."""
    tf = load_tf()
    x, y = ctx.regression_data(seed=SEED)
    with tf.device(device):
        model = mixed_model(tf, len(x[0]))
        check_policy(ctx, model)
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=0.05)
        )
        optimizer.build(model.trainable_variables)  # variables made outside the traced step
        x, y = tf.constant(x, tf.float32), tf.constant(y, tf.float32)

        # tf is untyped to mypy (no framework in the builder's venv), so is its decorator.
        @tf.function  # type: ignore[untyped-decorator]
        def step() -> Any:
            with tf.GradientTape() as tape:
                prediction = tf.cast(model(x, training=True), tf.float32)
                loss = tf.reduce_mean(tf.square(prediction - y))
                scaled = optimizer.scale_loss(loss)
            grads = tape.gradient(scaled, model.trainable_variables)
            optimizer.apply(grads, model.trainable_variables)  # unscales, skips non-finite
            return loss

        losses = [float(step()) for _ in range(TRAIN_STEPS)]
    placed = model.trainable_variables[0]
    ctx.evidence("variable_device", str(getattr(placed, "value", placed).device))
    ctx.evidence("loss_scale", float(optimizer.dynamic_scale))
    ctx.evidence("loss_first", losses[0])
    ctx.evidence("loss_last", losses[-1])
    if not losses[-1] < LOSS_DROP * losses[0]:  # NaN fails too
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {losses[0]} -> {losses[-1]}")
    return losses, str(getattr(placed, "value", placed).device)


def summary(losses: list[float], device: str) -> str:
    return (
        f"mixed_float16 loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} "
        f"loss-scaled steps on {device}"
    )


def conv_inputs() -> tuple[Any, Any]:
    """NHWC input, HWIO kernel."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((2, 17, 19, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    return x, w


def numpy_dilated_conv(x: Any, w: Any, rates: tuple[int, int]) -> Any:
    """'SAME' dilated convolution in float64, written out as a sum over kernel taps."""
    import numpy as np

    batch, height, width, _ = x.shape
    kh, kw, _, channels = w.shape
    pads = []
    for k, rate in ((kh, rates[0]), (kw, rates[1])):
        total = (k - 1) * rate  # effective kernel size - 1, at stride 1
        pads.append((total // 2, total - total // 2))
    padded = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    out = np.zeros((batch, height, width, channels))
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * rates[0], i * rates[0] + height)
            cols = slice(j * rates[1], j * rates[1] + width)
            out += np.einsum("nhwc,co->nhwo", padded[:, rows, cols, :], w[i, j].astype(np.float64))
    return out


def spread_kernel(w: Any, rates: tuple[int, int]) -> Any:
    """The dilated kernel written out: taps ``rate`` apart with zeros between."""
    import numpy as np

    kh, kw, cin, cout = w.shape
    spread = np.zeros(((kh - 1) * rates[0] + 1, (kw - 1) * rates[1] + 1, cin, cout), w.dtype)
    spread[:: rates[0], :: rates[1]] = w
    return spread


def tf_conv(tf: Any, x: Any, w: Any, rates: tuple[int, int]) -> Any:
    return tf.nn.conv2d(x, w, strides=1, padding="SAME", dilations=[1, *rates, 1])


def dilated_conv(ctx: ProbeContext, device: str) -> tuple[Any, float]:
    """tf.nn.conv2d with dilations vs numpy taps, and vs the spread kernel at dilation 1."""
    tf = load_tf()
    x, w = conv_inputs()
    reference = numpy_dilated_conv(x, w, CONV_DILATIONS)
    with tf.device(device):
        dilated = tf_conv(tf, tf.constant(x), tf.constant(w), CONV_DILATIONS)
        spread = tf_conv(tf, tf.constant(x), tf.constant(spread_kernel(w, CONV_DILATIONS)), (1, 1))
    ctx.evidence("output_device", dilated.device)
    ctx.evidence("output_shape", list(dilated.shape))
    if tuple(dilated.shape) != reference.shape:
        ctx.fail(f"output shape {tuple(dilated.shape)}, expected {reference.shape} ('SAME')")
    error = max(
        ctx.compare("vs_numpy", dilated.numpy(), reference, F32_TOLERANCE),
        ctx.compare("vs_spread_kernel", dilated.numpy(), spread.numpy(), F32_TOLERANCE),
    )
    return dilated, error
