"""What a bump would change, one line each for people, and as JSON for machines."""

from __future__ import annotations

import json
from dataclasses import asdict

from ngc_builder.bump.packages import PackageChange
from ngc_builder.bump.plan import BumpResult, FrameworkChange
from ngc_builder.bump.repin import StackPlan


def describe(result: BumpResult) -> list[str]:
    lines = [_framework_line(change) for change in result.frameworks]
    for stack in result.stacks:
        lines += _stack_lines(stack)
    return lines + [line for change in result.packages if (line := _package_line(change))]


SHOWN_REASONS = 2  # the newest versions turned down; older ones mostly repeat them


def _why(reasons: tuple[str, ...]) -> str:
    shown = list(reasons[:SHOWN_REASONS])
    if len(reasons) > SHOWN_REASONS:
        shown.append(f"{len(reasons) - SHOWN_REASONS} older versions turned down too")
    return "; ".join(shown)


def _framework_line(change: FrameworkChange) -> str:
    why = _why(change.reasons)
    if change.expect_failure:
        return f"{change.image} kept at {change.old} (expect_failure)" + (f": {why}" if why
                                                                           else "")
    if change.changed:
        return f"{change.image} {change.old} -> {change.new}" + (f" (not newer: {why})" if why
                                                                 else "")
    if why:
        return f"{change.image} held at {change.old}: {why}"
    return f"{change.image} {change.old} unchanged (newest on its track)"


def _package_line(change: PackageChange) -> str | None:
    """A moved or held package; one already at the newest fitting version says nothing."""
    what, why = f"{change.image} {change.field}.{change.name}", _why(change.reasons)
    if change.changed:
        return f"{what} {change.old} -> {change.new}" + (f" (not newer: {why})" if why else "")
    return f"{what} held at {change.old}: {why}" if why else None


def _stack_lines(stack: StackPlan) -> list[str]:
    lines: list[str] = []
    if stack.cuda_new != stack.cuda_old:
        lines.append(f"{stack.name} cuda {stack.cuda_old} -> {stack.cuda_new}")
    for change in stack.changes:
        old = change.old if change.old is not None else "(new)"
        lines.append(f"{stack.name} {change.wheel} {old} -> {change.new} ({change.reason})")
    if stack.cuda_new != stack.cuda_old and stack.unasked:
        # A new CUDA minor with wheels nobody asks for: the engineer decides whether they move.
        lines.append(f"{stack.name} kept (no framework asks for them): "
                     + ", ".join(f"{w} {stack.wheels[w]}" for w in stack.unasked))
    lines += [f"{stack.name} conflict: {conflict.message}" for conflict in stack.conflicts]
    return lines


def to_json(result: BumpResult) -> str:
    data = asdict(result)
    data["ok"] = result.ok
    for change, entry in zip(result.frameworks, data["frameworks"], strict=True):
        entry["changed"] = change.changed
    for package, entry in zip(result.packages, data["packages"], strict=True):
        entry["changed"] = package.changed
    return json.dumps(data, indent=2)
