"""Where a devel check finds its CUDA toolkit, and what a library it built must carry: the
runner's side of ``ctx.cuda_home()`` and ``ctx.gpu_code_covers()`` (runner/devel.py has the
checks). Typed against the probes' view of a context (probe_api.py): the context imports this."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .fatbin import coverage_gaps, scan_library
from .probe_api import ProbeContext

HOST_CUDA_HOMES = ("/usr/local/cuda",)


def cuda_home(ctx: ProbeContext, defaults: tuple[str, ...] = HOST_CUDA_HOMES) -> Path:
    """The toolkit a devel check builds with: the image's (``expect["devel"]["cuda_home"]``),
    or in host mode the environment's ($CUDA_HOME, nvcc on PATH, /usr/local/cuda)."""
    devel = ctx.expect.get("devel")
    if devel:
        return Path(devel["cuda_home"])
    if not ctx.host_mode:
        ctx.skip("not a devel image: no compiler here (the -devel tag has one)")
    for candidate in _host_candidates(defaults):
        if (candidate / "bin" / "nvcc").is_file():
            return candidate
    ctx.skip("host mode: no CUDA toolkit here ($CUDA_HOME, nvcc on PATH, /usr/local/cuda)")


def _host_candidates(defaults: tuple[str, ...]) -> list[Path]:
    found = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        found.append(str(Path(nvcc).resolve().parent.parent))
    return [Path(path) for path in [*found, *defaults] if path]


def gpu_code_covers(ctx: ProbeContext, path: str, targets: list[str] | None = None) -> str:
    """Fail unless the library at `path` carries SASS for every GPU target of the release
    (or of `targets`, what it was built for); the architectures it holds otherwise."""
    code = scan_library(Path(path))
    if targets is None:
        targets = [str(target) for target in ctx.expect.get("gpu_targets", [])]
    ctx.evidence("built_gpu_code", code.describe())
    if code.empty:
        ctx.fail(f"{Path(path).name} was built but carries no GPU code")
    gaps = coverage_gaps({path: code}, targets, [])
    if gaps:
        ctx.fail("; ".join(gaps))
    return code.describe()
