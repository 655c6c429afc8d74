"""Validate an image as a Slurm job of the site's cluster (`validate IMAGE --slurm`).

One job per image: a script in a folder shared with the node runs the runner with the
cluster's container runtime (docker, pyxis) or with the site's Python (host), its JSON goes to
a file there, and the submit side waits for the job's final state. A job that ended without a
report is judged by how it ended: a timeout fails the image, anything else is an error.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.errors import StepError
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.plan.dag import LABEL_PREFIX
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.slurm import REQUEUED_STATES, JobState, SlurmCluster, SlurmError
from ngc_builder.validate.evidence import parse_report, write_reports
from ngc_builder.validate.hostrun import RUNNER_NAME, _stage, framework_facts, host_expect
from ngc_builder.validate.image import (
    RUN_AS,
    RUNNER_COMMAND,
    SHM_SIZE,
    ValidationOutcome,
    compare_labels,
    unprivileged_flags,
)

JOB_PREFIX = "ngc-validate-"
TAIL_LINES = 20
# Exit statuses of the script that mean the runner never ran: docker's own failure (125: no
# such image, daemon down), a command that cannot run (126) or is missing (127).
NOT_RUN_STATUSES = (125, 126, 127)
ERROR_STATES = {"FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED",
                "SPECIAL_EXIT", "UNKNOWN"}
PREEMPTED_STATES = {"PREEMPTED", *REQUEUED_STATES}
UNKNOWN_POLLS = 3  # a controller that forgets a job this many polls in a row lost it


@dataclass(frozen=True)
class JobFiles:
    """Everything of one job, in a folder the submit host and the node both see."""

    folder: Path

    @property
    def script(self) -> Path:
        return self.folder / "job.sh"

    @property
    def output(self) -> Path:  # the job's stdout and stderr (sbatch --output)
        return self.folder / "job.out"

    @property
    def report(self) -> Path:  # the runner's stdout: one JSON document
        return self.folder / "report.json"

    @property
    def stderr(self) -> Path:
        return self.folder / "runner.stderr"

    @property
    def status(self) -> Path:
        return self.folder / "runner.status"

    @property
    def labels(self) -> Path:  # docker runtime: the image's labels as the node sees them
        return self.folder / "labels.json"

    @property
    def stage(self) -> Path:  # host runtime: the runner, probes and expectations
        return self.folder / "stage"


def validate_on_slurm(
    cluster: SlurmCluster, site: SlurmSite, ref: str, expected_labels: dict[str, str],
    gpu_mode: str, out_dir: Path, name: str, baselines: dict[str, Any] | None = None,
    framework: Path | None = None,
) -> ValidationOutcome:
    """`framework`: the framework folder whose probes runtime host stages (other runtimes
    use the image's own)."""
    started = time.monotonic()
    if site.runtime == "host" and framework is None:
        raise StepError(name, "validate", "runtime host needs the image's framework folder "
                        "(its probes)")
    files = JobFiles(job_folder(site, out_dir, name))
    command = runner_line(site, ref, gpu_mode, files, expected_labels, framework)
    files.script.write_text(job_script(site, ref, command, files, gpu_mode, baselines))
    options = sbatch_options(site, name, files)
    try:
        job_id = cluster.submit(options, files.script)
        final = wait_for_job(cluster, job_id, site.poll_seconds)
    except SlurmError as exc:
        raise StepError(name, "validate", str(exc)) from None
    report = job_report(final, job_id, site, files, gpu_mode)
    report.checks.insert(0, labels_check(site, files, expected_labels, final))
    report.environment["slurm"] = {
        "job_id": job_id, "state": final.state, "exit_code": final.exit_code,
        "reason": final.reason, "runtime": site.runtime, "job_command": command,
        "sbatch": " ".join(["sbatch", "--parsable", *options, str(files.script)])}
    if site.runtime == "docker":
        report.environment["docker_command"] = command
    json_path, junit_path = write_reports(report, out_dir, name, ref, _read(files.stderr))
    return ValidationOutcome(report, json_path, junit_path, time.monotonic() - started)


def job_folder(site: SlurmSite, out_dir: Path, name: str) -> Path:
    """A new folder per job under the shared workdir (absolute: the node has another cwd)."""
    base = (site.workdir or out_dir).resolve() / "slurm-jobs"
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=base))


def sbatch_options(site: SlurmSite, name: str, files: JobFiles) -> list[str]:
    """--no-requeue: a preempted job ends PREEMPTED instead of running again unwatched."""
    options = [f"--job-name={JOB_PREFIX}{name}", f"--time={site.time_limit}",
               f"--output={files.output}", f"--chdir={files.folder}", "--no-requeue"]
    for flag, value in (("partition", site.partition), ("account", site.account),
                        ("qos", site.qos)):
        if value:
            options.append(f"--{flag}={value}")
    if site.gpus > 0:
        kind = f"{site.gpu_type}:" if site.gpu_type else ""
        options.append(f"--gres=gpu:{kind}{site.gpus}")
    return options


def runner_line(site: SlurmSite, ref: str, gpu_mode: str, files: JobFiles,
                expected_labels: dict[str, str], framework: Path | None) -> str:
    """The command the job runs the runner with, as a shell line."""
    runner = shlex.join(RUNNER_COMMAND)
    if site.runtime == "docker":
        gpus = '--gpus "$NGC_DOCKER_GPUS" ' if gpu_mode == "required" else ""
        names = " ".join(f"-e {key}" for key in ("NGC_GPU", "NGC_HOST_GPUS", "NGC_BASELINES",
                                                 "NGC_RUN_AS"))
        return (f'docker run --rm --name "$NGC_CONTAINER" {gpus}--shm-size {SHM_SIZE} '
                f"--network none {unprivileged_flags()} {names} "
                f"{shlex.quote(ref)} {runner}")
    if site.runtime == "pyxis" or framework is None:
        return f"srun --ntasks=1 --container-image={shlex.quote(enroot_ref(ref))} {runner}"
    return host_line(site, files, expected_labels, framework)


def host_line(site: SlurmSite, files: JobFiles, expected_labels: dict[str, str],
              framework: Path) -> str:
    """Runtime host: the runner and the framework's probes staged as host mode does."""
    expect = host_expect(framework_facts(framework), "")
    version = expected_labels.get(f"{LABEL_PREFIX}.framework.version")
    if version:
        expect["version"] = version
    else:
        del expect["version"]  # no version to hold the environment to
    _stage(files.stage, framework, expect)
    stage = shlex.quote(str(files.stage))
    return (f"{shlex.quote(site.python or 'python3')} -X faulthandler -m {RUNNER_NAME} "
            f"--expect-dir {stage}/expect --probes-dir {stage}/probes")


def enroot_ref(ref: str) -> str:
    """enroot names a registry with `#`: `host:5000/ns/img:tag` -> `host:5000#ns/img:tag`."""
    first, slash, rest = ref.partition("/")
    registry = slash and ("." in first or ":" in first or first == "localhost")
    return f"{first}#{rest}" if registry else ref


def job_script(site: SlurmSite, ref: str, command: str, files: JobFiles, gpu_mode: str,
               baselines: dict[str, Any] | None) -> str:
    environment = {"NGC_GPU": gpu_mode,
                   "NGC_HOST_GPUS": str(site.gpus if gpu_mode == "required" else 0)}
    if site.runtime == "docker":  # started as validate starts it on an engine
        environment["NGC_RUN_AS"] = RUN_AS
    if baselines:
        environment["NGC_BASELINES"] = json.dumps(baselines, sort_keys=True)
    lines = ["#!/bin/bash", f"# ngc-builder: validate {ref} (runtime {site.runtime})",
             f"cd {shlex.quote(str(files.folder))}",
             *(f"export {key}={shlex.quote(value)}" for key, value in environment.items()),
             *runtime_lines(site, files, gpu_mode),
             # In the background: bash runs a trap only once its foreground child is done.
             f"{command} > report.json 2> runner.stderr &", "wait $!", "status=$?",
             'echo "$status" > runner.status', 'echo "ngc-builder: runner exited $status"']
    if site.runtime == "docker":
        lines.append(f"docker image inspect --format '{{{{json .Config.Labels}}}}' "
                     f"{shlex.quote(ref)} > labels.json")
    statuses = "|".join(str(status) for status in NOT_RUN_STATUSES)
    lines += [f'case "$status" in {statuses}) tail -n {TAIL_LINES} runner.stderr >&2; '
              'exit "$status";; esac', "exit 0"]
    return "\n".join(lines) + "\n"


def runtime_lines(site: SlurmSite, files: JobFiles, gpu_mode: str) -> list[str]:
    """What the runtime needs before the runner starts."""
    if site.runtime == "host":
        return [f"export PYTHONPATH={shlex.quote(str(files.stage))}${{PYTHONPATH:+:$PYTHONPATH}}"]
    if site.runtime != "docker":
        return []
    # A cancelled or timed-out job must not leave its container running on the node: the
    # docker client Slurm signals is not the container.
    lines = ["NGC_CONTAINER=ngc-validate-${SLURM_JOB_ID:-$$}",
             "trap 'docker rm -f \"$NGC_CONTAINER\" >/dev/null 2>&1; exit 143' TERM INT"]
    if gpu_mode == "required":
        # Slurm's allocation, where it names the GPUs; else as many as were asked for.
        # docker reads --gpus as CSV: a device list must be quoted within the value.
        lines += ['NGC_DOCKER_GPUS=${CUDA_VISIBLE_DEVICES:+\\"device=$CUDA_VISIBLE_DEVICES\\"}',
                  f"NGC_DOCKER_GPUS=${{NGC_DOCKER_GPUS:-{site.gpus}}}"]
    return lines


def wait_for_job(cluster: SlurmCluster, job_id: str, poll_seconds: float) -> JobState:
    """Poll until the job ends; Ctrl-C (or any error here) cancels it on the way out."""
    unknown = 0
    try:
        while True:
            state = cluster.job_state(job_id)
            unknown = unknown + 1 if state is None else 0
            if unknown >= UNKNOWN_POLLS:
                return JobState("UNKNOWN", reason="Slurm no longer knows the job")
            if state is not None and state.final:
                return state
            time.sleep(poll_seconds)
    except BaseException:
        # A job that ended meanwhile makes scancel complain; the first error is the story.
        with contextlib.suppress(SlurmError):
            cluster.cancel(job_id)
        raise


def job_report(final: JobState, job_id: str, site: SlurmSite, files: JobFiles,
               gpu_mode: str) -> RunReport:
    """The runner's report when the job completed; else a report that says how it ended."""
    if final.state == "COMPLETED":
        status = int(_read(files.status).strip() or -1)
        return parse_report(_read(files.report), _read(files.stderr), status, gpu_mode)
    report = RunReport(image=None, python="", platform="", gpu_mode=gpu_mode,
                       gpu_expected=gpu_mode == "required")
    job = f"Slurm job {job_id}"
    if final.state == "TIMEOUT":
        report.checks.append(CheckResult("slurm.job", "T0", "fail",
                                         f"{job} timed out after {site.time_limit}",
                                         fault="image"))
    elif final.state in PREEMPTED_STATES:
        report.error = (f"{job} preempted ({final.state}): the cluster took the node back, "
                        "the image was not judged; run it again")
    elif final.state.startswith("CANCELLED"):
        report.error = f"{job} cancelled ({final.reason or 'scancel'}): the image was not judged"
    else:
        report.error = (f"{job} {final.state} (exit code {final.exit_code}, reason "
                        f"{final.reason or 'none'}): {output_tail(files)}")
    return report


def output_tail(files: JobFiles) -> str:
    lines = [line.strip() for line in _read(files.output).splitlines() if line.strip()]
    return " | ".join(lines[-TAIL_LINES:]) or f"no output in {files.output}"


def labels_check(site: SlurmSite, files: JobFiles, expected: dict[str, str],
                 final: JobState) -> CheckResult:
    """T0 labels as validate_image checks them, read on the node (runtime docker only)."""
    if not expected:
        return CheckResult("labels", "T0", "skip", "no release manifest given (--release)")
    if final.state != "COMPLETED":
        return CheckResult("labels", "T0", "skip", f"the job ended {final.state}")
    if site.runtime != "docker":
        return CheckResult("labels", "T0", "skip",
                           f"runtime {site.runtime}: the node's image labels are not read")
    try:
        found: dict[str, str] = json.loads(_read(files.labels)) or {}
    except ValueError:
        return CheckResult("labels", "T0", "fail", f"the node could not inspect the image "
                           f"({files.labels} unreadable)", fault="image")
    return compare_labels(found, expected)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
