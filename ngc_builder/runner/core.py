"""T0 checks every image gets: Python version, ``pip check``, the CUDA wheel stack."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

from .suite import Check, Context, Suite, truncate
from .versions import dotted, normalize_name, release_components, versions_equal
from .wheeltags import mislabelled

PIP_TIMEOUT_S = 300
SHM_PATH = "/dev/shm"
MiB = 1 << 20
MIN_SHM_BYTES = 1024 * MiB
# nvidia-* distributions that are not CUDA libraries, so never a second copy of one.
NOT_CUDA_LIBRARIES = frozenset({"nvidia-ml-py", "nvidia-ml-py3", "nvidia-pyindex"})

Installed = Iterable[tuple[str, str]]  # (distribution name, version)


def register(suite: Suite, expect: dict[str, Any]) -> None:
    if "python" in expect:
        suite.add(Check("python.version", "T0", False, check_python))
    suite.add(Check("pip.check", "T0", False, check_pip))
    if "wheels" in expect:
        suite.add(Check("stack.wheels", "T0", False, check_wheels))
    suite.add(Check("os.shm", "T2", False, check_shm))


def check_shm(ctx: Context) -> str:
    """DataLoader workers hand batches over through /dev/shm; Docker's default 64 MB is too
    small for real batches, so a container must be started with --shm-size (the host's call)."""
    try:
        stats = os.statvfs(SHM_PATH)
    except OSError as exc:
        ctx.fail(f"{SHM_PATH} is missing ({exc}): start the container with --shm-size", "host")
    size = stats.f_frsize * stats.f_blocks
    ctx.evidence("shm_bytes", size)
    if size < MIN_SHM_BYTES:
        ctx.fail(f"{SHM_PATH} is {size / MiB:.0f} MiB, needs >= {MIN_SHM_BYTES / MiB:.0f} MiB: "
                 "start the container with --shm-size (or --ipc=host)", "host")
    return f"{SHM_PATH} is {size / MiB:.0f} MiB"


def check_python(ctx: Context) -> str:
    expected = str(ctx.expect["python"])
    want = release_components(expected)
    version = sys.version_info
    have = (version.major, version.minor, version.micro)[: len(want)]
    ctx.evidence("executable", sys.executable)
    if have != want:
        ctx.fail(f"Python is {dotted(have)}, expected {expected}")
    return f"Python {sys.version.split()[0]}"


def check_pip(ctx: Context) -> str:
    command = [sys.executable, "-m", "pip", "check"]
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        ctx.fail(f"pip check did not finish in {PIP_TIMEOUT_S} s")
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0 and "No module named pip" in output:
        ctx.skip("pip is not installed in this environment")
    ctx.evidence("output", truncate(output))
    if proc.returncode == 0:
        return truncate(proc.stdout.strip(), 200) or "pip check passed"
    excused = [mislabelled(line) for line in output.splitlines()]
    if not excused or None in excused:
        ctx.fail(f"pip check exited {proc.returncode}: {truncate(output, 300)}")
    ctx.evidence("mislabelled_wheels", excused)
    return truncate(f"pip check found only wheels whose WHEEL tags are wrong and whose machine "
                    f"code is right ({'; '.join(str(reason) for reason in excused)})", 300)


def installed_distributions() -> list[tuple[str, str]]:
    dists = importlib.metadata.distributions()
    return [(d.metadata["Name"] or "", d.version) for d in dists if d.metadata["Name"]]


def check_wheels(ctx: Context) -> str:
    # A devel image adds its stack's compiler wheels (expect/30-devel.json), a row NVIDIA's
    # add-ons it asked for (nvImageCodec, cuDNN's frontend: docs/addons.md): those too, exactly.
    devel = (ctx.expect.get("devel") or {}).get("devel_wheels", {})
    addons = ctx.expect.get("addons") or {}
    expected = {str(name): str(version)
                for name, version in {**ctx.expect["wheels"], **devel, **addons}.items()}
    problems = wheel_problems(expected, installed_distributions())
    ctx.evidence("expected", expected)
    if problems:
        ctx.evidence("problems", problems)
        ctx.fail("; ".join(problems))
    return f"{len(expected)} CUDA wheels at the expected versions, no extra CUDA wheels"


def wheel_problems(expected: dict[str, str], installed: Installed) -> list[str]:
    """Everything wrong with the installed CUDA wheels, as human-readable lines."""
    found: dict[str, list[str]] = {}
    for name, version in installed:
        found.setdefault(normalize_name(name), []).append(version)
    wanted = {normalize_name(name): version for name, version in expected.items()}
    problems = [
        _expected_problem(name, version, found.get(name, [])) for name, version in wanted.items()
    ]
    problems += [
        _extra_problem(name, versions)
        for name, versions in sorted(found.items())
        if name not in wanted
    ]
    return [problem for problem in problems if problem]


def _expected_problem(name: str, version: str, versions: list[str]) -> str:
    if not versions:
        return f"{name} is not installed (expected {version})"
    if len(versions) > 1:
        return f"{name} is installed {len(versions)} times ({', '.join(versions)}): a second copy"
    if not versions_equal(versions[0], version):
        return f"{name} is {versions[0]}, expected {version}"
    return ""


def _extra_problem(name: str, versions: list[str]) -> str:
    if name in NOT_CUDA_LIBRARIES or not (name.startswith("nvidia-") or name == "cuda-toolkit"):
        return ""
    found = ", ".join(versions)
    return f"unexpected {name} {found}: not in the stack's wheels (a second CUDA library copy?)"
