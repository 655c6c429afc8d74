"""Caffe validation probe, loaded by the ngc runner from ``/opt/ngc/probes/caffe.py``.

Only stdlib, caffe and numpy. Debian's Caffe is built CPU_ONLY: in such a build any GPU call
ends in glog's ``LOG(FATAL)``, which aborts the whole process, so the GPU check runs Caffe in
a child process and reads its exit status instead of calling it here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "caffe"
SEED = 0
F32_TOLERANCE = 1e-4  # max |err| / max |ref|; f32 sums of a few hundred terms
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
CHILD_TIMEOUT_S = 120
CPU_ONLY_MARKER = "CPU-only Caffe"  # glog's fatal message from Caffe's NO_GPU macro

# A conv -> ReLU -> fully connected net whose inputs Python fills in.
FORWARD_NET = """
name: "probe_forward"
layer { name: "data" type: "Input" top: "data"
        input_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
        convolution_param { num_output: 4 kernel_size: 3 pad: 1 } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "fc" type: "InnerProduct" bottom: "conv" top: "fc"
        inner_product_param { num_output: 5 } }
"""

# Linear regression on Python-fed inputs, trained by pycaffe's SGDSolver.
REGRESSION_NET = """
name: "probe_regression"
layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 64 dim: 8 } } }
layer { name: "y" type: "Input" top: "y" input_param { shape { dim: 64 dim: 1 } } }
layer { name: "fc" type: "InnerProduct" bottom: "x" top: "pred"
        inner_product_param { num_output: 1 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "pred" bottom: "y" top: "loss" }
"""

# The `caffe train` tool on DummyData: random inputs, constant label 0, so a softmax
# classifier learns to predict class 0 and its loss must fall from about ln(4).
CLI_NET = """
name: "probe_cli"
layer { name: "data" type: "DummyData" top: "data" top: "label"
        dummy_data_param {
          shape { dim: 16 dim: 8 } data_filler { type: "gaussian" std: 1 }
          shape { dim: 16 } data_filler { type: "constant" value: 0 } } }
layer { name: "fc" type: "InnerProduct" bottom: "data" top: "fc"
        inner_product_param { num_output: 4 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc" bottom: "label" top: "loss" }
"""
CLI_SOLVER = """
net: "net.prototxt"
base_lr: 0.1
lr_policy: "fixed"
momentum: 0.9
max_iter: 30
display: 1
random_seed: 0
solver_mode: CPU
"""
LOSS_LINE = re.compile(r"Iteration (\d+).*?, loss = ([-+0-9.eE]+|nan|inf)")

# Run in a child: a CPU_ONLY build aborts the process on the first GPU call.
GPU_CHILD = """
import sys
import numpy as np
import caffe
caffe.set_device(0)
caffe.set_mode_gpu()
net = caffe.Net(sys.argv[1], caffe.TEST)
net.blobs["data"].data[...] = np.ones(net.blobs["data"].data.shape, np.float32)
out = net.forward()["fc"]
print("GPU forward ok", out.shape, float(abs(out).sum()))
"""


def register(suite: ProbeSuite) -> None:
    suite.check("caffe.cli_train", tier="T2")(cli_train)
    suite.check("caffe.forward", tier="T2", emulated=True)(forward)
    suite.check("caffe.solver", tier="T2")(solver)
    suite.check("caffe.gpu.forward", tier="T2", needs_gpu=True)(gpu_forward)


def write_prototxt(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run_child(command: list[str], cwd: str) -> subprocess.CompletedProcess[str]:
    # glog to stderr, so the child's log is ours to read, not lost in /tmp.
    env = {**os.environ, "GLOG_logtostderr": "1"}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
        check=False,
    )


def tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def losses(log: str) -> list[float]:
    return [float(match[2]) for match in LOSS_LINE.finditer(log)]


def debian_version() -> str:
    """The Debian package that provided the tool, for the record (the runner versions caffe by
    its module)."""
    proc = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "caffe"], capture_output=True, text=True,
        check=False,
    )
    return proc.stdout.strip() or f"unknown ({tail(proc.stderr, 1)})"


def cli_train(ctx: ProbeContext) -> str:
    """The `caffe` binary trains a tiny net from prototxt files and exits 0."""
    with tempfile.TemporaryDirectory(prefix="caffe-probe-") as folder:
        write_prototxt(Path(folder), "net.prototxt", CLI_NET)
        solver_file = write_prototxt(Path(folder), "solver.prototxt", CLI_SOLVER)
        proc = run_child(["caffe", "train", "-solver", solver_file], folder)
    ctx.evidence("debian_package", debian_version())
    ctx.evidence("exit_code", proc.returncode)
    if proc.returncode != 0:
        ctx.evidence("log_tail", tail(proc.stderr))
        ctx.fail(f"caffe train exited {proc.returncode}: {tail(proc.stderr, 2)}")
    seen = losses(proc.stderr)
    ctx.evidence("losses", [seen[0], seen[-1]] if seen else [])
    if len(seen) < 2 or not seen[-1] < LOSS_DROP * seen[0]:
        ctx.evidence("log_tail", tail(proc.stderr))
        ctx.fail(f"caffe train loss did not fall below {LOSS_DROP} x start: {seen}")
    return f"caffe train: {len(seen)} iterations, loss {seen[0]:.4f} -> {seen[-1]:.4f}, exit 0"


def conv3x3_same(x: Any, w: Any, b: Any) -> Any:
    """Reference NCHW 3x3 convolution, stride 1, zero padding 1, in float64."""
    import numpy as np

    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    height, width = x.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], height, width))
    for i in range(3):
        for j in range(3):
            window = padded[:, :, i : i + height, j : j + width]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j].astype(np.float64))
    return out + b.reshape(1, -1, 1, 1)


def fill_params(net: Any) -> None:
    """Seeded weights instead of the fillers' random ones: the reference must know them."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    for blobs in net.params.values():
        for blob in blobs:
            blob.data[...] = rng.standard_normal(blob.data.shape).astype(np.float32) * 0.2


def forward(ctx: ProbeContext) -> str:
    """pycaffe: a conv -> ReLU -> fc net forward, checked against numpy."""
    import caffe
    import numpy as np

    caffe.set_mode_cpu()
    with tempfile.TemporaryDirectory(prefix="caffe-probe-") as folder:
        net = caffe.Net(write_prototxt(Path(folder), "net.prototxt", FORWARD_NET), caffe.TEST)
    fill_params(net)
    x = np.random.default_rng(SEED + 1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    net.blobs["data"].data[...] = x
    out = net.forward()["fc"]
    conv_w, conv_b = (blob.data for blob in net.params["conv"])
    fc_w, fc_b = (blob.data for blob in net.params["fc"])
    hidden = np.maximum(conv3x3_same(x, conv_w, conv_b), 0.0).reshape(2, -1)
    reference = hidden @ fc_w.astype(np.float64).T + fc_b
    ctx.evidence("output_shape", list(out.shape))
    if tuple(out.shape) != (2, 5):
        ctx.fail(f"fc output shape {tuple(out.shape)}, expected (2, 5)")
    error = ctx.compare("forward", out, reference, F32_TOLERANCE, key="rel_error")
    return f"conv+relu+fc forward {tuple(out.shape)} max rel error {error:.2e} vs numpy"


def solver(ctx: ProbeContext, steps: int = 30) -> str:
    """pycaffe's SGDSolver trains a linear regression fed from Python; the loss must fall."""
    import caffe
    import numpy as np

    caffe.set_mode_cpu()
    caffe.set_random_seed(SEED)
    with tempfile.TemporaryDirectory(prefix="caffe-probe-") as folder:
        net_file = write_prototxt(Path(folder), "net.prototxt", REGRESSION_NET)
        solver_text = f'net: "{net_file}"\nbase_lr: 0.1\nlr_policy: "fixed"\nmomentum: 0.9\n'
        sgd = caffe.SGDSolver(write_prototxt(Path(folder), "solver.prototxt", solver_text))
    x, y = ctx.regression_data(features=8, samples=64, seed=SEED)
    sgd.net.blobs["x"].data[...] = np.asarray(x, np.float32)
    sgd.net.blobs["y"].data[...] = np.asarray(y, np.float32)
    seen = []
    for _ in range(steps):
        sgd.step(1)
        seen.append(float(sgd.net.blobs["loss"].data))
    ctx.evidence("loss_first", seen[0])
    ctx.evidence("loss_last", seen[-1])
    if not seen[-1] < LOSS_DROP * seen[0]:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {seen[0]} -> {seen[-1]}")
    return f"SGDSolver loss {seen[0]:.4f} -> {seen[-1]:.4f} in {steps} steps"


def gpu_forward(ctx: ProbeContext) -> str:
    """A GPU forward in a child process; a CPU_ONLY build aborts there, which is a fallback."""
    with tempfile.TemporaryDirectory(prefix="caffe-probe-") as folder:
        net_file = write_prototxt(Path(folder), "net.prototxt", FORWARD_NET)
        proc = run_child([sys.executable, "-c", GPU_CHILD, net_file], folder)
    ctx.evidence("exit_code", proc.returncode)
    ctx.evidence("log_tail", tail(proc.stderr))
    fatal = [line for line in proc.stderr.splitlines() if CPU_ONLY_MARKER in line]
    if fatal:
        ctx.cpu_fallback(f"this Caffe is built CPU_ONLY (Debian has no CUDA build), "
                         f"exit {proc.returncode}: {fatal[0].split('] ', 1)[-1]}")
    if proc.returncode != 0:
        ctx.fail(f"GPU forward exited {proc.returncode}: {tail(proc.stderr, 2)}")
    return proc.stdout.strip()
