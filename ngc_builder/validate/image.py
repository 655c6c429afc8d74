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

from ngc_builder.errors import StepError, connection_reason
from ngc_builder.runner.nvml import device_nodes
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.engine import Engine, discard
from ngc_builder.validate.evidence import parse_report, write_reports

# faulthandler: a framework that crashes the interpreter still names the frame it died in.
RUNNER_COMMAND = ["python", "-X", "faulthandler", "-m", "ngc_runner"]
SHM_SIZE = "2g"
# Validation runs as researchers' clusters start images: an arbitrary UID and GID with no
# password entry, a read-only root filesystem, a tmpfs /tmp (exec: compiled kernels and
# Theano's modules are loaded from there). The runner's image.user check reads NGC_RUN_AS.
RUN_AS_USER = "54321:54321"
TMPFS = {"/tmp": "rw,exec,nosuid,nodev"}
# `--network none`: loopback only, and the engine's /etc/hosts, so "localhost" resolves as on
# every researcher's machine (TensorBoard asks for it). The API's NetworkDisabled leaves the
# image's own /etc/hosts, which a debootstrapped OS does not have.
NO_NETWORK: dict[str, Any] = {"network_disabled": False, "network_mode": "none"}
RUN_AS = f"{RUN_AS_USER},read-only"  # NGC_RUN_AS: what the runner's image.user check expects


def unprivileged_flags() -> str:
    """The `docker run` flags of that user and root filesystem, for a person or a job script."""
    return " ".join([f"--user {RUN_AS_USER} --read-only",
                     *(f"--tmpfs {path}:{options}" for path, options in TMPFS.items())])


# Another platform's image runs under QEMU's user-mode emulator. Its default `max` CPU model
# makes XLA's compiled matmuls return wrong numbers (relative error ~1.1, seen with QEMU 10);
# Neoverse N2 is the model QEMU offers closest to Grace's Neoverse V2 (Armv9, SVE2 128-bit),
# and computes them right. Emulation is 10-30x slower: the runner gets a longer budget.
EMULATED_CPU = {"linux/arm64": "neoverse-n2"}
EMULATED_TIMEOUT_FACTOR = 3
# Under emulation the runner does the emulated tier only (runner/scope.py): what the platform's
# own machine code can tell here; numerics, servers and benchmarks wait for a native node.
EMULATED_SCOPE = {"NGC_SCOPE": "emulated"}


def emulation_environment(platform: str | None) -> dict[str, str]:
    """What a container of `platform` needs on this host: {} for the host's own."""
    if platform is None or platform not in EMULATED_CPU:
        return {}
    return {"QEMU_CPU": EMULATED_CPU[platform], **EMULATED_SCOPE}


@dataclass(frozen=True)
class ValidationOutcome:
    report: RunReport
    json_path: Path
    junit_path: Path
    seconds: float


def validate_image(
    engine: Engine, ref: str, expected_labels: dict[str, str], gpu_mode: str, out_dir: Path,
    name: str, timeout: int = 1800, baselines: dict[str, Any] | None = None,
    platform: str | None = None,
) -> ValidationOutcome:
    """`platform`: another platform's image, run emulated (None: the host's)."""
    started = time.monotonic()
    environment = {**runner_environment(gpu_mode, baselines), **emulation_environment(platform)}
    try:
        stdout, stderr, status = run_runner(engine, ref, gpu_mode, timeout, environment,
                                            platform)
        labels = check_labels(engine, ref, expected_labels)
        entrypoint = check_entrypoint(engine, ref, platform)
    except requests.ConnectionError as exc:
        raise StepError(name, "validate", "the engine went away mid-validation (stopped or "
                        f"restarted?): {connection_reason(exc)}") from None
    except (docker.errors.DockerException, requests.RequestException) as exc:
        # An engine error or a runner that outlives `timeout` fails this image, not the run.
        raise StepError(name, "validate", f"{exc.__class__.__name__}: {exc}") from None
    report = parse_report(stdout, stderr, status, gpu_mode)
    report.checks[0:0] = [labels, entrypoint]
    report.environment["docker_command"] = docker_command(ref, gpu_mode, environment, platform)
    if platform is not None:
        report.environment["platform"] = platform
        report.environment["emulated"] = (f"QEMU user-mode, CPU model "
                                          f"{environment['QEMU_CPU']}, emulated tier")
    json_path, junit_path = write_reports(report, out_dir, name, ref, stderr)
    return ValidationOutcome(report, json_path, junit_path, time.monotonic() - started)


def runner_environment(gpu_mode: str, baselines: dict[str, Any] | None) -> dict[str, str]:
    """NGC_HOST_GPUS: the GPUs passed in, which every framework inside must see."""
    environment = {"NGC_GPU": gpu_mode, "NGC_RUN_AS": RUN_AS,
                   "NGC_HOST_GPUS": str(device_nodes() if gpu_mode == "required" else 0)}
    if baselines:
        environment["NGC_BASELINES"] = json.dumps(baselines, sort_keys=True)
    return environment


def docker_command(ref: str, gpu_mode: str, environment: dict[str, str],
                   platform: str | None = None) -> str:
    """The `docker run` equivalent of what validate did, for a person to repeat it."""
    parts = ["docker run --rm", "--gpus all" if gpu_mode == "required" else "",
             f"--platform {platform}" if platform else "",
             f"--shm-size {SHM_SIZE} --network none {unprivileged_flags()}",
             *(f"-e {key}={shlex.quote(value)}" for key, value in sorted(environment.items())
               if key != "NGC_BASELINES"), ref, *RUNNER_COMMAND]
    return " ".join(part for part in parts if part)


def run_runner(
    engine: Engine, ref: str, gpu_mode: str, timeout: int,
    environment: dict[str, str] | None = None, platform: str | None = None,
) -> tuple[str, str, int]:
    requests = ([docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
                if gpu_mode == "required" else [])
    return run_unprivileged(engine, ref, RUNNER_COMMAND, timeout,
                            environment=environment or {"NGC_GPU": gpu_mode},
                            device_requests=requests, shm_size=SHM_SIZE, platform=platform)


def run_unprivileged(engine: Engine, ref: str, command: list[str], timeout: int,
                     platform: str | None = None, **options: Any) -> tuple[str, str, int]:
    """`command` in `ref` as validation starts images (RUN_AS_USER, read-only root, no
    network); its stdout, stderr and exit status. The container is always removed.
    `platform`: another platform's image, run emulated with a longer `timeout`."""
    if platform is not None:
        options["platform"] = platform
        options["environment"] = {**options.get("environment", {}),
                                  **emulation_environment(platform)}
        timeout *= EMULATED_TIMEOUT_FACTOR
    container = engine.containers.create(ref, command, user=RUN_AS_USER, read_only=True,
                                         tmpfs=TMPFS, **NO_NETWORK, **options)
    try:
        container.start()
        status = int(container.wait(timeout=timeout).get("StatusCode", -1))
        stdout = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        stderr = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
    finally:
        discard(container)
    return stdout, stderr, status


# The entrypoint must hand the command its arguments untouched (no word splitting, no
# expansion, no globbing) and give back its exit status.
ENTRY_PROBE = ["sh", "-c", 'printf "%s|" "$@"; exit 7', "sh", "a b", "$HOME", "*"]
ENTRY_STDOUT = "a b|$HOME|*|"
ENTRY_STATUS = 7


def check_entrypoint(engine: Engine, ref: str, platform: str | None = None) -> CheckResult:
    """T0: the image's entrypoint prints its banner on stderr and runs the command unchanged."""
    stdout, stderr, status = run_unprivileged(engine, ref, ENTRY_PROBE, 120, platform=platform)
    evidence = {"command": ENTRY_PROBE, "status": status, "stdout": stdout[-300:],
                "banner": stderr[-1500:]}
    problems = entrypoint_problems(status, stdout, stderr)
    if problems:
        return CheckResult("image.entrypoint", "T0", "fail", "; ".join(problems),
                           fault="image", evidence=evidence)
    return CheckResult("image.entrypoint", "T0", "pass", "banner on stderr, arguments and "
                       f"exit status {ENTRY_STATUS} passed through", evidence=evidence)


def entrypoint_problems(status: int, stdout: str, stderr: str) -> list[str]:
    problems = []
    if status != ENTRY_STATUS:
        problems.append(f"exit status {status}, the command exited {ENTRY_STATUS}")
    if stdout != ENTRY_STDOUT:
        problems.append(f"the command saw arguments {stdout!r}, not {ENTRY_STDOUT!r}")
    if not stderr.startswith("== "):
        problems.append("no banner on stderr")
    return problems


def check_labels(engine: Engine, ref: str, expected: dict[str, str]) -> CheckResult:
    """T0: the image carries every label the manifest says it should, with that value."""
    if not expected:
        return CheckResult("labels", "T0", "skip", "no release manifest given (--release)")
    try:
        found = engine.api.inspect_image(ref)["Config"].get("Labels") or {}
    except (docker.errors.DockerException, requests.RequestException) as exc:
        return CheckResult("labels", "T0", "fail", f"cannot inspect {ref}: {exc}", fault="image")
    return compare_labels(found, expected)


def compare_labels(found: dict[str, str], expected: dict[str, str]) -> CheckResult:
    """The `labels` check: the image's labels against the planned ones (wherever read)."""
    wrong = {key: found.get(key) for key, value in expected.items() if found.get(key) != value}
    if wrong:
        detail = ", ".join(f"{k}={v!r} (want {expected[k]!r})" for k, v in sorted(wrong.items()))
        return CheckResult("labels", "T0", "fail", f"labels differ: {detail}", fault="image",
                           evidence={"labels": found})
    return CheckResult("labels", "T0", "pass", f"{len(expected)} labels as planned",
                       evidence={"labels": {k: found[k] for k in sorted(expected)}})
