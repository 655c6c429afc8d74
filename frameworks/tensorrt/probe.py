"""TensorRT probe: on a GPU, build an fp16 engine from an ONNX model and check its outputs.

Device memory comes from the stack's libcudart through ctypes, so the probe needs nothing
beyond TensorRT, onnx and numpy. (This image does not build on the project's machines: the
PyPI packages fetch libnvinfer from NVIDIA's own index. The probe is written for the day it does.)
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "tensorrt"
FP16_TOLERANCE = 1e-2  # relative to max |reference|: fp16 keeps ~3 decimal digits
H2D, D2H = 1, 2  # cudaMemcpyKind


def register(suite: ProbeSuite) -> None:
    suite.check("tensorrt.builder", tier="T0")(builder_exists)
    suite.check("tensorrt.gpu.onnx_fp16_engine", tier="T2", needs_gpu=True)(onnx_fp16_engine)


def builder_exists(ctx: ProbeContext) -> str:
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.ERROR)
    ctx.evidence("version", trt.__version__)
    return f"TensorRT {trt.__version__}: Logger and Runtime created ({trt.Runtime(logger)})"


def onnx_model(weights: Any) -> bytes:
    """y = relu(x @ W) as a one-node ONNX graph, W baked in as an initializer."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
        "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list((8, weights.shape[0])))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list((8, weights.shape[1])))],
        [numpy_helper.from_array(weights, "W")])
    return bytes(onnx.helper.make_model(graph).SerializeToString())


def build_engine(ctx: ProbeContext, model: bytes) -> Any:
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(model):
        ctx.fail("ONNX parse failed: " + "; ".join(str(parser.get_error(i))
                                                   for i in range(parser.num_errors)))
    config = builder.create_builder_config()
    config.set_flag(trt.BuilderFlag.FP16)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        ctx.fail("TensorRT could not build an fp16 engine")
    return trt.Runtime(logger).deserialize_cuda_engine(serialized)


def onnx_fp16_engine(ctx: ProbeContext) -> str:
    import numpy as np

    rng = np.random.default_rng(0)
    weights = rng.standard_normal((16, 4)).astype(np.float32)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    engine = build_engine(ctx, onnx_model(weights))
    y = run_engine(ctx, engine, x, (8, 4))
    reference = np.maximum(x.astype(np.float64) @ weights.astype(np.float64), 0.0)
    error = float(np.abs(y - reference).max() / max(float(np.abs(reference).max()), 1e-30))
    ctx.evidence("relative_error", error)
    if error > FP16_TOLERANCE:
        ctx.fail(f"fp16 engine output differs: relative error {error:.3e} > {FP16_TOLERANCE}")
    return f"fp16 engine from ONNX: relative error {error:.2e} <= {FP16_TOLERANCE}"


def run_engine(ctx: ProbeContext, engine: Any, x: Any, out_shape: tuple[int, int]) -> Any:
    import numpy as np

    cudart = ctypes.CDLL("libcudart.so.13")
    out = np.empty(out_shape, np.float32)
    pointers = [ctypes.c_void_p(), ctypes.c_void_p()]
    for pointer, array in zip(pointers, (x, out), strict=True):
        _cuda(ctx, cudart.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(array.nbytes)))
    try:
        _cuda(ctx, cudart.cudaMemcpy(pointers[0], x.ctypes.data, x.nbytes, H2D))
        context = engine.create_execution_context()
        context.set_tensor_address("x", pointers[0].value)
        context.set_tensor_address("y", pointers[1].value)
        if not context.execute_async_v3(0):
            ctx.fail("execute_async_v3 returned False")
        _cuda(ctx, cudart.cudaDeviceSynchronize())
        _cuda(ctx, cudart.cudaMemcpy(out.ctypes.data, pointers[1], out.nbytes, D2H))
    finally:
        for pointer in pointers:
            cudart.cudaFree(pointer)
    return out.astype(np.float64)


def _cuda(ctx: ProbeContext, status: int) -> None:
    if status != 0:
        ctx.fail(f"CUDA runtime call failed with error {status}")
