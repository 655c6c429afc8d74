"""PyTorch in a devel image: a CUDA extension built by ``torch.utils.cpp_extension`` (g++ for
the binding, nvcc for a ``__global__`` kernel, ninja to drive them) for the release's GPU
targets, then loaded; on a GPU its kernel runs. Only stdlib and torch.

The build runs in the image's environment as users get it: the probe sets no variable. Without
TORCH_CUDA_ARCH_LIST torch asks the GPU which architecture to build for, and fails where there
is none, so the devel image sets it from the release (framework.yaml `devel_env`); a devel image
without it, or with other targets, fails here. In host mode the node's environment decides:
unset, torch builds for the node's own GPUs, and the library is checked for those.

The build is kept for the process: the GPU check runs what the T2 check built.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

NAME = "ngc_axpy_ext"
DECLARATION = "torch::Tensor axpy(torch::Tensor x, torch::Tensor y, double a);"
CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void axpy_kernel(int64_t n, float a, const float* x, float* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

torch::Tensor axpy(torch::Tensor x, torch::Tensor y, double a) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "axpy: CUDA tensors only");
  TORCH_CHECK(x.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat, "axpy: float32");
  TORCH_CHECK(x.numel() == y.numel(), "axpy: sizes differ");
  auto xs = x.contiguous();
  auto out = y.contiguous().clone();
  int64_t n = out.numel();
  axpy_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      n, (float)a, xs.data_ptr<float>(), out.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""
_BUILT: dict[str, Any] = {}


def register(suite: ProbeSuite) -> None:
    suite.check("torch.devel.cuda_extension", tier="T2")(cuda_extension)
    suite.check("torch.devel.cuda_extension_run", tier="T2", needs_gpu=True)(
        cuda_extension_run)


def arch_list(targets: list[str]) -> str:
    """TORCH_CUDA_ARCH_LIST: SASS for each target, PTX of the newest for later GPUs."""
    ordered = sorted(set(targets), key=lambda target: tuple(map(int, target.split("."))))
    return ";".join([*ordered[:-1], f"{ordered[-1]}+PTX"])


def built_for(ctx: ProbeContext) -> list[str] | None:
    """The targets the build is held to: the release's (None) where the environment sets them
    as the release says, the host's own GPUs in host mode where it sets none."""
    wanted = arch_list([str(target) for target in ctx.expect.get("gpu_targets", [])])
    found = os.environ.get("TORCH_CUDA_ARCH_LIST")
    ctx.evidence("torch_cuda_arch_list", found)
    if found is None and ctx.host_mode:
        import torch

        if not torch.cuda.is_available():
            ctx.fail("TORCH_CUDA_ARCH_LIST is not set and there is no GPU here: torch cannot "
                     f"know which architecture to build for (set it, e.g. to {wanted})")
        capabilities = map(torch.cuda.get_device_capability, range(torch.cuda.device_count()))
        return sorted({f"{major}.{minor}" for major, minor in capabilities})
    if found is None:
        ctx.fail("the image does not set TORCH_CUDA_ARCH_LIST: torch.utils.cpp_extension asks "
                 "the GPU for its architecture and fails where there is none (a login node, "
                 f"CI); the release's GPUs are {wanted} (framework.yaml devel_env)")
    if found != wanted and not ctx.host_mode:
        ctx.fail(f"the image sets TORCH_CUDA_ARCH_LIST={found}; the release's GPUs are {wanted}")
    return None


def build(ctx: ProbeContext) -> tuple[Any, str]:
    """The extension module and its library, built once per process."""
    if "module" in _BUILT:
        return _BUILT["module"], _BUILT["library"]
    ctx.cuda_home()  # skips where there is no toolkit (not a devel image)
    _BUILT["targets"] = built_for(ctx)
    from torch.utils import cpp_extension

    folder = Path(tempfile.mkdtemp(prefix="ngc-torch-ext-"))
    atexit.register(shutil.rmtree, folder, True)  # the library stays loaded until exit
    ctx.evidence("cuda_home", cpp_extension.CUDA_HOME)
    try:
        module = cpp_extension.load_inline(
            NAME, cpp_sources=DECLARATION, cuda_sources=CUDA_SOURCE, functions=["axpy"],
            build_directory=str(folder), with_cuda=True, verbose=False)
    except (RuntimeError, OSError, ImportError) as exc:  # the compiler's output is in it
        ctx.fail(f"torch.utils.cpp_extension could not build a CUDA extension: "
                 f"{str(exc)[-600:]}")
    _BUILT.update(module=module, library=str(Path(module.__file__)))
    return module, _BUILT["library"]


def cuda_extension(ctx: ProbeContext) -> str:
    module, library = build(ctx)
    if not callable(getattr(module, "axpy", None)):
        ctx.fail(f"{library} loaded but has no axpy function")
    covered = ctx.gpu_code_covers(library, _BUILT["targets"])
    return f"torch.utils.cpp_extension built and loaded {Path(library).name}: {covered}"


def cuda_extension_run(ctx: ProbeContext) -> str:
    import torch

    module, _library = build(ctx)
    x = torch.arange(1 << 16, dtype=torch.float32, device="cuda") % 97
    y = torch.ones_like(x)
    result = module.axpy(x, y, 2.0)
    torch.cuda.synchronize()
    wrong = int((result != 2.0 * x + y).sum().item())
    if wrong:
        ctx.fail(f"the extension's kernel gave {wrong} of {x.numel()} values wrong")
    return f"the extension's __global__ kernel computed 2*x+y on {torch.cuda.get_device_name()}"
