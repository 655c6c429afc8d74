"""Checks and the suite that collects them, and running them into results.

Probes never import the runner (it is named ``ngc_runner`` in images but ``ngc_builder.runner``
on a host); everything they need reaches them through the ``Suite`` and ``Context`` objects.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import output, scope
from .context import CheckFailed, CheckSkipped, Context, DeviceZero, RunEnv, jsonable
from .report import NO_GPU, TIERS, CheckResult

# Modules and probes have always found these here; they live in .context now.
__all__ = ["Check", "CheckFailed", "CheckSkipped", "Context", "DeviceZero", "RunEnv", "Suite",
           "describe", "jsonable", "run_check", "run_checks", "trimmed_traceback", "truncate"]

CheckFn = Callable[["Context"], object]
_TRACEBACK_LINES = 12
_TEXT_LIMIT = 2000


@dataclass(frozen=True)
class Check:
    id: str
    tier: str
    needs_gpu: bool
    fn: CheckFn
    requires: tuple[str, ...] = ()
    # In the emulated tier (scope.py)? None: by tier (T0 in, the rest out).
    emulated: bool | None = None

    @property
    def in_emulated_tier(self) -> bool:
        return scope.in_emulated_tier(self.tier, self.emulated)


class Suite:
    """An ordered set of checks; probes add theirs with ``@suite.check(...)``."""

    def __init__(self) -> None:
        self.checks: list[Check] = []

    def check(
        self, check_id: str, *, tier: str = "T2", needs_gpu: bool = False,
        emulated: bool | None = None,
    ) -> Callable[[CheckFn], CheckFn]:
        def decorator(fn: CheckFn) -> CheckFn:
            self.add(Check(check_id, tier, needs_gpu, fn, emulated=emulated))
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
            self.add(Check(check.id, check.tier, check.needs_gpu, check.fn,
                           check.requires + requires, check.emulated))

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
    # A GPU check without a GPU says so first, whatever the scope (`skipped: no GPU`).
    if check.needs_gpu and not env.gpu_expected:
        return CheckResult(check.id, check.tier, "skip", NO_GPU)
    if env.scope == "emulated" and not check.in_emulated_tier:
        return CheckResult(check.id, check.tier, "skip", scope.out_of_scope_reason())
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
