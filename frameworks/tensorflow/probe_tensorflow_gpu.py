"""The TensorFlow probe's GPU checks (registered by probe.py with needs_gpu=True)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probe_tensorflow_lib import (
    CONV_DILATIONS,
    CPU,
    CUDA_SONAMES,
    F32_TOLERANCE,
    GPU,
    SEED,
    conv_inputs,
    dilated_conv,
    kernel_source,
    load_tf,
    spread_kernel,
    summary,
    tf_conv,
    train_mixed,
)

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext


def require_gpu(ctx: ProbeContext) -> Any:
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


def on_gpu(ctx: ProbeContext, what: str, tensor: Any) -> None:
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


def gpu_devices(ctx: ProbeContext) -> str:
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


def gpu_matmul(ctx: ProbeContext) -> str:
    import numpy as np

    tf = require_gpu(ctx)
    rng = np.random.default_rng(SEED)
    a, b = rng.standard_normal((2, 512, 512))
    with no_tf32(tf), tf.device(GPU):
        out = tf.matmul(tf.constant(a, tf.float32), tf.constant(b, tf.float32))
    on_gpu(ctx, "matmul", out)
    error = ctx.compare("matmul", out.numpy(), a @ b, F32_TOLERANCE)
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


def gpu_dilated_conv(ctx: ProbeContext) -> str:
    tf = require_gpu(ctx)
    x, w = conv_inputs()
    with no_tf32(tf):
        out, error = dilated_conv(ctx, GPU)
        on_gpu(ctx, "conv", out)
        grad = conv_weight_grad(tf, x, w, GPU, CONV_DILATIONS)
        on_gpu(ctx, "grad_weight", grad)
        reference = reference_weight_grad(tf, x, w)
    grad_error = ctx.compare("grad_weight", grad.numpy(), reference, F32_TOLERANCE * 10)
    return (
        f"conv2d dilations={CONV_DILATIONS} on {out.device}: forward max rel error {error:.2e}, "
        f"weight gradient vs CPU spread kernel {grad_error:.2e}"
    )


def gpu_amp_step(ctx: ProbeContext) -> str:
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


def gpu_cuda_libraries(ctx: ProbeContext) -> str:
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
