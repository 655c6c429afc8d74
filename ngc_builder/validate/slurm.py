"""Validate an image as a Slurm job of the site's cluster (`validate IMAGE --slurm`).

One job per image: a script in a folder shared with the node (validate/slurm_script.py) runs
the runner with the cluster's container runtime (docker, pyxis, charliecloud) or with the
site's Python (host), its JSON goes to a file there, then the two-process workers run again
under srun, and the submit side waits for the job's final state. A job that ended without a
report is judged by how it ended: a timeout fails the image, anything else is an error.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.errors import StepError
from ngc_builder.files import DATA_LIMIT, read_tail
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.slurm import REQUEUED_STATES, JobState, SlurmCluster, SlurmError
from ngc_builder.validate.chrun import is_reference
from ngc_builder.validate.evidence import parse_report, write_reports
from ngc_builder.validate.image import ValidationOutcome, compare_labels
from ngc_builder.validate.slurm_script import (
    LABELS_READ_BY,
    TAIL_LINES,
    Job,
    JobFiles,
    job_script,
    runner_line,
)
from ngc_builder.validate.srun import TASKS, Worker, judge_launch, read_launch

JOB_PREFIX = "ngc-validate-"
ERROR_STATES = {"FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED",
                "SPECIAL_EXIT", "UNKNOWN"}
PREEMPTED_STATES = {"PREEMPTED", *REQUEUED_STATES}
UNKNOWN_POLLS = 3  # a controller that forgets a job this many polls in a row lost it


def validate_on_slurm(
    cluster: SlurmCluster, site: SlurmSite, ref: str, expected_labels: dict[str, str],
    gpu_mode: str, out_dir: Path, name: str, baselines: dict[str, Any] | None = None,
    framework: Path | None = None, workers: tuple[Worker, ...] = (),
) -> ValidationOutcome:
    """`framework`: the framework folder whose probes runtime host stages (other runtimes
    use the image's own). `workers`: the two-process jobs run again under srun."""
    asked = Asked(ref, expected_labels, gpu_mode, out_dir, name)
    submitted = submit_validation(cluster, site, asked, baselines, framework, workers)
    try:
        final = wait_for_job(cluster, submitted.job_id, site.poll_seconds)
    except SlurmError as exc:
        raise StepError(name, "validate", str(exc)) from None
    return judged(submitted, final)


@dataclass(frozen=True)
class Asked:
    """What one validation job is asked: the image, what it must carry, where reports go."""

    ref: str
    expected_labels: dict[str, str]
    gpu_mode: str
    out_dir: Path
    name: str


@dataclass(frozen=True)
class Submitted:
    """A validation job on its way: judged by `judged` once Slurm says it ended."""

    asked: Asked
    job: Job
    job_id: str
    command: str
    options: list[str]
    started: float


def submit_validation(cluster: SlurmCluster, site: SlurmSite, asked: Asked,
                      baselines: dict[str, Any] | None = None, framework: Path | None = None,
                      workers: tuple[Worker, ...] = (),
                      environment: tuple[str, ...] = ()) -> Submitted:
    """The job's folder and script written and the job submitted; StepError if it cannot be.
    `environment`: the job is submitted `--export=NONE` and these lines set its own."""
    started, name = time.monotonic(), asked.name
    if not is_reference(asked.ref):  # pasted into the script as an argument: never an option
        raise StepError(name, "validate", f"{asked.ref!r} is not an image name or ID")
    if site.runtime == "host" and framework is None:
        raise StepError(name, "validate", "runtime host needs the image's framework folder "
                        "(its probes)")
    job = Job(site, asked.ref, asked.gpu_mode, JobFiles(job_folder(site, asked.out_dir, name)),
              workers, environment)
    command = runner_line(job, asked.expected_labels, framework)
    job.files.script.write_text(job_script(job, command, baselines))
    options = sbatch_options(site, name, job.files, len(workers) > 0)
    options += ["--export=NONE"] if job.environment else []
    try:
        job_id = cluster.submit(options, job.files.script)
    except SlurmError as exc:
        raise StepError(name, "validate", str(exc)) from None
    return Submitted(asked, job, job_id, command, options, started)


def judged(submitted: Submitted, final: JobState) -> ValidationOutcome:
    """The job's report (or how it ended) with its label and srun checks, written out."""
    job, asked, site = submitted.job, submitted.asked, submitted.job.site
    report = job_report(final, submitted.job_id, site, job.files, asked.gpu_mode)
    report.checks.insert(0, labels_check(site, job.files, asked.expected_labels, final))
    if final.state == "COMPLETED":
        report.checks += srun_checks(job)
    report.environment["slurm"] = {
        "job_id": submitted.job_id, "state": final.state, "exit_code": final.exit_code,
        "reason": final.reason, "runtime": site.runtime, "job_command": submitted.command,
        "partition": site.partition,
        "sbatch": " ".join(["sbatch", "--parsable", *submitted.options, str(job.files.script)])}
    if site.runtime == "docker":
        report.environment["docker_command"] = submitted.command
    json_path, junit_path = write_reports(report, asked.out_dir, asked.name, asked.ref,
                                          _read(job.files.stderr))
    return ValidationOutcome(report, json_path, junit_path, time.monotonic() - submitted.started)


def srun_checks(job: Job) -> list[CheckResult]:
    """The srun launches of the job's workers, judged by their own checks (validate/srun.py)."""
    script = _read(job.files.script).splitlines()
    results: list[CheckResult] = []
    for worker in job.workers:
        marker = f"> srun-{worker.tag}.out "
        line = next((text for text in script if marker in text), worker.file)
        results += judge_launch(read_launch(job.files.folder, worker, line), stack=True)
    return results


def job_folder(site: SlurmSite, out_dir: Path, name: str) -> Path:
    """A new folder per job under the shared workdir (absolute: the node has another cwd)."""
    base = (site.workdir or out_dir).resolve() / "slurm-jobs"
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=base))


def sbatch_options(site: SlurmSite, name: str, files: JobFiles, srun: bool = False) -> list[str]:
    """--no-requeue: a preempted job ends PREEMPTED instead of running again unwatched.
    `srun`: the job launches two-task steps, so it asks for two tasks."""
    options = [f"--job-name={JOB_PREFIX}{name}", f"--time={site.time_limit}",
               f"--output={files.output}", f"--chdir={files.folder}", "--no-requeue"]
    if srun:
        options.append(f"--ntasks={TASKS}")
        if site.runtime == "charliecloud":  # the converted image is on the batch node only
            options.append("--nodes=1")
    for flag, value in (("partition", site.partition), ("account", site.account),
                        ("qos", site.qos)):
        if value:
            options.append(f"--{flag}={value}")
    if site.gpus > 0:
        kind = f"{site.gpu_type}:" if site.gpu_type else ""
        options.append(f"--gres=gpu:{kind}{site.gpus}")
    return options


def polled(cluster: SlurmCluster, job_id: str, misses: dict[str, int]) -> JobState | None:
    """The job's state; UNKNOWN once the controller has not known it for UNKNOWN_POLLS polls
    in a row (`misses` counts them, job by job, across calls)."""
    state = cluster.job_state(job_id)
    misses[job_id] = misses.get(job_id, 0) + 1 if state is None else 0
    if state is None and misses[job_id] >= UNKNOWN_POLLS:
        return JobState("UNKNOWN", reason="Slurm no longer knows the job")
    return state


def wait_for_job(cluster: SlurmCluster, job_id: str, poll_seconds: float) -> JobState:
    """Poll until the job ends; Ctrl-C (or any error here) cancels it on the way out."""
    misses: dict[str, int] = {}
    try:
        while True:
            state = polled(cluster, job_id, misses)
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
    if site.runtime not in LABELS_READ_BY:
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
        return read_tail(path, DATA_LIMIT)
    except FileNotFoundError:
        return ""
