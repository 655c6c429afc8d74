"""Running probe functions as checks, without a framework (see fake_torch and fake_jax)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ngc_builder.runner.report import CheckResult
from ngc_builder.runner.suite import Check, CheckFn, RunEnv, run_check

FRAMEWORKS = Path(__file__).resolve().parents[3] / "frameworks"
LoadProbe = Callable[[str, str], ModuleType]


def run_gpu_check(fn: CheckFn) -> CheckResult:
    """``fn`` run as a GPU check on a host that passed one GPU."""
    return run_check(Check("probe.check", "T2", True, fn), RunEnv({}, "required", True, True, 1))
