"""The version variables each layer exports in its ENV, from the same data as its labels.

Job scripts, Slurm prologs and site hooks read versions from the environment (NGC's images
export ``PYTORCH_VERSION``, ``CUDA_VERSION``, ``CUDNN_VERSION``, ``NCCL_VERSION`` and
``NVIDIA_PRODUCT_NAME``): a process inside a container cannot read the image's labels.
Values come from manifests, which a pull request can edit, so each is quoted for the
Dockerfile and a value that cannot be quoted (a control character) is refused.
"""

from __future__ import annotations

import re

import jinja2

from ngc_builder.manifest.framework import Framework
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.manifest.models import CudaStack, ImageEntry
from ngc_builder.plan.dag import ImageSpec

_KEY = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
_UNQUOTABLE = re.compile(r"[\x00-\x1f\x7f]")


def stack_environment(stack: CudaStack) -> dict[str, str]:
    """CUDA_VERSION and one <LIBRARY>_VERSION per library the stack names (cudart, cuBLAS,
    cuDNN, NCCL): the org.ngc-builder.cuda and .<library> labels' values."""
    values = {"CUDA_VERSION": stack.cuda}
    for library, wheel in sorted(stack.libraries.items()):
        values[f"{library.upper()}_VERSION"] = stack.wheels[wheel]
    return values


def framework_environment(framework: Framework, entry: ImageEntry,
                          release: str) -> dict[str, str]:
    """The framework's version as <NAME>_VERSION, the product's name, and the release as NGC
    writes it (NVIDIA_<NAME>_VERSION=YY.MM), for scripts written against NGC's images."""
    name = re.sub(r"[^A-Z0-9]", "_", framework.name.upper())
    return {"NVIDIA_PRODUCT_NAME": framework.title, f"{name}_VERSION": entry.version,
            f"NVIDIA_{name}_VERSION": release, "NGC_RELEASE": release}


def env_instruction(values: dict[str, str]) -> str:
    """`ENV K="v" ...` with each value quoted (backslash, quote and `$` escaped)."""
    pairs = [f"{_key(key)}={_quoted(key, value)}" for key, value in values.items()]
    return "ENV " + " \\\n    ".join(pairs)


def _key(key: str) -> str:
    if not _KEY.match(key):
        raise ValueError(f"environment variable name {key!r} is not [A-Z_][A-Z0-9_]*")
    return key


def _quoted(key: str, value: str) -> str:
    if _UNQUOTABLE.search(value):
        raise ValueError(f"{key}: value {value!r} holds a control character")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


def workspace_readme(env: jinja2.Environment, loaded: LoadedRelease, spec: ImageSpec,
                     variables: dict[str, str]) -> str:
    """/workspace/README.md: what the image holds and how to run it under docker, Slurm with
    pyxis/enroot, Apptainer and Charliecloud (templates/workspace-README.md.j2)."""
    assert spec.entry is not None
    entry = spec.entry
    stack = loaded.release.cuda_stacks[entry.stack] if entry.stack else None
    return env.get_template("workspace-README.md.j2").render(
        title=loaded.frameworks[entry.framework].spec.title, entry=entry, image=spec.name,
        tag=spec.tag, release=loaded.release.release, base=loaded.bases[spec.base],
        stack=stack, variables={**(stack_environment(stack) if stack else {}), **variables},
        multinode=bool(stack and loaded.bases[spec.base].cuda_apt_packages))
