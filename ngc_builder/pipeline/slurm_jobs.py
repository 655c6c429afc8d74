"""`release --on slurm`, the jobs: one batch job per image that runs this builder on a node of
the site's cluster, with that node's engine, as `release MANIFEST --only IMAGE --no-promote`
(build or adopt its parents by content key, validate, push, stage by key), a child waiting on
its parent's job (`--dependency=afterok`).

Every value pasted into a script is shell-quoted, and what cannot be a Slurm word or a path
(a newline, a control character) is refused before anything is submitted. The job runs with
`--export=NONE`: the submitting shell's environment (its DOCKER_HOST, its secrets) does not
follow it; the builder's own settings that are no secret do, one `export` line each.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.errors import CONTROL, InputError, Problem
from ngc_builder.manifest.site import SLURM_WORD_RE, SlurmSite
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.services.environment import VARIABLES, setting
from ngc_builder.services.reference import NAME_RE

JOB_PREFIX = "ngc-"
ARM64 = "linux/arm64"
# The node's own: which GPUs it validates with is the job's partition's, and the signing key
# stays with the submit side, which alone promotes and signs.
NOT_PASSED = frozenset({"NGC_GPU", "NGC_SIGNING_KEY", "NGC_SIGNING_PASSWORD", "NGC_SITE"})
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class JobRequest:
    """What every image job of one release is asked to do (the same for all of them)."""

    root: Path  # the project, as the nodes see it (a shared filesystem)
    manifest: Path
    registry: str
    os_strategy: str
    folder: Path  # the jobs' build folders, one per image, shared with the nodes
    site_file: Path | None
    offline: bool = False
    no_cache: bool = False

    def build_dir(self, name: str) -> Path:
        return self.folder / name


def job_name(release: str, spec: ImageSpec) -> str:
    return f"{JOB_PREFIX}{release}-{spec.name}"


def check_request(request: JobRequest, release: str, images: list[ImageSpec]) -> None:
    """Every job name a Slurm word, every path one line: refused before any job is
    submitted (all problems at once)."""
    # The name is also the job's folder: a name of the manifest's kind (a-z 0-9 . _ -, no
    # leading or trailing dot) never leads out of the jobs' folder.
    problems = [Problem("release", 0, f"image {spec.name[:80]!r}", "cannot name a Slurm job "
                        "or its folder (a-z, 0-9 and ._- only)")
                for spec in images if not SLURM_WORD_RE.fullmatch(job_name(release, spec))
                or not NAME_RE.fullmatch(spec.name)]
    for label, path in (("project", request.root), ("manifest", request.manifest),
                        ("workdir", request.folder), ("--site", request.site_file)):
        if path is not None and CONTROL.search(str(path)):
            problems.append(Problem("release", 0, label, f"{str(path)[:80]!r} holds a control "
                                    "character: it cannot go into a job script"))
    if problems:
        raise InputError(problems)


def on_gpus(site: SlurmSite, spec: ImageSpec) -> bool:
    """Images with a CUDA stack are validated with GPUs, where the site's jobs get them."""
    expected_failure = spec.entry is not None and spec.entry.expect_failure is not None
    return site.gpus > 0 and spec.stack is not None and not expected_failure


def deferred_platforms(site: SlurmSite, spec: ImageSpec) -> list[str]:
    """The image's platforms its own job builds but leaves to a validation job on their own
    nodes: arm64, where the site names a partition of arm64 nodes."""
    return [ARM64] if site.arm64_partition and ARM64 in spec.platforms else []


def job_script(request: JobRequest, site: SlurmSite, spec: ImageSpec) -> str:
    python = site.python or sys.executable
    command = [python, "-m", "ngc_builder", "release", str(request.manifest), "--only",
               spec.name, "--no-promote", "--registry", request.registry, "--build-dir",
               str(request.build_dir(spec.name)), "--os-source", request.os_strategy, "--quiet"]
    command += ["--offline"] if request.offline else []
    command += ["--no-cache"] if request.no_cache else []
    command += ["--site", str(request.site_file)] if request.site_file is not None else []
    for platform in deferred_platforms(site, spec):
        command += ["--defer-validation", platform]
    lines = ["#!/bin/bash", f"# ngc-builder: image {spec.name}, one job of `release --on "
             "slurm` (pipeline/slurm_jobs.py)", "set -euo pipefail",
             *node_environment(site),
             f"export NGC_GPU={'required' if on_gpus(site, spec) else 'none'}",
             f"cd {shlex.quote(str(request.root))}", "exec " + shlex.join(command)]
    return "\n".join(lines) + "\n"


def node_environment(site: SlurmSite) -> list[str]:
    """What a job submitted `--export=NONE` sets for itself: a PATH, the node's HOME, and the
    builder's settings it needs of the submitting shell (none of them secret)."""
    # SLURM_EXPORT_ENV: the job's --export=NONE is also every srun step's default, and a step
    # with no PATH cannot even find bash (a validation job's two-process workers).
    return [f"export PATH={PATH}",
            'export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"',
            "export SLURM_EXPORT_ENV=ALL", *_passed_settings(site)]


def _passed_settings(site: SlurmSite) -> list[str]:
    """The builder's settings of the submitting shell the node needs too (its cache folder,
    state folder, registry's TLS...), none of them secret; and the site's cache address."""
    passed = {name: value for name, variable in VARIABLES.items()
              if not variable.secret and not variable.reader and name not in NOT_PASSED
              and (value := setting(name))}
    if site.cache_address is not None:
        passed["NGC_CACHE_ADDRESS"] = str(site.cache_address)
    if docker_config := os.environ.get("DOCKER_CONFIG"):  # the registry logins, by path
        passed["DOCKER_CONFIG"] = docker_config
    return [f"export {name}={shlex.quote(value)}" for name, value in sorted(passed.items())]


def sbatch_options(site: SlurmSite, name: str, spec: ImageSpec, output: Path,
                   parent_job: str | None) -> list[str]:
    """--no-requeue: a lost node ends the job NODE_FAIL instead of Slurm running it a second
    time, unwatched, while the first run's process may still finish. --kill-on-invalid-dep:
    a failed parent cancels its children instead of leaving them pending for ever."""
    gpus = on_gpus(site, spec)
    options = [f"--job-name={name}", f"--time={site.build_time_limit}", f"--output={output}",
               "--no-requeue", "--kill-on-invalid-dep=yes", "--export=NONE", "--nodes=1",
               "--ntasks=1"]
    partition = site.partition if gpus else site.build_partition or site.partition
    for flag, value in (("partition", partition), ("account", site.account),
                        ("qos", site.qos)):
        if value:
            options.append(f"--{flag}={value}")
    if gpus:
        kind = f"{site.gpu_type}:" if site.gpu_type else ""
        options.append(f"--gres=gpu:{kind}{site.gpus}")
    if site.exclusive:
        options.append("--exclusive")
    if parent_job is not None:
        options.append(f"--dependency=afterok:{parent_job}")
    return options
