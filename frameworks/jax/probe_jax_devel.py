"""JAX in a devel image: XLA FFI custom calls built against ``jax.ffi.include_dir()``, one by
g++ for the CPU (called through ``jax.ffi.ffi_call``, no GPU needed), one by nvcc with a
``__global__`` kernel for the release's GPU targets (run on a GPU). Only stdlib, jax, numpy.
"""

from __future__ import annotations

import atexit
import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probe_jax_gpu import select_platform

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

COMPILE_TIMEOUT_S = 900  # an emulated platform's compilers run ~20x slower
BINDING = """XLA_FFI_DEFINE_HANDLER_SYMBOL({symbol}, {impl}, ffi::Ffi::Bind(){context}
    .Attr<float>("a").Arg<ffi::Buffer<ffi::F32>>().Arg<ffi::Buffer<ffi::F32>>()
    .Ret<ffi::Buffer<ffi::F32>>());
"""
CPU_SOURCE = """#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
static ffi::Error AxpyCpu(float a, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y,
                          ffi::ResultBuffer<ffi::F32> out) {
  for (size_t i = 0; i < x.element_count(); ++i)
    out->typed_data()[i] = a * x.typed_data()[i] + y.typed_data()[i];
  return ffi::Error::Success();
}
""" + BINDING.format(symbol="NgcAxpyCpu", impl="AxpyCpu", context="")
CUDA_SOURCE = """#include <cuda_runtime.h>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
__global__ void axpy_kernel(long n, float a, const float* x, const float* y, float* out) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
static ffi::Error AxpyGpu(cudaStream_t stream, float a, ffi::Buffer<ffi::F32> x,
                          ffi::Buffer<ffi::F32> y, ffi::ResultBuffer<ffi::F32> out) {
  long n = (long)x.element_count();
  axpy_kernel<<<(n + 255) / 256, 256, 0, stream>>>(n, a, x.typed_data(), y.typed_data(),
                                                  out->typed_data());
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return ffi::Error(ffi::ErrorCode::kInternal, cudaGetErrorString(err));
  return ffi::Error::Success();
}
""" + BINDING.format(symbol="NgcAxpyGpu", impl="AxpyGpu",
                     context="\n    .Ctx<ffi::PlatformStream<cudaStream_t>>()")
_BUILT: dict[str, str] = {}


def register(suite: ProbeSuite) -> None:
    suite.check("jax.devel.ffi_cpu", tier="T2")(ffi_cpu)
    suite.check("jax.devel.ffi_cuda_build", tier="T2")(ffi_cuda_build)
    suite.check("jax.devel.ffi_gpu", tier="T2", needs_gpu=True)(ffi_gpu)


def compile_library(ctx: ProbeContext, kind: str) -> str:
    """Build the CPU (g++) or CUDA (nvcc) FFI library once per process; its path."""
    if kind in _BUILT:
        return _BUILT[kind]
    import jax

    home = ctx.cuda_home()  # skips outside a devel image (and a host without a toolkit)
    folder = Path(tempfile.mkdtemp(prefix=f"ngc-jax-ffi-{kind}-"))
    atexit.register(shutil.rmtree, folder, True)  # the library stays loaded until exit
    library = folder / f"libngc_axpy_{kind}.so"
    include = ["-I", jax.ffi.include_dir()]
    if kind == "cpu":
        (folder / "axpy.cc").write_text(CPU_SOURCE, encoding="utf-8")
        command = ["g++", "-std=c++17", "-O2", "-shared", "-fPIC", *include, "-o",
                   str(library), str(folder / "axpy.cc")]
    else:
        (folder / "axpy.cu").write_text(CUDA_SOURCE, encoding="utf-8")
        command = [f"{home}/bin/nvcc", "-std=c++17", "-O2", "-shared", "-Xcompiler", "-fPIC",
                   *gencode(ctx), *include, "-o", str(library), str(folder / "axpy.cu")]
    ctx.evidence("command", " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S,
                          check=False)
    if done.returncode != 0:
        ctx.fail(f"{Path(command[0]).name} exited {done.returncode}: "
                 f"{(done.stderr or done.stdout)[-600:]}")
    _BUILT[kind] = str(library)
    return _BUILT[kind]


def gencode(ctx: ProbeContext) -> list[str]:
    numbers = sorted({int(str(t).replace(".", "")) for t in ctx.expect.get("gpu_targets", [])})
    flags = [f"-gencode=arch=compute_{n},code=sm_{n}" for n in numbers]
    return [*flags, f"-gencode=arch=compute_{numbers[-1]},code=compute_{numbers[-1]}"]


def call_axpy(ctx: ProbeContext, library: str, symbol: str, platform: str) -> None:
    """Register `symbol` for `platform` ("cpu" or "gpu") and check what the call computes."""
    import jax
    import numpy as np

    select_platform(ctx)  # registering a target starts JAX's backends (see select_platform)
    handler = getattr(ctypes.cdll.LoadLibrary(library), symbol)
    target = f"ngc_axpy_{platform}"
    xla_platform = "CUDA" if platform == "gpu" else "cpu"  # XLA's names for the two
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform=xla_platform)
    device = jax.devices(platform)[0]
    x = jax.device_put(np.arange(4096, dtype=np.float32) % 97, device)
    y = jax.device_put(np.ones(4096, dtype=np.float32), device)
    call: Any = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))
    result = np.asarray(jax.jit(lambda u, v: call(u, v, a=np.float32(2.0)))(x, y))
    wrong = int((result != 2.0 * np.asarray(x) + 1.0).sum())
    if wrong:
        ctx.fail(f"the FFI call on {device} gave {wrong} of {result.size} values wrong")


def ffi_cpu(ctx: ProbeContext) -> str:
    library = compile_library(ctx, "cpu")
    call_axpy(ctx, library, "NgcAxpyCpu", "cpu")
    return f"g++ built an XLA FFI handler ({Path(library).name}); jax.ffi.ffi_call ran it " \
           "on the CPU: 2*x+y correct"


def ffi_cuda_build(ctx: ProbeContext) -> str:
    library = compile_library(ctx, "cuda")
    return f"nvcc built a CUDA XLA FFI handler with {ctx.gpu_code_covers(library)}"


def ffi_gpu(ctx: ProbeContext) -> str:
    import jax

    try:
        jax.devices("gpu")
    except RuntimeError as exc:
        ctx.cpu_fallback(f"jax sees no GPU: {exc}")
    call_axpy(ctx, compile_library(ctx, "cuda"), "NgcAxpyGpu", "gpu")
    return "nvcc-built CUDA FFI handler ran its __global__ kernel on the GPU: 2*x+y correct"
