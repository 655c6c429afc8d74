"""Assemble the suite for an image's expectations and run it into a ``RunReport``."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import (
    addons,
    archs,
    core,
    devel,
    framework,
    gpu,
    imageenv,
    libs,
    multinode,
    nvml,
    perf,
    runtime,
    tools,
    visibility,
)
from .context import UNRESOLVED
from .report import RunReport
from .suite import RunEnv, Suite, run_checks


def build_suite(expect: dict[str, Any], probes_dir: Path) -> Suite:
    """Core checks first, so a framework failure can be read against its stack's state."""
    suite = Suite()
    core.register(suite, expect)
    runtime.register(suite, expect)
    imageenv.register(suite, expect)
    libs.register(suite, expect.get("libraries", {}))
    multinode.register(suite, expect)
    gpu.register(suite)
    if "gpu_targets" in expect:
        archs.register(suite)
    devel.register(suite, expect)
    if "framework" in expect:
        framework.register(suite, expect, probes_dir)
    tools.register(suite, expect)
    addons.register(suite, expect)
    return suite


def run(
    expect: dict[str, Any], probes_dir: Path, mode: str, visible: bool | None = None,
    scope: str = "full",
) -> RunReport:
    env = run_env(expect, mode, gpu.gpu_visible() if visible is None else visible, scope)
    started = time.perf_counter()
    with stdout_to_stderr():
        suite = build_suite(expect, probes_dir)
        checks = run_checks(suite, env)
    report = empty_report(mode, env.gpu_expected, expect)
    report.checks = checks
    report.duration_s = time.perf_counter() - started
    report.environment = environment(env)
    return report


def environment(env: RunEnv) -> dict[str, Any]:
    """Where it ran; with which GPUs, counted from what; which GPU the floors are for."""
    name, source = env.measured_gpu()
    return {"command": [sys.executable, *sys.argv], "scope": env.scope,
            "host_mode": env.host_mode,
            "host_gpus": env.host_gpus, "host_gpus_source": env.host_gpus_source,
            "cuda_visible_devices": env.visible_devices,
            "measured_gpu": {"name": name, "source": source} if env.gpu_expected else None,
            "gpus_start": env.gpu_info,
            "gpus_end": nvml.snapshot() if env.gpu_expected else {}}


def run_env(expect: dict[str, Any], mode: str, visible: bool, scope: str = "full") -> RunEnv:
    # NCCL says what went wrong only when asked to; its warnings then fail the check.
    os.environ.setdefault("NCCL_DEBUG", "WARN")
    expected = gpu.gpu_expected(mode, visible)
    info = nvml.snapshot() if expected else {}
    host_mode = expect.get("host_mode") is True
    count, source = visibility.expected_gpus(host_mode, os.environ, nvml.device_nodes(), info)
    return RunEnv(expect, mode, expected, visible, count, info, perf.load_document(),
                  host_mode=host_mode, host_gpus_source=source,
                  visible_devices=os.environ.get(visibility.ENV_VAR),
                  device_zero=visibility.device_zero(info) if expected else UNRESOLVED,
                  scope=scope)


def empty_report(mode: str, expected: bool, expect: dict[str, Any] | None = None) -> RunReport:
    expect = expect or {}
    image = expect.get("image")
    return RunReport(
        image=None if image is None else str(image),
        python=platform.python_version(),
        platform=platform.platform(),
        gpu_mode=mode,
        gpu_expected=expected,
        expect=expect,
    )


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Our stdout carries exactly one JSON document, but frameworks and the C libraries under
    them print freely: point both ``sys.stdout`` and file descriptor 1 at stderr meanwhile."""
    sys.stdout.flush()
    saved_fd = _dup(1)
    saved_stream = sys.stdout
    if saved_fd is not None:
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout.flush()
        _flush_c_stdio()
        sys.stdout = saved_stream
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def _flush_c_stdio() -> None:
    # C code's printf output may still sit in libc's buffer; flush it while fd 1 is stderr.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


def _dup(fd: int) -> int | None:
    try:
        return os.dup(fd)
    except OSError:  # no fd 1 at all (closed stdout): nothing to protect
        return None
