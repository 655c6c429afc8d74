"""The batch script of a Slurm validation job: the runner with the site's runtime, then the
two-process workers under `srun` (validate/srun.py), in a folder the node and the submit side
both see. Every value pasted in is shell-quoted; the rest is fixed text.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.manifest.site import SlurmSite
from ngc_builder.plan.dag import LABEL_PREFIX
from ngc_builder.validate.chrun import DEFAULT_PATH, UNPRIVILEGED
from ngc_builder.validate.hostrun import RUNNER_NAME, _stage, framework_facts, host_expect
from ngc_builder.validate.image import RUN_AS, RUNNER_COMMAND, SHM_SIZE, unprivileged_flags
from ngc_builder.validate.srun import (
    IMAGE_PROBES,
    IMAGE_RUNNER,
    RANK_FROM_SLURM,
    TASKS,
    WORKER_MODULE,
    Worker,
    srun_step,
)

TAIL_LINES = 20
# Exit statuses of the script that mean the runner never ran: docker's own failure (125: no
# such image, daemon down), a command that cannot run (126) or is missing (127).
NOT_RUN_STATUSES = (125, 126, 127)
LABELS_READ_BY = ("docker", "charliecloud")  # runtimes whose node has the engine's image
# ch-run's own error (no user namespaces, no such image) means it never started the runner:
# the node's problem, as on an engine host (validate/charliecloud.py), not the image's.
CH_RUN_REFUSED = ["grep -q 'ch-run\\[[0-9]*\\]: error: ' runner.stderr && status=126"]


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
    def labels(self) -> Path:  # docker, charliecloud: the image's labels as the node sees them
        return self.folder / "labels.json"

    @property
    def stage(self) -> Path:  # host runtime: the runner, probes and expectations
        return self.folder / "stage"


@dataclass(frozen=True)
class Job:
    """What one job validates, and how."""

    site: SlurmSite
    ref: str
    gpu_mode: str
    files: JobFiles
    workers: tuple[Worker, ...] = ()  # run again under srun after the runner
    # Submitted `--export=NONE` (none of the submitting shell's environment: its DOCKER_HOST
    # is not the node's engine), with these lines setting what the job needs instead.
    environment: tuple[str, ...] = ()


def runner_line(job: Job, expected_labels: dict[str, str], framework: Path | None) -> str:
    """The command the job runs the runner with, as a shell line."""
    runner, runtime = shlex.join(RUNNER_COMMAND), job.site.runtime
    if runtime == "docker":
        gpus = '--gpus "$NGC_DOCKER_GPUS" ' if job.gpu_mode == "required" else ""
        names = " ".join(f"-e {key}" for key in ("NGC_GPU", "NGC_HOST_GPUS", "NGC_BASELINES",
                                                 "NGC_RUN_AS"))
        return (f'docker run --rm --name "$NGC_CONTAINER" {gpus}--shm-size {SHM_SIZE} '
                f"--network none {unprivileged_flags()} {names} "
                f"{shlex.quote(job.ref)} {runner}")
    if runtime == "charliecloud":
        variables = " ".join(f'{key}="${key}"' for key in ("NGC_GPU", "NGC_HOST_GPUS",
                                                            "NGC_BASELINES", "NGC_RUN_AS"))
        return ch_run_line(variables, '"${NGC_CH_WORKDIR:-/}"', runner)
    if runtime == "pyxis" or framework is None:
        return f"srun --ntasks=1 --container-image={shlex.quote(enroot_ref(job.ref))} {runner}"
    return host_line(job, expected_labels, framework)


def ch_run_line(variables: str, workdir: str, command: str) -> str:
    """ch-run as validation starts it on an engine host (validate/chrun.py): a login's few
    variables and the given ones only, the image's ENV applied, read-only, as `$NGC_AS`."""
    # Slurm's GPUs for the job, where it names them: ch-run shows every GPU of the node.
    visible = '${CUDA_VISIBLE_DEVICES+CUDA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES"}'
    return (f'$NGC_AS env -i PATH={DEFAULT_PATH} HOME="$NGC_CH_HOME" USER="$NGC_CH_USER" '
            f'LOGNAME="$NGC_CH_USER" {visible} {variables} ch-run --private-tmp --cd {workdir} '
            f'--set-env "$NGC_CH/image" -- {command}')


def host_line(job: Job, expected_labels: dict[str, str], framework: Path) -> str:
    """Runtime host: the runner and the framework's probes staged as host mode does."""
    expect = host_expect(framework_facts(framework), "")
    version = expected_labels.get(f"{LABEL_PREFIX}.framework.version")
    if version:
        expect["version"] = version
    else:
        del expect["version"]  # no version to hold the environment to
    _stage(job.files.stage, framework, expect)
    stage = shlex.quote(str(job.files.stage))
    return (f"{shlex.quote(job.site.python or 'python3')} -X faulthandler -m {RUNNER_NAME} "
            f"--expect-dir {stage}/expect --probes-dir {stage}/probes")


def enroot_ref(ref: str) -> str:
    """enroot names a registry with `#`: `host:5000/ns/img:tag` -> `host:5000#ns/img:tag`."""
    first, slash, rest = ref.partition("/")
    registry = slash and ("." in first or ":" in first or first == "localhost")
    return f"{first}#{rest}" if registry else ref


def job_script(job: Job, command: str, baselines: dict[str, Any] | None) -> str:
    runtime, ref = job.site.runtime, shlex.quote(job.ref)
    lines = ["#!/bin/bash", f"# ngc-builder: validate {job.ref} (runtime {runtime})",
             *job.environment, f"cd {shlex.quote(str(job.files.folder))}",
             *(f"export {key}={shlex.quote(value)}"
               for key, value in job_environment(job, baselines).items()),
             *runtime_lines(job),
             # In the background: bash runs a trap only once its foreground child is done.
             f"{command} > report.json 2> runner.stderr &", "wait $!", "status=$?",
             *(CH_RUN_REFUSED if runtime == "charliecloud" else []),
             'echo "$status" > runner.status', 'echo "ngc-builder: runner exited $status"']
    if runtime in LABELS_READ_BY:
        lines.append(f"docker image inspect --format '{{{{json .Config.Labels}}}}' "
                     f"{ref} > labels.json")
    statuses = "|".join(str(status) for status in NOT_RUN_STATUSES)
    lines += [f'case "$status" in {statuses}) tail -n {TAIL_LINES} runner.stderr >&2; '
              'exit "$status";; esac', *srun_lines(job), "exit 0"]
    return "\n".join(lines) + "\n"


def job_environment(job: Job, baselines: dict[str, Any] | None) -> dict[str, str]:
    required = job.gpu_mode == "required"
    environment = {"NGC_GPU": job.gpu_mode,
                   "NGC_HOST_GPUS": str(job.site.gpus if required else 0)}
    if job.site.runtime == "docker":  # started as validate starts it on an engine
        environment["NGC_RUN_AS"] = RUN_AS
    if baselines:
        environment["NGC_BASELINES"] = json.dumps(baselines, sort_keys=True)
    return environment


def runtime_lines(job: Job) -> list[str]:
    """What the runtime needs before the runner starts."""
    if job.site.runtime == "host":
        stage = shlex.quote(str(job.files.stage))
        return [f"export PYTHONPATH={stage}${{PYTHONPATH:+:$PYTHONPATH}}"]
    if job.site.runtime == "charliecloud":
        return charliecloud_lines(job)
    if job.site.runtime != "docker":
        return []
    # However the job ends (done, cancelled, timed out) it must not leave its containers
    # running on the node: the docker client Slurm signals is not the container.
    names = " ".join(f'"{name}"' for name in ["$NGC_CONTAINER", *task_containers(job)])
    lines = ["NGC_CONTAINER=ngc-validate-${SLURM_JOB_ID:-$$}",
             f"trap 'docker rm -f {names} >/dev/null 2>&1' EXIT", "trap 'exit 143' TERM INT"]
    if job.gpu_mode == "required":
        # Slurm's allocation, where it names the GPUs; else as many as were asked for.
        # docker reads --gpus as CSV: a device list must be quoted within the value.
        lines += ['NGC_DOCKER_GPUS=${CUDA_VISIBLE_DEVICES:+\\"device=$CUDA_VISIBLE_DEVICES\\"}',
                  f"NGC_DOCKER_GPUS=${{NGC_DOCKER_GPUS:-{job.site.gpus}}}"]
    return lines


def task_containers(job: Job) -> list[str]:
    """The srun tasks' container names, as the batch script spells them."""
    return [f"ngc-srun-${{SLURM_JOB_ID:-$$}}-{worker.tag}-{rank}"
            for worker in job.workers for rank in range(TASKS)]


def charliecloud_lines(job: Job) -> list[str]:
    """The image as a directory in a private scratch folder (removed however the job ends),
    converted from the node's engine (pulled there first if it lacks it), and whom ch-run
    runs as: the job's user, or `nobody` when the site runs jobs as root."""
    ref, nobody = shlex.quote(job.ref), shlex.quote(UNPRIVILEGED)
    fail = f"{{ tail -n {TAIL_LINES} convert.log >&2; exit 125; }}"
    lines = ['NGC_CH=$(mktemp -d "${TMPDIR:-/tmp}/ngc-charliecloud-XXXXXXXX") || exit 126',
             "trap 'rm -rf \"$NGC_CH\"' EXIT", "trap 'exit 143' TERM INT",
             'if [ "$(id -u)" = 0 ]; then',
             f"  NGC_AS=\"setpriv --reuid={nobody} --regid=$(id -g {nobody}) --clear-groups --\"",
             f"  NGC_CH_USER={nobody}; chgrp \"$(id -g {nobody})\" \"$NGC_CH\"; "
             'chmod 0750 "$NGC_CH"',
             'else NGC_AS=""; NGC_CH_USER="$(id -un)"; fi',
             'NGC_CH_HOME="$(getent passwd "$NGC_CH_USER" | cut -d: -f6)"',
             'export NGC_RUN_AS="$(id -u "$NGC_CH_USER"):$(id -g "$NGC_CH_USER"),read-only"',
             "export NGC_CH NGC_AS NGC_CH_USER NGC_CH_HOME",  # the srun tasks' shells need them
             f"docker image inspect {ref} > /dev/null 2>&1 || docker pull -q {ref} "
             f"> convert.log 2>&1 || {fail}",
             f'ch-convert -i docker -o dir --tmp "$NGC_CH" {ref} "$NGC_CH/image" '
             f"> convert.log 2>&1 || {fail}",
             f"NGC_CH_WORKDIR=$(docker image inspect --format '{{{{.Config.WorkingDir}}}}' {ref})"]
    if job.gpu_mode == "required":  # what sites do before a GPU run: the host's driver in
        lines.append(f'ch-fromhost --nvidia "$NGC_CH/image" >> convert.log 2>&1 || {fail}')
    return lines


def srun_lines(job: Job) -> list[str]:
    """Each two-process worker again, one rank per srun task (validate/srun.py)."""
    if not job.workers:
        return []
    # Rank 0's store: the allocation's first node, where srun puts task 0; a port below
    # Linux's ephemeral range (32768-), so no outgoing connection holds it.
    lines = ["NGC_RANK0=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null | head -n 1)",
             "export NGC_SRUN_PORT=$((20000 + ${SLURM_JOB_ID:-$$} % 10000))",
             'export NGC_COORDINATOR="${NGC_RANK0:-$(hostname)}:$NGC_SRUN_PORT"']
    for worker in job.workers:
        task, options = task_line(job, worker)
        lines += srun_step(worker, task, options)
    return lines


def task_line(job: Job, worker: Worker) -> tuple[str, str]:
    """The shell line one srun task runs for `worker`, and srun's extra options."""
    runtime, ref = job.site.runtime, shlex.quote(job.ref)
    module = f"python -m {WORKER_MODULE}"
    in_image = shlex.quote(worker.path_in(IMAGE_RUNNER, IMAGE_PROBES))
    if runtime == "docker":
        # One container per rank, on the host's network: ranks on two nodes meet there too.
        # --init: the worker is not PID 1, so the TERM srun sends when a rank fails ends it.
        return (f'exec docker run --rm --init --name "ngc-srun-$SLURM_JOB_ID-{worker.tag}-'
                f'$SLURM_PROCID" --network host --shm-size {SHM_SIZE} {unprivileged_flags()} '
                '-e OMPI_COMM_WORLD_RANK="$SLURM_PROCID" -e OMPI_COMM_WORLD_SIZE="$SLURM_NTASKS" '
                f"-e NGC_COORDINATOR {ref} {module} {in_image}", "")
    if runtime == "charliecloud":
        variables = f'NGC_COORDINATOR="$NGC_COORDINATOR" {RANK_FROM_SLURM}'
        return "exec " + ch_run_line(variables, "/", f"{module} {in_image}"), ""
    if runtime == "pyxis":
        return (f"{RANK_FROM_SLURM} exec {module} {in_image}",
                f"--container-image={shlex.quote(enroot_ref(job.ref))} ")
    stage = str(job.files.stage)
    staged = shlex.quote(worker.path_in(f"{stage}/{RUNNER_NAME}", f"{stage}/probes"))
    python = shlex.quote(job.site.python or "python3")
    return f"{RANK_FROM_SLURM} exec {python} -m {WORKER_MODULE} {staged}", ""
