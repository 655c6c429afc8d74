"""A runner's report kept as evidence: JSON, JUnit XML, a Markdown page and its stderr.

Stdlib only, like the runner: the GPU-node path (`validate.node`) uses it on machines that have
nothing but their own Python.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ngc_builder.files import write_atomic
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.validate.junit import write_junit


def parse_report(stdout: str, stderr: str, status: int, gpu_mode: str) -> RunReport:
    """The runner's JSON, or a failed report that says why there was none."""
    try:
        return RunReport.from_dict(json.loads(stdout))
    except (ValueError, KeyError, TypeError):
        tail = crash_summary(stderr) or "no output"
        died = f"killed by signal {status - 128}" if status > 128 else f"exited {status}"
        failed = RunReport(image=None, python="", platform="", gpu_mode=gpu_mode,
                           gpu_expected=gpu_mode == "required")
        failed.checks.append(CheckResult("runner.output", "T0", "fail",
                                         f"runner {died} without a JSON report: {tail}",
                                         fault="image"))
        return failed


def crash_summary(stderr: str) -> str:
    """The fatal error and the innermost frame from a faulthandler dump, else the last lines."""
    lines = [line.strip() for line in stderr.strip().splitlines()]
    fatal = [i for i, line in enumerate(lines) if line.startswith("Fatal Python error")]
    if fatal:
        frames = [line for line in lines[fatal[0]:] if line.startswith("File ")]
        return " | ".join([lines[fatal[0]], *frames[:1]])
    return " | ".join(lines[-3:])


def write_reports(
    report: RunReport, out_dir: Path, name: str, ref: str, stderr: str,
) -> tuple[Path, Path]:
    """JSON evidence, JUnit XML, a Markdown summary and the runner's stderr, side by side."""
    json_path = out_dir / f"{name}.validation.json"
    junit_path = out_dir / f"{name}.junit.xml"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(json_path, json.dumps(report.to_dict(), indent=2) + "\n")
    write_atomic(out_dir / f"{name}.runner.stderr", stderr)
    write_junit(report, junit_path, f"ngc.{name}")
    write_atomic(out_dir / f"{name}.summary.md", markdown_summary(report, ref, name))
    return json_path, junit_path


def markdown_summary(report: RunReport, ref: str, name: str) -> str:
    """One page per image for people: verdict, then every check with its status and message."""
    counts = ", ".join(f"{n} {status}" for status, n in report.summary.items())
    lines = [f"# Validation of {name}", "", f"- image: `{ref}`",
             f"- verdict: **{report.verdict}** ({counts})",
             f"- Python {report.python or '?'}, GPU mode {report.gpu_mode}",
             *environment_lines(report.environment), "",
             "| tier | check | status | fault | message |", "|---|---|---|---|---|"]
    for check in report.checks:
        message = " ".join(check.message.split()).replace("|", "/")
        lines.append(f"| {check.tier} | `{check.id}` | {check.status} | {check.fault or ''} "
                     f"| {message} |")
    return "\n".join(lines) + "\n"


def environment_lines(environment: dict[str, Any]) -> list[str]:
    """Where it ran: the command, and each GPU at the start and the end of the run."""
    command = environment.get("docker_command") or " ".join(environment.get("command") or [])
    lines = [f"- command: `{command}`"] if command else []
    start, end = environment.get("gpus_start") or {}, environment.get("gpus_end") or {}
    if start.get("error"):
        lines.append(f"- GPUs: {start['error']}")
    for before, after in zip(start.get("gpus") or [], end.get("gpus") or [], strict=False):
        lines.append(f"- GPU {before['index']}: {before['name']} (sm_"
                     f"{before['compute_capability'].replace('.', '')}), driver "
                     f"{start.get('driver')}, {before['temperature_c']}->"
                     f"{after['temperature_c']} C, SM clock {before['sm_clock_mhz']}->"
                     f"{after['sm_clock_mhz']} MHz")
    return lines


def tier_verdicts(report: RunReport) -> dict[str, str]:
    """Per tier: fail if any check failed, pass if any passed, else skip (with the reason)."""
    verdicts: dict[str, str] = {}
    for tier in sorted({check.tier for check in report.checks}):
        statuses = [c for c in report.checks if c.tier == tier]
        if any(c.status == "fail" for c in statuses):
            verdicts[tier] = "fail"
        elif any(c.status == "pass" for c in statuses):
            skipped = sum(c.status == "skip" for c in statuses)
            verdicts[tier] = f"pass ({skipped} skipped)" if skipped else "pass"
        else:
            verdicts[tier] = f"skip: {statuses[0].message}"
    return verdicts
