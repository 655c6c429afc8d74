"""Devel variants: a manifest row with `devel: true` also ships `<name>-devel`, the image
plus its CUDA stack's compiler and headers (NVIDIA's PyPI wheels at the stack's versions: the
copy the frameworks load, never a second), g++ and ninja, for building CUDA extensions.

A separate repository with the same `YY.MM-py3` tags (as NVIDIA's CUDA images separate
`runtime` and `devel`): promotion, signing, the catalog and `docker pull` see one more image,
not a second tag form. This module says whether a row can have one.
"""

from __future__ import annotations

from ngc_builder.errors import Problem
from ngc_builder.manifest.models import BaseImage, CudaStack, ImageEntry, Release
from ngc_builder.manifest.source import SourceMap

DEVEL_SUFFIX = "-devel"
# What nvcc needs to build and link a kernel: the driver (nvcc), its front end and headers
# (crt), the NVVM compiler (cicc), CCCL (thrust/cub/libcu++, which torch's headers include)
# and the runtime's headers and libcudart.
DEVEL_WHEELS = ("nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "nvidia-cuda-cccl",
                "nvidia-cuda-runtime")
# CUDA 13's wheels share one prefix (nvidia/cu13/{bin,include,lib}), a CUDA_HOME nvcc and
# torch.utils.cpp_extension accept; earlier ones put each library in its own folder.
MIN_CUDA_MAJOR = 13


def devel_name(entry: ImageEntry) -> str:
    return f"{entry.image_name}{DEVEL_SUFFIX}"


def cuda_home(stack: CudaStack, python: str) -> str:
    """Where the stack's wheels put the toolkit in an image's venv (/opt/venv)."""
    return f"/opt/venv/lib/python{python}/site-packages/nvidia/cu{stack.cuda_major}"


def devel_problems(release: Release, base: BaseImage, image: ImageEntry,
                   where: tuple[str | int, ...], source: SourceMap) -> list[Problem]:
    if not image.devel:
        return []
    stack = release.cuda_stacks.get(image.stack) if image.stack else None
    if stack is None:
        return [source.problem((*where, "devel"),
                               "a devel variant needs a CUDA stack: nvcc and the headers "
                               "come from its wheels")]
    problems = []
    if stack.cuda_major < MIN_CUDA_MAJOR:
        problems.append(source.problem((*where, "devel"), (
            f"stack {image.stack} is CUDA {stack.cuda}: a devel image needs CUDA "
            f"{MIN_CUDA_MAJOR}+, whose wheels share one prefix for CUDA_HOME")))
    missing = [name for name in DEVEL_WHEELS
               if name not in stack.wheels and name not in stack.devel_wheels]
    if missing:
        problems.append(source.problem((*where, "devel"), (
            f"stack {image.stack} lacks {', '.join(missing)}: add them to "
            f"cuda_stacks.{image.stack}.devel_wheels at CUDA {stack.cuda}")))
    if not base.devel_apt_packages:
        problems.append(source.problem((*where, "devel"), (
            f"base {base.name} has no devel_apt_packages (the host compiler and ninja)")))
    return problems
