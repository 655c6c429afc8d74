"""Checks, the suite that collects them, and the context a check runs with.

Probes never import the runner (it is named ``ngc_runner`` in images but ``ngc_builder.runner``
on a host); everything they need reaches them through the ``Suite`` and ``Context`` objects.
"""

from __future__ import annotations

import math
import statistics
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from . import numeric, nvml, output, perf
from .report import FAULTS, NO_GPU, TIERS, CheckResult, Fault

CheckFn = Callable[["Context"], object]
_TRACEBACK_LINES = 12
_TEXT_LIMIT = 2000


class CheckFailed(Exception):
    """Raised (through ``ctx.fail``) to fail a check; ``fault`` says whose fault it is."""

    def __init__(self, message: str, fault: Fault = "image") -> None:
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {FAULTS}, got {fault!r}")
        super().__init__(message)
        self.message = message
        self.fault: Fault = fault


class CheckSkipped(Exception):
    """Raised (through ``ctx.skip``) to skip a check with a reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class RunEnv:
    """What every check may know about the run."""

    expect: dict[str, Any]
    gpu_mode: str
    gpu_expected: bool
    # NVIDIA device nodes or nvidia-smi are visible: tells "image can't use the GPU" (image
    # fault) from "no GPU was passed in" (host fault) when a framework sees no GPU.
    gpu_visible: bool
    # GPUs the host gave this process (device nodes): frameworks must see exactly as many.
    host_gpus: int = 0
    # NVML's view at the start of the run: GPU names pick the floors and baselines of T3.
    gpu_info: dict[str, Any] = field(default_factory=dict)
    baselines: dict[str, Any] = field(default_factory=dict)

    @property
    def gpu_name(self) -> str | None:
        gpus = self.gpu_info.get("gpus") or []
        return str(gpus[0]["name"]) if gpus else None


@dataclass(frozen=True)
class Check:
    id: str
    tier: str
    needs_gpu: bool
    fn: CheckFn
    requires: tuple[str, ...] = ()


class Context:
    """Passed to every check; one per check, so evidence never leaks between checks."""

    CheckFailed = CheckFailed
    CheckSkipped = CheckSkipped

    def __init__(self, env: RunEnv, check_id: str) -> None:
        self.check_id = check_id
        self.expect = env.expect
        self.gpu_mode = env.gpu_mode
        self.gpu_expected = env.gpu_expected
        self.gpu_visible = env.gpu_visible
        self.host_gpus = env.host_gpus
        self.env = env
        self.evidence_data: dict[str, Any] = {}

    def fail(self, message: str, fault: Fault = "image") -> NoReturn:
        """Fail the check. It raises, so ``ctx.fail(...)`` and ``raise ctx.fail(...)`` both work."""
        raise CheckFailed(message, fault)

    def skip(self, reason: str) -> NoReturn:
        raise CheckSkipped(reason)

    def cpu_fallback(self, detail: str) -> NoReturn:
        """A GPU was expected but the framework sees none: always a failure, never a pass."""
        fault: Fault = "image" if self.gpu_visible else "host"
        self.evidence("gpu_visible_in_container", self.gpu_visible)
        raise CheckFailed(f"CPU fallback: {detail}", fault)

    def evidence(self, key: str, value: object) -> None:
        self.evidence_data[key] = jsonable(value)

    def measure(
        self, metric: str, unit: str, sample: Callable[[], float], repeats: int = perf.MIN_REPEATS,
    ) -> str:
        """T3: ``sample()`` returns one measurement; the median is held to the threshold."""
        gpu = self.env.gpu_name or "unknown GPU"
        branch = nvml.driver_branch(self.env.gpu_info.get("driver"))
        self.evidence("gpu_before", nvml.snapshot())
        samples = perf.repeat(sample, repeats)
        self.evidence("gpu_after", nvml.snapshot())
        limit = perf.threshold_for(self.env.baselines, gpu, branch, metric)
        passed, message = perf.verdict(metric, unit, samples, limit)
        self.evidence("measurement", {
            "metric": metric, "unit": unit, "samples": samples,
            "median": statistics.median(samples), "threshold": limit.value,
            "floor": limit.floor, "baseline": limit.baseline,
            "baseline_release": limit.baseline_release, "gpu": gpu, "driver_branch": branch})
        if not passed:
            self.fail(message)
        return message

    def compare(
        self, what: str, actual: object, reference: object, tolerance: float,
        key: str | None = None,
    ) -> float:
        """Fail unless max |actual - reference| / max |reference| <= ``tolerance``; returns
        that error. Arrays are any framework's (see ``numeric.flatten``). The error is kept as
        evidence under ``key``, by default ``<what>_rel_error`` so that the comparisons of one
        check keep theirs apart."""
        error = numeric.rel_error(actual, reference)
        self.evidence(f"{what}_rel_error" if key is None else key, error)
        problem = numeric.over_tolerance(what, error, tolerance)
        if problem is not None:
            self.fail(problem)
        return error

    def assert_close(self, what: str, actual: object, reference: object, tolerance: float) -> str:
        """``compare`` for a check whose verdict is this one comparison: its pass message."""
        self.evidence("tolerance", tolerance)
        error = self.compare(what, actual, reference, tolerance, key="rel_error")
        return numeric.within(what, error, tolerance)

    @staticmethod
    def regression_data(
        features: int = 8, samples: int = 64, seed: int = 0
    ) -> tuple[numeric.Rows, numeric.Rows]:
        """Seeded linear-regression data as nested lists, for the probe to make its own
        arrays from (probes never import the runner, so it reaches them on the context)."""
        return numeric.regression_data(features, samples, seed)


class Suite:
    """An ordered set of checks; probes add theirs with ``@suite.check(...)``."""

    def __init__(self) -> None:
        self.checks: list[Check] = []

    def check(
        self, check_id: str, *, tier: str = "T2", needs_gpu: bool = False
    ) -> Callable[[CheckFn], CheckFn]:
        def decorator(fn: CheckFn) -> CheckFn:
            self.add(Check(check_id, tier, needs_gpu, fn))
            return fn

        return decorator

    def add(self, check: Check) -> None:
        if check.tier not in TIERS:
            raise ValueError(f"check {check.id!r}: tier must be one of {TIERS}, got {check.tier!r}")
        if any(existing.id == check.id for existing in self.checks):
            raise ValueError(f"duplicate check id {check.id!r}")
        self.checks.append(check)

    def extend(self, checks: Iterable[Check], requires: tuple[str, ...] = ()) -> None:
        for check in checks:
            self.add(
                Check(check.id, check.tier, check.needs_gpu, check.fn, check.requires + requires)
            )

    @property
    def ids(self) -> list[str]:
        return [check.id for check in self.checks]


def run_checks(suite: Suite, env: RunEnv) -> list[CheckResult]:
    results: dict[str, CheckResult] = {}
    for check in suite.checks:
        results[check.id] = run_check(check, env, results)
    return list(results.values())


def run_check(check: Check, env: RunEnv, done: dict[str, CheckResult] | None = None) -> CheckResult:
    blocked = _blocked_by(check, done or {})
    if blocked is not None:
        return CheckResult(check.id, check.tier, "skip", blocked)
    if check.needs_gpu and not env.gpu_expected:
        return CheckResult(check.id, check.tier, "skip", NO_GPU)
    ctx = Context(env, check.id)
    started = time.perf_counter()
    with output.captured() as printed:
        result = _outcome(check, ctx)
    result.duration_s = time.perf_counter() - started
    result.evidence = {**ctx.evidence_data, **result.evidence}
    return _judge_output(result, printed[0] if printed else "")


def _judge_output(result: CheckResult, text: str) -> CheckResult:
    """A known failure text in a check's output fails it, whatever the check concluded."""
    found = output.known_failures(text)
    if not found:
        return result
    result.evidence["known_failure_lines"] = found
    result.evidence["output_tail"] = output.tail(text)
    if result.status == "fail":
        return result
    result.status = "fail"
    result.fault = "image"
    result.message = truncate(f"known failure text in the output: {found[0]}", 500)
    return result


def _blocked_by(check: Check, done: dict[str, CheckResult]) -> str | None:
    for needed in check.requires:
        previous = done.get(needed)
        if previous is None or previous.status != "pass":
            state = "not run" if previous is None else previous.status
            return f"requires {needed} ({state})"
    return None


def _outcome(check: Check, ctx: Context) -> CheckResult:
    try:
        message = check.fn(ctx)
    except CheckFailed as exc:
        return CheckResult(check.id, check.tier, "fail", exc.message, exc.fault)
    except CheckSkipped as exc:
        return CheckResult(check.id, check.tier, "skip", exc.reason)
    # SystemExit too: a library calling sys.exit() must not end the whole run.
    except (Exception, SystemExit) as exc:
        evidence = {"traceback": trimmed_traceback(exc)}
        return CheckResult(check.id, check.tier, "fail", describe(exc), "image", evidence=evidence)
    return CheckResult(check.id, check.tier, "pass", "ok" if message is None else str(message))


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    name = type(exc).__name__
    return truncate(f"{name}: {text}" if text else name, 500)


def trimmed_traceback(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    lines = text.rstrip().splitlines()
    return truncate("\n".join(lines[-_TRACEBACK_LINES:]), _TEXT_LIMIT)


def truncate(text: str, limit: int = _TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 15] + " ...[truncated]"


def jsonable(value: object) -> Any:
    """Evidence must survive ``json.dumps``: keep plain data, stringify anything else."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN/inf would make the document invalid JSON
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item) for item in value]
    return str(value)
