"""Validate (stage 5): run the runner inside an image and keep its evidence.

The container gets GPUs (a DeviceRequest for all) only when the host has some; the runner
is told which, so GPU checks are either run for real or reported `skipped: no GPU`.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors
import docker.types
import requests

from ngc_builder.errors import StepError
from ngc_builder.files import write_atomic
from ngc_builder.runner.nvml import device_nodes
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.engine import Engine
from ngc_builder.validate.junit import write_junit

# faulthandler: a framework that crashes the interpreter still names the frame it died in.
RUNNER_COMMAND = ["python", "-X", "faulthandler", "-m", "ngc_runner"]
SHM_SIZE = "2g"


@dataclass(frozen=True)
class ValidationOutcome:
    report: RunReport
    json_path: Path
    junit_path: Path
    seconds: float


def validate_image(
    engine: Engine, ref: str, expected_labels: dict[str, str], gpu_mode: str, out_dir: Path,
    name: str, timeout: int = 1800, baselines: dict[str, Any] | None = None,
) -> ValidationOutcome:
    started = time.monotonic()
    environment = runner_environment(gpu_mode, baselines)
    try:
        stdout, stderr, status = run_runner(engine, ref, gpu_mode, timeout, environment)
        labels = check_labels(engine, ref, expected_labels)
    except (docker.errors.DockerException, requests.RequestException) as exc:
        # An engine error or a runner that outlives `timeout` fails this image, not the run.
        raise StepError(name, "validate", f"{exc.__class__.__name__}: {exc}") from None
    report = parse_report(stdout, stderr, status, gpu_mode)
    report.checks.insert(0, labels)
    report.environment["docker_command"] = docker_command(ref, gpu_mode, environment)
    json_path, junit_path = write_reports(report, out_dir, name, ref, stderr)
    return ValidationOutcome(report, json_path, junit_path, time.monotonic() - started)


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


def runner_environment(gpu_mode: str, baselines: dict[str, Any] | None) -> dict[str, str]:
    """NGC_HOST_GPUS: the GPUs passed in, which every framework inside must see."""
    environment = {"NGC_GPU": gpu_mode,
                   "NGC_HOST_GPUS": str(device_nodes() if gpu_mode == "required" else 0)}
    if baselines:
        environment["NGC_BASELINES"] = json.dumps(baselines, sort_keys=True)
    return environment


def docker_command(ref: str, gpu_mode: str, environment: dict[str, str]) -> str:
    """The `docker run` equivalent of what validate did, for a person to repeat it."""
    parts = ["docker run --rm", "--gpus all" if gpu_mode == "required" else "",
             f"--shm-size {SHM_SIZE} --network none",
             *(f"-e {key}={shlex.quote(value)}" for key, value in sorted(environment.items())
               if key != "NGC_BASELINES"), ref, *RUNNER_COMMAND]
    return " ".join(part for part in parts if part)


def run_runner(
    engine: Engine, ref: str, gpu_mode: str, timeout: int,
    environment: dict[str, str] | None = None,
) -> tuple[str, str, int]:
    requests = ([docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
                if gpu_mode == "required" else [])
    container = engine.containers.create(
        ref, RUNNER_COMMAND, environment=environment or {"NGC_GPU": gpu_mode},
        device_requests=requests, shm_size=SHM_SIZE, network_disabled=True)
    try:
        container.start()
        status = int(container.wait(timeout=timeout).get("StatusCode", -1))
        stdout = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        stderr = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
    finally:
        container.remove(force=True)
    return stdout, stderr, status


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


def crash_summary(stderr: str) -> str:
    """The fatal error and the innermost frame from a faulthandler dump, else the last lines."""
    lines = [line.strip() for line in stderr.strip().splitlines()]
    fatal = [i for i, line in enumerate(lines) if line.startswith("Fatal Python error")]
    if fatal:
        frames = [line for line in lines[fatal[0]:] if line.startswith("File ")]
        return " | ".join([lines[fatal[0]], *frames[:1]])
    return " | ".join(lines[-3:])


def check_labels(engine: Engine, ref: str, expected: dict[str, str]) -> CheckResult:
    """T0: the image carries every label the manifest says it should, with that value."""
    if not expected:
        return CheckResult("labels", "T0", "skip", "no release manifest given (--release)")
    try:
        found = engine.api.inspect_image(ref)["Config"].get("Labels") or {}
    except (docker.errors.DockerException, requests.RequestException) as exc:
        return CheckResult("labels", "T0", "fail", f"cannot inspect {ref}: {exc}", fault="image")
    wrong = {key: found.get(key) for key, value in expected.items() if found.get(key) != value}
    if wrong:
        detail = ", ".join(f"{k}={v!r} (want {expected[k]!r})" for k, v in sorted(wrong.items()))
        return CheckResult("labels", "T0", "fail", f"labels differ: {detail}", fault="image",
                           evidence={"labels": found})
    return CheckResult("labels", "T0", "pass", f"{len(expected)} labels as planned",
                       evidence={"labels": {k: found[k] for k in sorted(expected)}})
