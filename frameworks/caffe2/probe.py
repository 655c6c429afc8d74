"""Caffe2 validation probe, loaded by the ngc runner from ``/opt/ngc/probes/caffe2.py``.

Only stdlib, caffe2 (from the torch 1.10 wheel) and numpy. caffe2 is imported inside each check,
so a broken install fails ``framework.import`` (reported) instead of making this file unloadable.

The wheel bundles CUDA 10.2, whose newest native kernels are for sm_75: on an H100 (sm_90) the
GPU checks must fail, so they run a real net on the device and compare it with NumPy instead of
trusting a device count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "caffe2.python"
SEED = 0
F32_TOLERANCE = 1e-5  # max |err| / max |ref|: an FC in float32 against a float64 reference
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
TRAIN_STEPS = 30
LEARNING_RATE = 0.1


def register(suite: ProbeSuite) -> None:
    suite.check("caffe2.run_net_once", tier="T2", emulated=True)(run_net_once_cpu)
    suite.check("caffe2.train_cpu", tier="T2")(train_cpu)
    suite.check("caffe2.gpu.devices", tier="T2", needs_gpu=True)(gpu_devices)
    suite.check("caffe2.gpu.run_net_once", tier="T2", needs_gpu=True)(gpu_run_net_once)


def fc_inputs() -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(SEED)
    return {
        "X": rng.standard_normal((4, 3)).astype(np.float32),
        "W": rng.standard_normal((5, 3)).astype(np.float32),
        "b": rng.standard_normal(5).astype(np.float32),
    }


def fc_reference(inputs: dict[str, Any]) -> Any:
    """Y = relu(X W^T + b) + 1, computed in float64 by NumPy."""
    import numpy as np

    x, w, b = (inputs[k].astype(np.float64) for k in ("X", "W", "b"))
    return np.maximum(x @ w.T + b, 0.0) + 1.0


def fc_net(name: str, inputs: dict[str, Any], device_option: Any = None) -> Any:
    """GivenTensorFill inputs, then FC -> Relu -> Add(ones): four operator types in one net."""
    from caffe2.python import core

    net = core.Net(name)
    for blob, value in inputs.items():
        net.GivenTensorFill([], blob, shape=list(value.shape), values=value.ravel().tolist())
    net.ConstantFill([], "ones", shape=[4, 5], value=1.0)
    net.FC(["X", "W", "b"], "fc")
    net.Relu("fc", "relu")
    net.Add(["relu", "ones"], "Y")
    if device_option is not None:
        net.Proto().device_option.CopyFrom(device_option)
    return net


def run_and_compare(ctx: ProbeContext, name: str, device_option: Any = None) -> str:
    from caffe2.python import workspace

    inputs = fc_inputs()
    workspace.ResetWorkspace()
    if not workspace.RunNetOnce(fc_net(name, inputs, device_option)):
        ctx.fail(f"workspace.RunNetOnce({name}) returned False")
    out = workspace.FetchBlob("Y")
    expected = fc_reference(inputs)
    ctx.evidence("shape", list(out.shape))
    ctx.evidence("dtype", str(out.dtype))
    if tuple(out.shape) != expected.shape:
        ctx.fail(f"Y has shape {tuple(out.shape)}, expected {expected.shape}")
    error = ctx.compare("FC+Relu+Add", out, expected, F32_TOLERANCE, key="rel_error")
    return f"RunNetOnce FC+Relu+Add {out.shape} {out.dtype}: max rel error {error:.2e}"


def run_net_once_cpu(ctx: ProbeContext) -> str:
    from caffe2.python import workspace

    ctx.evidence("has_cuda_support", bool(workspace.has_cuda_support))
    return run_and_compare(ctx, "fc_cpu") + " on CPU"


def regression_net() -> tuple[Any, Any]:
    """Linear regression y = X w + b: an init net and a train net with Caffe2's own gradients."""
    import numpy as np
    from caffe2.python import core

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0], [0.5], [3.0]], np.float32) + 1.0).astype(np.float32)
    init = core.Net("regression_init")
    init.GivenTensorFill([], "X", shape=list(x.shape), values=x.ravel().tolist())
    init.GivenTensorFill([], "Y_true", shape=list(y.shape), values=y.ravel().tolist())
    init.ConstantFill([], "w", shape=[1, 4], value=0.0)
    init.ConstantFill([], "b", shape=[1], value=0.0)
    init.ConstantFill([], "ONE", shape=[1], value=1.0)
    init.ConstantFill([], "LR", shape=[1], value=-LEARNING_RATE)
    train = core.Net("regression_train")
    pred = train.FC(["X", "w", "b"], "pred")
    dist = train.SquaredL2Distance([pred, "Y_true"], "dist")
    loss = train.AveragedLoss(dist, "loss")
    grads = train.AddGradientOperators([loss])
    for param in ("w", "b"):
        # param <- 1 * param + (-lr) * grad: plain SGD with Caffe2's WeightedSum.
        train.WeightedSum([param, "ONE", grads[param], "LR"], param)
    return init, train


def train_cpu(ctx: ProbeContext) -> str:
    from caffe2.python import workspace

    workspace.ResetWorkspace()
    init, train = regression_net()
    workspace.RunNetOnce(init)
    workspace.CreateNet(train)
    losses = []
    for _ in range(TRAIN_STEPS):
        workspace.RunNet(train.Proto().name)
        losses.append(float(workspace.FetchBlob("loss")))
    ctx.evidence("loss_first", losses[0])
    ctx.evidence("loss_last", losses[-1])
    if not losses[-1] < LOSS_DROP * losses[0]:
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {losses[0]} -> {losses[-1]}")
    return f"SGD with AddGradientOperators: loss {losses[0]:.4f} -> {losses[-1]:.4f}"


def arch_coverage(ctx: ProbeContext, capability: tuple[int, int]) -> str | None:
    """Why the wheel has no code for this GPU, or None when it has some (SASS or PTX)."""
    import torch

    # torch.cuda.get_arch_list() is [] whenever torch itself sees no GPU; the flags are not.
    flags = getattr(torch._C, "_cuda_getArchFlags", None)
    arches = flags().split() if flags is not None else list(torch.cuda.get_arch_list())
    ctx.evidence("wheel_arch_list", arches)
    if not arches:
        return None  # nothing to judge by: the GPU net run decides
    cap = capability[0] * 10 + capability[1]
    # SASS runs on the same major at an equal or higher minor; PTX JITs to any newer GPU.
    sass = [a for a in arches if a.startswith("sm_") and int(a[3:]) // 10 == capability[0]
            and int(a[3:]) <= cap]
    ptx = [a for a in arches if a.startswith("compute_") and int(a[8:]) <= cap]
    if sass or ptx:
        return None
    return (f"torch {torch.__version__} (CUDA {torch.version.cuda}) ships kernels for "
            f"{', '.join(arches)} only; the GPU is sm_{cap}")


def require_gpu(ctx: ProbeContext) -> int:
    """A GPU was expected: Caffe2 without one is a CPU fallback, never a skip."""
    from caffe2.python import workspace

    ctx.evidence("has_cuda_support", bool(workspace.has_cuda_support))
    count = int(workspace.NumGpuDevices())
    ctx.evidence("num_gpu_devices", count)
    if not workspace.has_cuda_support or count == 0:
        ctx.cpu_fallback(f"workspace.NumGpuDevices() = {count}, "
                         f"has_cuda_support = {workspace.has_cuda_support}")
    return count


def gpu_devices(ctx: ProbeContext) -> str:
    from caffe2.python import workspace

    count = require_gpu(ctx)
    props = workspace.GetDeviceProperties(0)
    capability = (int(props["major"]), int(props["minor"]))
    ctx.evidence("device", props.get("name"))
    ctx.evidence("compute_capability", f"{capability[0]}.{capability[1]}")
    ctx.evidence("cuda_runtime", workspace.GetCUDAVersion())
    ctx.evidence("cudnn", workspace.GetCuDNNVersion())
    missing = arch_coverage(ctx, capability)
    if missing is not None:
        ctx.fail(missing)
    return f"{count} GPU(s), device 0 {props.get('name')} sm_{capability[0]}{capability[1]}"


def gpu_run_net_once(ctx: ProbeContext) -> str:
    from caffe2.proto import caffe2_pb2
    from caffe2.python import core

    require_gpu(ctx)
    device = core.DeviceOption(caffe2_pb2.CUDA, 0)
    return run_and_compare(ctx, "fc_gpu", device) + " on CUDA device 0"
