"""TensorFlow validation probe, loaded by the ngc runner from ``/opt/ngc/probes/tensorflow.py``.

Only stdlib, tensorflow (with its keras) and numpy: the runner hands us ``suite`` and ``ctx`` so
we never import it. TensorFlow is imported inside each check, so a broken install fails
``framework.import`` (reported) instead of making this file unloadable. The framework version
itself is checked by the runner's ``framework.version`` (wheel metadata and ``tf.__version__``).

TensorFlow logs freely on stderr and, on a host without a driver, logs that it cannot load
libcuda: neither matters here. The runner keeps our stdout for its JSON document, and every
CPU check pins its work to ``/CPU:0`` so it runs the same with or without a GPU.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

IMPORT_NAME = "tensorflow"
SEED = 0
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
TRAIN_STEPS = 30
F32_TOLERANCE = 1e-4  # max |err| / max |ref| in true fp32 (TF32 off): only summation order
CONV_DILATIONS = (2, 3)  # unequal rates: a height/width mix-up cannot pass
CPU = "/CPU:0"
GPU = "/GPU:0"
# CUDA libraries whose mapped copies are counted: the image must load exactly one of each.
CUDA_SONAMES = re.compile(r"lib(cudart|cublas|cublasLt|cudnn|nccl)\.so[.0-9]*$")


def register(suite: Any) -> None:
    suite.check("tf.build_info", tier="T0")(build_info)
    suite.check("tf.amp_train_cpu", tier="T2")(amp_train_cpu)
    suite.check("tf.dilated_conv_cpu", tier="T2")(dilated_conv_cpu)
    suite.check("tf.gpu.devices", tier="T2", needs_gpu=True)(gpu_devices)
    suite.check("tf.gpu.matmul", tier="T2", needs_gpu=True)(gpu_matmul)
    suite.check("tf.gpu.dilated_conv", tier="T2", needs_gpu=True)(gpu_dilated_conv)
    suite.check("tf.gpu.amp_step", tier="T2", needs_gpu=True)(gpu_amp_step)
    suite.check("tf.gpu.cuda_libraries", tier="T2", needs_gpu=True)(gpu_cuda_libraries)


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


def rel_error(actual: Any, reference: Any) -> float:
    import numpy as np

    ref = np.asarray(reference, dtype=np.float64)
    diff = np.abs(np.asarray(actual, dtype=np.float64) - ref)
    return float(diff.max() / max(float(np.abs(ref).max()), 1e-30))


def compare(ctx: Any, what: str, actual: Any, reference: Any, tolerance: float) -> float:
    error = rel_error(actual, reference)
    ctx.evidence(f"{what}_rel_error", error)
    if not error <= tolerance:  # written so that NaN fails too
        ctx.fail(f"{what}: max error {error:.3g} of max |ref| exceeds {tolerance:g}")
    return error


def major(version: object) -> str:
    return str(version).split(".")[0]


# --- build -------------------------------------------------------------------------------------


def build_info(ctx: Any) -> str:
    """The wheel is a CUDA build for the stack's CUDA and cuDNN majors (no GPU needed)."""
    tf = load_tf()
    info = dict(tf.sysconfig.get_build_info())
    ctx.evidence("build_info", info)
    ctx.evidence("tf_version", tf.version.VERSION)
    ctx.evidence("tf_git_version", tf.version.GIT_VERSION)
    ctx.evidence("keras_version", tf.keras.__version__)
    if not info.get("is_cuda_build"):
        ctx.fail(f"tensorflow {tf.version.VERSION} is not a CUDA build: {info}")
    libraries = ctx.expect.get("libraries", {})
    for key, library in (("cuda_version", "cudart"), ("cudnn_version", "cudnn")):
        built, shipped = info.get(key), libraries.get(library)
        if shipped and major(built) != major(shipped):
            ctx.fail(f"tensorflow was built for {key} {built}, the stack ships {library} {shipped}")
    capabilities = ", ".join(info.get("cuda_compute_capabilities", []))
    return (
        f"tensorflow {tf.version.VERSION}: CUDA {info.get('cuda_version')}, "
        f"cuDNN {info.get('cudnn_version')}, kernels for {capabilities}"
    )


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


# --- mixed precision training ------------------------------------------------------------------


def regression_data(features: int = 8, samples: int = 64) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((samples, features)).astype(np.float32)
    w = rng.standard_normal((features, 1)).astype(np.float32)
    return x, (x @ w + 0.01 * rng.standard_normal((samples, 1))).astype(np.float32)


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


def check_policy(ctx: Any, model: Any) -> None:
    """mixed_float16 must really be in effect, or the step below proves nothing about it."""
    layer = model.layers[0]
    dtypes = {"compute": str(layer.compute_dtype), "variable": str(layer.variable_dtype)}
    ctx.evidence("layer_dtypes", dtypes)
    if dtypes != {"compute": "float16", "variable": "float32"}:
        ctx.fail(f"mixed_float16 policy not in effect: {dtypes}")


def train_mixed(ctx: Any, device: str) -> tuple[list[float], str]:
    """A few loss-scaled SGD steps (tf.GradientTape + LossScaleOptimizer) pinned to ``device``."""
    tf = load_tf()
    x, y = regression_data()
    with tf.device(device):
        model = mixed_model(tf, x.shape[1])
        check_policy(ctx, model)
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(learning_rate=0.05)
        )
        optimizer.build(model.trainable_variables)  # variables made outside the traced step
        x, y = tf.constant(x), tf.constant(y)

        @tf.function
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


def amp_train_cpu(ctx: Any) -> str:
    losses, device = train_mixed(ctx, CPU)
    return summary(losses, device)


# --- dilated convolution -----------------------------------------------------------------------


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


def dilated_conv(ctx: Any, device: str) -> tuple[Any, float]:
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
        compare(ctx, "vs_numpy", dilated.numpy(), reference, F32_TOLERANCE),
        compare(ctx, "vs_spread_kernel", dilated.numpy(), spread.numpy(), F32_TOLERANCE),
    )
    return dilated, error


def dilated_conv_cpu(ctx: Any) -> str:
    out, error = dilated_conv(ctx, CPU)
    return (
        f"conv2d dilations={CONV_DILATIONS} on {out.device}: max rel error {error:.2e} "
        "vs numpy and vs spread kernel"
    )


# --- GPU ---------------------------------------------------------------------------------------


def require_gpu(ctx: Any) -> Any:
    """A GPU was expected, so TensorFlow seeing none is a CPU fallback, never a skip."""
    tf = load_tf()
    gpus = tf.config.list_physical_devices("GPU")
    ctx.evidence("physical_gpus", [gpu.name for gpu in gpus])
    if not gpus:
        ctx.evidence("is_built_with_cuda", tf.test.is_built_with_cuda())
        ctx.cpu_fallback(
            "tf.config.list_physical_devices('GPU') is empty "
            "(see stderr for the CUDA library TensorFlow could not load)"
        )
    return tf


def on_gpu(ctx: Any, what: str, tensor: Any) -> None:
    ctx.evidence(f"{what}_device", tensor.device)
    if not tensor.device.endswith("GPU:0"):
        ctx.cpu_fallback(f"{what} ran on {tensor.device}, not {GPU}")


@contextlib.contextmanager
def no_tf32(tf: Any) -> Iterator[None]:
    """Compare GPU and CPU in true fp32: TF32 (on by default from Ampere) keeps 10 mantissa bits."""
    saved = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        yield
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(saved)


def gpu_devices(ctx: Any) -> str:
    tf = require_gpu(ctx)
    gpu = tf.config.list_physical_devices("GPU")[0]
    details = tf.config.experimental.get_device_details(gpu)
    ctx.evidence("details", details)
    capability = tuple(details.get("compute_capability", ()))
    compiled = list(tf.sysconfig.get_build_info().get("cuda_compute_capabilities", []))
    source = kernel_source(compiled, capability) if len(capability) == 2 else "unknown"
    ctx.evidence("kernels", source)
    if source is None:
        ctx.fail(
            f"tensorflow has no kernels for compute capability {capability} (built for "
            f"{', '.join(compiled)})"
        )
    logical = tf.config.list_logical_devices("GPU")
    ctx.evidence("logical_gpus", [device.name for device in logical])
    if not logical:
        ctx.cpu_fallback("the GPU is listed but no logical GPU device was created")
    return f"{len(logical)} GPU(s): {details.get('device_name')} (compute {capability}, {source})"


def gpu_matmul(ctx: Any) -> str:
    import numpy as np

    tf = require_gpu(ctx)
    rng = np.random.default_rng(SEED)
    a, b = rng.standard_normal((2, 512, 512))
    with no_tf32(tf), tf.device(GPU):
        out = tf.matmul(tf.constant(a, tf.float32), tf.constant(b, tf.float32))
    on_gpu(ctx, "matmul", out)
    error = compare(ctx, "matmul", out.numpy(), a @ b, F32_TOLERANCE)
    return f"f32 matmul on {out.device} vs float64 CPU reference: max rel error {error:.2e}"


def conv_weight_grad(tf: Any, x: Any, w: Any, device: str, rates: tuple[int, int]) -> Any:
    """d(sum(out^2))/dw: on GPU the cuDNN backward-filter path of the dilated conv."""
    with tf.device(device):
        weights = tf.Variable(w)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf_conv(tf, tf.constant(x), weights, rates)))
        return tape.gradient(loss, weights)


def reference_weight_grad(tf: Any, x: Any, w: Any) -> Any:
    """The same gradient on CPU, through the spread kernel at dilation 1.

    TensorFlow's CPU kernels have no dilated backward pass ("Current CPU implementations do not
    yet support dilation rates larger than 1"), but the gradient for each dilated tap is the
    spread kernel's gradient at that tap's position.
    """
    spread = conv_weight_grad(tf, x, spread_kernel(w, CONV_DILATIONS), CPU, (1, 1))
    return spread.numpy()[:: CONV_DILATIONS[0], :: CONV_DILATIONS[1]]


def gpu_dilated_conv(ctx: Any) -> str:
    tf = require_gpu(ctx)
    x, w = conv_inputs()
    with no_tf32(tf):
        out, error = dilated_conv(ctx, GPU)
        on_gpu(ctx, "conv", out)
        grad = conv_weight_grad(tf, x, w, GPU, CONV_DILATIONS)
        on_gpu(ctx, "grad_weight", grad)
        reference = reference_weight_grad(tf, x, w)
    grad_error = compare(ctx, "grad_weight", grad.numpy(), reference, F32_TOLERANCE * 10)
    return (
        f"conv2d dilations={CONV_DILATIONS} on {out.device}: forward max rel error {error:.2e}, "
        f"weight gradient vs CPU spread kernel {grad_error:.2e}"
    )


def gpu_amp_step(ctx: Any) -> str:
    require_gpu(ctx)
    losses, device = train_mixed(ctx, GPU)
    if not device.endswith("GPU:0"):
        ctx.cpu_fallback(f"model variables live on {device}, not {GPU}")
    return summary(losses, device)


def mapped_libraries(maps: Path = Path("/proc/self/maps")) -> dict[str, list[str]]:
    """CUDA libraries mapped into this process: soname stem -> distinct file paths."""
    found: dict[str, set[str]] = {}
    with contextlib.suppress(OSError):
        for line in maps.read_text(encoding="utf-8", errors="replace").splitlines():
            fields = line.split(maxsplit=5)  # address perms offset dev inode [path]
            if len(fields) == 6 and CUDA_SONAMES.search(Path(fields[5]).name):
                stem = Path(fields[5]).name.split(".so")[0]
                found.setdefault(stem, set()).add(fields[5])
    return {stem: sorted(paths) for stem, paths in sorted(found.items())}


def gpu_cuda_libraries(ctx: Any) -> str:
    """After cuBLAS and cuDNN work, each CUDA library must be mapped once, from the stack."""
    tf = require_gpu(ctx)
    x, w = conv_inputs()
    with tf.device(GPU):  # make sure cuBLAS and cuDNN are loaded even if run alone
        tf.matmul(tf.ones((64, 64)), tf.ones((64, 64))).numpy()
        tf_conv(tf, tf.constant(x), tf.constant(w), CONV_DILATIONS).numpy()
    libraries = mapped_libraries()
    ctx.evidence("mapped", libraries)
    twice = {stem: paths for stem, paths in libraries.items() if len(paths) > 1}
    if twice:
        ctx.fail(f"two copies of a CUDA library are loaded: {twice}")
    missing = sorted({"libcublas", "libcudnn"} - set(libraries))  # cudart may be static
    if missing:
        ctx.fail(f"{', '.join(missing)} not loaded after GPU matmul and conv: {libraries}")
    if "wheels" in ctx.expect:  # in an image: the libraries must be the stack's wheels
        foreign = [p for paths in libraries.values() for p in paths if "/nvidia/" not in p]
        if foreign:
            ctx.fail(f"CUDA libraries loaded from outside the stack's nvidia wheels: {foreign}")
    return "one copy each: " + ", ".join(
        f"{stem} ({Path(paths[0]).parent})" for stem, paths in libraries.items()
    )
