"""Devel images: the CUDA compiler and headers of the stack (NVIDIA's PyPI wheels, the same
copy the frameworks load), g++ and ninja, so researchers build CUDA extensions inside.

Checks, registered for a devel image (``expect["devel"]``) and in host mode:
- T0 ``devel.toolchain``: nvcc is the stack's (its ``V`` version is the locked wheel's), g++
  and ninja run, and ``lib/libcudart.so`` (what ``-lcudart`` links) resolves.
- T2 ``devel.nvcc_targets``: a ``__global__`` kernel built by nvcc for the release's GPU
  targets carries SASS for each (read from the library, not assumed from the flags).
- GPU ``devel.nvcc_kernel_run``: that library's kernel runs on the GPU and computes a*x+y.
Frameworks add their own (torch.utils.cpp_extension, JAX FFI) through ``ctx.cuda_home()`` and
``ctx.gpu_code_covers(path)``.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from . import toolkit
from .fatbin import capability_number
from .suite import Check, Context, Suite
from .toolkit import cuda_home

COMPILE_TIMEOUT_S = 900  # an emulated platform's nvcc (cicc, ptxas) runs ~20x slower
KERNEL = r"""
#include <cuda_runtime.h>
extern "C" __global__ void ngc_axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
// Host side: copy in, launch, copy out; returns the first CUDA error (0: none).
extern "C" int ngc_axpy_host(int n, float a, const float* x, float* y) {
  float *dx = 0, *dy = 0;
  size_t bytes = (size_t)n * sizeof(float);
  cudaError_t err = cudaMalloc(&dx, bytes);
  if (!err) err = cudaMalloc(&dy, bytes);
  if (!err) err = cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  if (!err) err = cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice);
  if (!err) { ngc_axpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy); err = cudaGetLastError(); }
  if (!err) err = cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dy);
  return (int)err;
}
"""


def register(suite: Suite, expect: dict[str, Any]) -> None:
    if not expect.get("devel") and not expect.get("host_mode"):
        return
    suite.add(Check("devel.toolchain", "T0", False, check_toolchain))
    # The emulated tier's one compile: another platform's nvcc, cicc and ptxas run.
    suite.add(Check("devel.nvcc_targets", "T2", False, check_nvcc_targets,
                    requires=("devel.toolchain",), emulated=True))
    suite.add(Check("devel.nvcc_kernel_run", "T2", True, check_kernel_run,
                    requires=("devel.nvcc_targets",)))


def check_toolchain(ctx: Context) -> str:
    home = cuda_home(ctx)
    nvcc = _run(ctx, [str(home / "bin" / "nvcc"), "--version"], "nvcc")
    version = re.search(r"\bV(\d+(?:\.\d+)+)", nvcc)
    ctx.evidence("nvcc", version.group(0) if version else nvcc[-200:])
    wanted = (ctx.expect.get("devel") or {}).get("nvcc")
    if wanted and (version is None or version.group(1) != wanted):
        ctx.fail(f"nvcc is {version.group(0) if version else 'unversioned'}, the stack's "
                 f"nvidia-cuda-nvcc is {wanted}: a second CUDA toolkit?")
    gxx = _run(ctx, ["g++", "--version"], "g++").splitlines()[0]
    ninja = _run(ctx, ["ninja", "--version"], "ninja").strip()
    cudart = home / "lib" / "libcudart.so"
    if not cudart.exists() and not (home / "lib64" / "libcudart.so").exists():
        ctx.absent(f"{cudart} is missing: -lcudart cannot link")
    return f"nvcc {version.group(0) if version else '?'} in {home}; {gxx}; ninja {ninja}"


def _run(ctx: Context, command: list[str], what: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        ctx.absent(f"{what} does not run: {exc}")
    if done.returncode != 0:
        ctx.absent(f"{what} exited {done.returncode}: {(done.stderr or done.stdout)[-300:]}")
    return done.stdout


def gencode_flags(targets: list[str]) -> list[str]:
    """SASS for every target, and PTX of the newest so later GPUs can JIT it."""
    numbers = sorted({capability_number(target) for target in targets})
    flags = [f"-gencode=arch=compute_{n},code=sm_{n}" for n in numbers]
    return [*flags, f"-gencode=arch=compute_{numbers[-1]},code=compute_{numbers[-1]}"]


def build_kernel_library(ctx: Context, folder: Path, targets: list[str]) -> Path:
    home = cuda_home(ctx)
    source, library = folder / "ngc_axpy.cu", folder / "libngc_axpy.so"
    source.write_text(KERNEL, encoding="utf-8")
    command = [str(home / "bin" / "nvcc"), "-shared", "-Xcompiler", "-fPIC", "-O2",
               *gencode_flags(targets), "-o", str(library), str(source)]
    ctx.evidence("command", " ".join(command))
    done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S,
                          check=False, cwd=folder)
    if done.returncode != 0:
        ctx.fail(f"nvcc exited {done.returncode}: {(done.stderr or done.stdout)[-500:]}")
    return library


def compiled_targets(ctx: Context) -> list[str]:
    """Every release target; under emulation the newest alone: another platform's nvcc,
    cicc and ptxas are proven by one compile, and each more target is one more emulated
    ptxas and cicc (a native node's full tier builds them all)."""
    targets = [str(target) for target in ctx.expect.get("gpu_targets", [])]
    if ctx.env.scope != "emulated" or not targets:
        return targets
    newest = max(targets, key=capability_number)
    ctx.evidence("emulated_targets", f"only {newest} of {', '.join(targets)} under emulation")
    return [newest]


def check_nvcc_targets(ctx: Context) -> str:
    targets = compiled_targets(ctx)
    with tempfile.TemporaryDirectory(prefix="ngc-devel-") as scratch:
        library = build_kernel_library(ctx, Path(scratch), targets)
        built = toolkit.gpu_code_covers(ctx, str(library), targets)
    every = {str(target) for target in ctx.expect.get("gpu_targets", [])}
    note = "" if every <= set(targets) else " (emulated: the newest target only)"
    return f"nvcc built a __global__ kernel with {built}{note}"


def check_kernel_run(ctx: Context) -> str:
    count = 1 << 16
    with tempfile.TemporaryDirectory(prefix="ngc-devel-") as scratch:
        built = build_kernel_library(ctx, Path(scratch), compiled_targets(ctx))
        library = ctypes.CDLL(str(built))
        x = (ctypes.c_float * count)(*[float(i % 97) for i in range(count)])
        y = (ctypes.c_float * count)(*[1.0] * count)
        error = library.ngc_axpy_host(count, ctypes.c_float(2.0), x, y)
    if error:
        ctx.fail(f"the kernel's launch returned CUDA error {error}", "host")
    wrong = [i for i in range(count) if y[i] != 2.0 * (i % 97) + 1.0]
    if wrong:
        ctx.fail(f"{len(wrong)} of {count} values wrong, first at {wrong[0]}: {y[wrong[0]]}")
    return f"nvcc-built kernel ran on the GPU: 2*x+y correct for {count} values"
