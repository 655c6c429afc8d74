"""Apache MXNet validation probe, loaded by the ngc runner from ``/opt/ngc/probes/mxnet.py``.

Only stdlib, mxnet, numpy, onnx and onnxruntime (all pinned by the framework's requirements).
MXNet is imported inside each check, so a broken install fails ``framework.import`` (reported)
instead of making this file unloadable.
"""

from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "mxnet"
SEED = 0
LOSS_DROP = 0.5  # the final loss must be below this fraction of the first
ONNX_TOLERANCE = 1e-4  # same f32 graph in two runtimes: only summation order differs
# cuDNN may run f32 convolutions in TF32 (10-bit mantissa) on Ampere and later.
CONV_TOLERANCE = 1e-2
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


def register(suite: ProbeSuite) -> None:
    suite.check("mxnet.build_features", tier="T0")(build_features)
    suite.check("mxnet.gluon_train_cpu", tier="T2", emulated=True)(gluon_train_cpu)
    suite.check("mxnet.onnx_export", tier="T2")(onnx_export)
    suite.check("mxnet.gpu.train", tier="T2", needs_gpu=True)(gpu_train)
    suite.check("mxnet.gpu.conv", tier="T2", needs_gpu=True)(gpu_conv)
    # Last on purpose: amp.init() rewraps MXNet's operator functions for the whole process.
    suite.check("mxnet.gpu.amp_step", tier="T2", needs_gpu=True)(gpu_amp_step)


def enabled_features() -> list[str]:
    import mxnet as mx

    return sorted(name for name, feature in mx.runtime.Features().items() if feature.enabled)


def build_features(ctx: ProbeContext) -> str:
    """What libmxnet.so was compiled with; a GPU run needs a CUDA build."""
    features = enabled_features()
    ctx.evidence("features", features)
    if ctx.gpu_expected and "CUDA" not in features:
        ctx.cpu_fallback("this MXNet build has no CUDA support (a CPU wheel in a GPU image?)")
    wanted = [name for name in ("CUDA", "CUDNN", "NCCL", "MKLDNN") if name in features]
    return f"MXNet built with {', '.join(wanted) or 'none of CUDA/CUDNN/NCCL/MKLDNN'}"


def mlp(device: Any) -> Any:
    import mxnet as mx
    from mxnet import gluon

    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(1))
    net.initialize(mx.init.Xavier(), ctx=device)
    net.hybridize()  # the symbolic (CachedOp) path, the one AMP and ONNX export use
    return net


def train(
    ctx: ProbeContext, device: Any, steps: int = 30, lr: float = 0.1, amp: bool = False
) -> str:
    """A few SGD steps of a hybridized Gluon MLP on ``device``; the loss must fall."""
    import mxnet as mx
    import numpy as np
    from mxnet import autograd, gluon

    mx.random.seed(SEED, ctx="all")
    x, y = (mx.nd.array(a, ctx=device, dtype=np.float32) for a in ctx.regression_data(seed=SEED))
    net = mlp(device)
    loss_fn = gluon.loss.L2Loss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    if amp:
        from mxnet.contrib import amp as mx_amp

        mx_amp.init_trainer(trainer)  # dynamic loss scaling; overflowing steps are skipped
    losses = []
    for _ in range(steps):
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
            if amp:
                with mx_amp.scale_loss(loss, trainer) as scaled:
                    autograd.backward(scaled)
            else:
                loss.backward()
        trainer.step(x.shape[0])
        losses.append(float(loss.mean().asscalar()))
    ctx.evidence("context", str(loss.context))
    ctx.evidence("output_dtype", np.dtype(out.dtype).name)
    ctx.evidence("loss_first", losses[0])
    ctx.evidence("loss_last", losses[-1])
    if amp:
        ctx.evidence("loss_scale", trainer._amp_loss_scaler.loss_scale)
    if not losses[-1] < LOSS_DROP * losses[0]:  # NaN fails too
        ctx.fail(f"loss did not fall below {LOSS_DROP} x start: {losses[0]} -> {losses[-1]}")
    return f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} SGD steps on {loss.context}"


def gluon_train_cpu(ctx: ProbeContext) -> str:
    import mxnet as mx

    return train(ctx, mx.cpu())


def conv_net(device: Any) -> Any:
    import mxnet as mx
    from mxnet import gluon

    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(
            gluon.nn.Conv2D(4, kernel_size=3, padding=1),
            gluon.nn.BatchNorm(),
            gluon.nn.Activation("relu"),
            gluon.nn.MaxPool2D(pool_size=2),
            gluon.nn.Flatten(),
            gluon.nn.Dense(3),
        )
    net.initialize(mx.init.Xavier(), ctx=device)
    net.hybridize()
    return net


def onnx_export(ctx: ProbeContext) -> str:
    """Export a small hybridized Gluon CNN with mx.onnx and run it in ONNX Runtime."""
    import mxnet as mx
    import numpy as np
    import onnx
    import onnxruntime as ort

    mx.random.seed(SEED)
    net = conv_net(mx.cpu())
    x = np.random.default_rng(SEED).standard_normal((2, 3, 8, 8)).astype(np.float32)
    expected = net(mx.nd.array(x)).asnumpy()  # also builds the graph that export() saves
    with tempfile.TemporaryDirectory(prefix="mxnet-onnx-") as scratch:
        prefix = str(Path(scratch) / "net")
        net.export(prefix)
        path = mx.onnx.export_model(
            f"{prefix}-symbol.json", f"{prefix}-0000.params", [x.shape], [np.float32],
            f"{prefix}.onnx",
        )
        model = onnx.load(path)
        onnx.checker.check_model(model)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # mx2onnx keeps weights as graph inputs: ORT warns
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        actual = session.run(None, {session.get_inputs()[0].name: x})[0]
    ctx.evidence("onnx", onnx.__version__)
    ctx.evidence("onnxruntime", ort.__version__)
    ctx.evidence("ir_version", model.ir_version)
    ctx.evidence("opset", [f"{o.domain or 'ai.onnx'}:{o.version}" for o in model.opset_import])
    ctx.evidence("ops", sorted({node.op_type for node in model.graph.node}))
    return ctx.assert_close("ONNX Runtime vs MXNet", actual, expected, ONNX_TOLERANCE)


def compute_capability(device_id: int) -> str:
    """sm_XY of a device, from the driver: evidence for 'no kernel image' failures."""
    cuda = ctypes.CDLL("libcuda.so.1")
    major, minor = ctypes.c_int(), ctypes.c_int()
    cuda.cuInit(0)
    device = ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(device), device_id)
    for attribute, value in (
        (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, major),
        (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, minor),
    ):
        cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device)
    return f"sm_{major.value}{minor.value}"


def gpu_device(ctx: ProbeContext) -> Any:
    """GPU 0; a GPU was expected, so seeing none is a CPU fallback, never a skip."""
    import mxnet as mx

    if "CUDA" not in enabled_features():
        ctx.cpu_fallback("this MXNet build has no CUDA support")
    count = mx.context.num_gpus()
    if count < 1:
        ctx.cpu_fallback("mx.context.num_gpus() = 0")
    try:
        ctx.evidence("compute_capability", compute_capability(0))
    except OSError as exc:  # only evidence; MXNet itself already found the GPU
        ctx.evidence("compute_capability", f"unknown: {exc}")
    return mx.gpu(0)


def gpu_train(ctx: ProbeContext) -> str:
    device = gpu_device(ctx)
    message = train(ctx, device)
    if ctx.evidence_data.get("context") != str(device):
        ctx.cpu_fallback(f"training ran on {ctx.evidence_data.get('context')}")
    return message


def gpu_conv(ctx: ProbeContext) -> str:
    """A padded, dilated convolution on the GPU (cuDNN) against the same one on the CPU."""
    import mxnet as mx
    import numpy as np

    device = gpu_device(ctx)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((4, 3, 32, 32)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)

    def conv(on: Any) -> Any:
        return mx.nd.Convolution(
            mx.nd.array(x, ctx=on), mx.nd.array(w, ctx=on), kernel=(3, 3), pad=(2, 2),
            dilate=(2, 2), num_filter=8, no_bias=True, cudnn_tune="off",
        )

    on_gpu = conv(device)
    if on_gpu.context != device:
        ctx.cpu_fallback(f"convolution result lives on {on_gpu.context}")
    return ctx.assert_close("dilated conv GPU vs CPU", on_gpu.asnumpy(),
                            conv(mx.cpu()).asnumpy(), CONV_TOLERANCE)


def gpu_amp_step(ctx: ProbeContext) -> str:
    """AMP float16 training: amp.init() casts lp16-safe ops (FullyConnected...) to float16."""
    from mxnet.contrib import amp

    device = gpu_device(ctx)
    amp.init(target_dtype="float16")  # must precede building the network
    # More steps than f32: the loss scaler starts at 2**16 and skips the steps that overflow.
    message = train(ctx, device, steps=40, amp=True)
    if ctx.evidence_data.get("output_dtype") != "float16":
        ctx.fail(f"AMP network output is {ctx.evidence_data.get('output_dtype')}, not float16")
    return f"float16 AMP: {message}"
