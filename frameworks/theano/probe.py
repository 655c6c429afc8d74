"""Theano validation probe, loaded by the ngc runner from ``/opt/ngc/probes/theano.py``.

Only stdlib, theano and numpy. Theano reads its device from THEANO_FLAGS once, at import, and
the runner has imported it for the CPU by then: the GPU check therefore runs in a child process
started with ``device=cuda0``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "theano"
SEED = 0
TOLERANCE = 1e-6  # max |err| / max |ref|; float64 (Theano's default floatX) on both sides
GPU_TOLERANCE = 1e-4  # float32 on the GPU
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
CHILD_TIMEOUT_S = 300  # a first GPU compile builds several C modules

# The child exits with this code when Theano could not bring up its GPU backend.
NO_BACKEND_EXIT = 3
GPU_CHILD = """
import sys
import numpy as np
import theano
import theano.gpuarray
import theano.tensor as T

if not theano.gpuarray.pygpu_activated:
    sys.exit(NO_BACKEND_EXIT)
x, w = T.matrix("x"), T.matrix("w")
f = theano.function([x, w], T.tanh(T.dot(x, w)))
ops = sorted({type(node.op).__name__ for node in f.maker.fgraph.toposort()})
print("ops", ",".join(ops))
rng = np.random.default_rng(0)
a = rng.standard_normal((64, 32)).astype("float32")
b = rng.standard_normal((32, 16)).astype("float32")
ref = np.tanh(a.astype("float64") @ b.astype("float64"))
print("error", float(np.abs(f(a, b) - ref).max() / np.abs(ref).max()))
""".replace("NO_BACKEND_EXIT", str(NO_BACKEND_EXIT))


def register(suite: ProbeSuite) -> None:
    suite.check("theano.c_compiler", tier="T0")(c_compiler)
    suite.check("theano.function", tier="T2", emulated=True)(function)
    suite.check("theano.grad", tier="T2")(grad)
    suite.check("theano.train", tier="T2")(train)
    suite.check("theano.gpu.function", tier="T2", needs_gpu=True)(gpu_function)


def c_compiler(ctx: ProbeContext) -> str:
    """Theano without a C++ compiler runs every graph in pure Python, a silent slow fallback."""
    import theano

    ctx.evidence("cxx", theano.config.cxx)
    ctx.evidence("linker", theano.config.linker)
    ctx.evidence("blas_ldflags", theano.config.blas.ldflags)
    # -lblas is Debian's alternatives link: record which BLAS it resolves to (OpenBLAS).
    ctx.evidence("libblas_so", os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so"))
    ctx.evidence("compiledir", theano.config.compiledir)
    if not theano.config.cxx:
        ctx.fail("theano.config.cxx is empty: no C++ compiler, graphs would run in pure Python")
    if not theano.config.blas.ldflags:
        ctx.fail("theano.config.blas.ldflags is empty: dot products would not use a BLAS")
    return f"C++ compiler {theano.config.cxx}, BLAS {theano.config.blas.ldflags}"


def function(ctx: ProbeContext) -> str:
    """Compile tanh(x @ w) with the C linker and compare it with numpy."""
    import numpy as np
    import theano
    import theano.tensor as T

    x, w = T.matrix("x"), T.matrix("w")
    f = theano.function([x, w], T.tanh(T.dot(x, w)))
    ops = sorted({type(node.op).__name__ for node in f.maker.fgraph.toposort()})
    ctx.evidence("ops", ops)
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((64, 32)).astype(theano.config.floatX)
    b = rng.standard_normal((32, 16)).astype(theano.config.floatX)
    out = f(a, b)
    if out.shape != (64, 16):
        ctx.fail(f"output shape {out.shape}, expected (64, 16)")
    return ctx.assert_close(f"tanh(dot) via {'+'.join(ops)}", out, np.tanh(a @ b), TOLERANCE)


def grad(ctx: ProbeContext) -> str:
    """d/ds (s^3 sin s + exp(s/2)) from theano.grad against the analytic derivative."""
    import numpy as np
    import theano
    import theano.tensor as T

    s = T.scalar("s")
    f = theano.function([s], theano.grad(s**3 * T.sin(s) + T.exp(s / 2), s))
    points = np.linspace(-2.0, 2.0, 9)
    got = np.array([f(p) for p in points])
    want = 3 * points**2 * np.sin(points) + points**3 * np.cos(points) + np.exp(points / 2) / 2
    return ctx.assert_close("grad vs analytic at 9 points", got, want, TOLERANCE)


def line_data() -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(256)
    return x, 3.0 * x - 1.0 + 0.01 * rng.standard_normal(256)


def train(ctx: ProbeContext, steps: int = 30, lr: float = 0.1) -> str:
    """SGD on shared variables through `updates`: Theano's training idiom; the loss must fall.

    Elementwise on purpose: `theano.function` already compiled the BLAS path, and each new C
    module costs seconds of g++; this check is about grad + updates.
    """
    import theano
    import theano.tensor as T

    x_data, y_data = line_data()
    x, y = T.vector("x"), T.vector("y")
    slope, intercept = theano.shared(0.0, name="slope"), theano.shared(0.0, name="intercept")
    loss = T.mean((slope * x + intercept - y) ** 2)
    grads = theano.grad(loss, [slope, intercept])
    # Spelled out, not zip(): ruff wants zip(strict=), which Python 3.9 does not have.
    updates = [(slope, slope - lr * grads[0]), (intercept, intercept - lr * grads[1])]
    step = theano.function([x, y], loss, updates=updates)
    seen = [float(step(x_data, y_data)) for _ in range(steps)]
    ctx.evidence("loss_first", seen[0])
    ctx.evidence("loss_last", seen[-1])
    ctx.evidence("fitted", [float(slope.get_value()), float(intercept.get_value())])
    if not seen[-1] < LOSS_DROP * seen[0]:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {seen[0]} -> {seen[-1]}")
    return f"SGD loss {seen[0]:.4f} -> {seen[-1]:.4f} in {steps} steps"


def gpu_function(ctx: ProbeContext) -> str:
    """tanh(x @ w) with THEANO_FLAGS=device=cuda0 in a child; no GPU backend is a fallback."""
    flags = "device=cuda0,floatX=float32,force_device=True"
    env = {**os.environ, "THEANO_FLAGS": flags}
    proc = subprocess.run(
        [sys.executable, "-c", GPU_CHILD], env=env, capture_output=True, text=True,
        timeout=CHILD_TIMEOUT_S, check=False,
    )
    ctx.evidence("theano_flags", flags)
    ctx.evidence("exit_code", proc.returncode)
    ctx.evidence("stderr_tail", "\n".join(proc.stderr.strip().splitlines()[-6:]))
    if proc.returncode == NO_BACKEND_EXIT or "Could not initialize pygpu" in proc.stderr:
        reason = [line for line in proc.stderr.splitlines() if "Could not" in line]
        ctx.cpu_fallback(f"Theano's GPU backend (pygpu) did not initialise: "
                         f"{reason[-1].strip() if reason else 'pygpu_activated is False'}")
    if proc.returncode != 0:
        ctx.fail(f"GPU child exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    lines = dict(line.split(" ", 1) for line in proc.stdout.strip().splitlines() if " " in line)
    ops = lines.get("ops", "")
    ctx.evidence("ops", ops)
    if "Gpu" not in ops:
        ctx.cpu_fallback(f"the compiled graph has no GPU ops: {ops}")
    error = float(lines.get("error", "nan"))
    ctx.evidence("rel_error", error)
    if not error <= GPU_TOLERANCE:
        ctx.fail(f"GPU tanh(dot) max error {error:.3g} of max |ref| exceeds {GPU_TOLERANCE:g}")
    return f"GPU tanh(dot) via {ops} max rel error {error:.2e}"
