"""PyTensor validation probe, loaded by the ngc runner from ``/opt/ngc/probes/pytensor.py``.

Only stdlib, pytensor and numpy. PyTensor 3 compiles graphs with Numba by default (its C
backend needs a C++ compiler, which this image does not carry). PyTensor has no CUDA backend
of its own: a graph reaches a GPU only through its JAX linker (``mode="JAX"``) with a CUDA
build of JAX installed, so that is what the GPU check tries.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "pytensor"
SEED = 0
TOLERANCE = 1e-10  # max |err| / max |ref|; float64 (PyTensor's default floatX) on both sides
GPU_TOLERANCE = 1e-2  # f32 GPU matmul may run in TF32 under JAX's default precision
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first


def register(suite: ProbeSuite) -> None:
    suite.check("pytensor.function", tier="T2", emulated=True)(function)
    suite.check("pytensor.grad", tier="T2")(grad)
    suite.check("pytensor.train", tier="T2")(train)
    suite.check("pytensor.gpu.function", tier="T2", needs_gpu=True)(gpu_function)


def tanh_dot(mode: str | None = None) -> Any:
    import pytensor
    import pytensor.tensor as pt

    x, w = pt.matrix("x"), pt.matrix("w")
    return pytensor.function([x, w], pt.tanh(x @ w), mode=mode)


def inputs(dtype: str = "float64") -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(SEED)
    return (
        rng.standard_normal((64, 32)).astype(dtype),
        rng.standard_normal((32, 16)).astype(dtype),
    )


def function(ctx: ProbeContext) -> str:
    """Compile tanh(x @ w) with the default linker (Numba) and compare it with numpy."""
    import numpy as np
    import pytensor

    f = tanh_dot()
    linker = type(f.maker.linker).__name__
    ctx.evidence("linker", linker)
    ctx.evidence("ops", [type(node.op).__name__ for node in f.maker.fgraph.toposort()])
    ctx.evidence("cxx", pytensor.config.cxx)
    a, b = inputs()
    out = f(a, b)
    if out.shape != (64, 16):
        ctx.fail(f"output shape {out.shape}, expected (64, 16)")
    return ctx.assert_close(f"tanh(dot) via {linker}", out, np.tanh(a @ b), TOLERANCE)


def grad(ctx: ProbeContext) -> str:
    """d/ds (s^3 sin s + exp(s/2)) from pytensor.grad against the analytic derivative."""
    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    s = pt.vector("s")
    # Elementwise, so the gradient of the sum is the derivative at each point.
    f = pytensor.function([s], pytensor.grad(pt.sum(s**3 * pt.sin(s) + pt.exp(s / 2)), s))
    points = np.linspace(-2.0, 2.0, 9)
    want = 3 * points**2 * np.sin(points) + points**3 * np.cos(points) + np.exp(points / 2) / 2
    return ctx.assert_close("grad vs analytic at 9 points", f(points), want, TOLERANCE)


def line_data() -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(256)
    return x, 3.0 * x - 1.0 + 0.01 * rng.standard_normal(256)


def train(ctx: ProbeContext, steps: int = 30, lr: float = 0.1) -> str:
    """SGD on shared variables through `updates`; the loss must fall.

    Elementwise on purpose: Numba's first compile of a BLAS dot costs ~10 s per new layout,
    and `pytensor.function` has already paid it once; this check is about grad + updates.
    """
    import pytensor
    import pytensor.tensor as pt

    x_data, y_data = line_data()
    x, y = pt.vector("x"), pt.vector("y")
    slope, intercept = pytensor.shared(0.0, name="slope"), pytensor.shared(0.0, name="intercept")
    loss = pt.mean((slope * x + intercept - y) ** 2)
    grads = pytensor.grad(loss, [slope, intercept])
    updates = [(p, p - lr * g) for p, g in zip([slope, intercept], grads, strict=True)]
    step = pytensor.function([x, y], loss, updates=updates)
    seen = [float(step(x_data, y_data)) for _ in range(steps)]
    ctx.evidence("loss_first", seen[0])
    ctx.evidence("loss_last", seen[-1])
    ctx.evidence("fitted", [float(slope.get_value()), float(intercept.get_value())])
    if not seen[-1] < LOSS_DROP * seen[0]:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {seen[0]} -> {seen[-1]}")
    return f"SGD loss {seen[0]:.4f} -> {seen[-1]:.4f} in {steps} steps"


def jax_gpu(ctx: ProbeContext) -> Any:
    """JAX's first GPU, or a CPU fallback saying why PyTensor cannot reach one here."""
    if importlib.util.find_spec("jax") is None:
        ctx.cpu_fallback(
            "PyTensor has no CUDA backend of its own and this image has no CUDA build of JAX "
            "for its JAX linker (mode='JAX'): graphs run on the CPU (Numba)"
        )
    import jax

    try:
        devices = jax.devices("gpu")
    except RuntimeError as exc:  # raised when no GPU backend initialised
        ctx.cpu_fallback(f"jax is installed but has no GPU backend: {exc}")
    return devices[0]


def gpu_function(ctx: ProbeContext) -> str:
    """tanh(x @ w) through PyTensor's JAX linker on JAX's GPU, checked against numpy."""
    import numpy as np

    device = jax_gpu(ctx)
    import jax  # only now: jax_gpu() has made sure it is installed
    ctx.evidence("device", f"{device} ({device.device_kind})")
    a, b = inputs("float32")
    with jax.default_device(device):
        out = tanh_dot("JAX")(a, b)
    placed = sorted(d.platform for d in getattr(out, "devices", lambda: set())())
    ctx.evidence("result_platforms", placed)
    if placed and placed != ["gpu"]:
        ctx.cpu_fallback(f"the JAX linker's result lives on {placed}")
    reference = np.tanh(a.astype(np.float64) @ b.astype(np.float64))
    return ctx.assert_close(f"tanh(dot) via JAX on {device}", out, reference, GPU_TOLERANCE)
