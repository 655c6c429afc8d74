"""Validate (stage 5) under Charliecloud, as HPC sites run images (`validate IMAGE --runtime
charliecloud`): converted from the engine with `ch-convert`, run by `ch-run` unprivileged,
read-only, with the image's ENV (`--set-env`) and without its entrypoint.

The same runner as in `docker run`, told the same things (NGC_GPU, NGC_HOST_GPUS, NGC_RUN_AS
with the UID it runs as), so its report, JSON, JUnit and exit codes are validate's own. Two
checks are added in front, as the engine path adds its own: `labels`, read from the engine,
and `charliecloud.entrypoint`: the entrypoint did not run (no banner) and the command got
its arguments and gave back its exit status untouched.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ngc_builder.errors import InputError, Problem, StepError
from ngc_builder.runner.report import CheckResult
from ngc_builder.services.reference import reference_problem
from ngc_builder.validate.chrun import (
    IMAGE_ID_RE,
    Account,
    Finished,
    Processes,
    ToolMissing,
    convert_argv,
    fromhost_argv,
    person_command,
    private_scratch,
    run_argv,
    run_environment,
    unreachable_parent,
)
from ngc_builder.validate.evidence import parse_report, write_reports
from ngc_builder.validate.image import (
    ENTRY_PROBE,
    ENTRY_STATUS,
    ENTRY_STDOUT,
    RUNNER_COMMAND,
    ValidationOutcome,
    compare_labels,
    runner_environment,
)

CONVERT_TIMEOUT_S = 1800  # ch-convert gzips and unpacks the whole image: minutes for 6 GB
PROBE_TIMEOUT_S = 120
INSTALL_HINT = "install Debian's charliecloud (ci/setup-host.sh)"
CH_RUN_ERROR_RE = re.compile(r"ch-run\[\d+\]: error: ")


@dataclass(frozen=True)
class ChImage:
    """What validation needs of the engine's image: the name ch-convert reads it by, and the
    configuration ch-run does not apply by itself."""

    ref: str
    labels: dict[str, str] = field(default_factory=dict)
    workdir: str = ""
    entrypoint: list[str] = field(default_factory=list)


def image_facts(ref: str, inspection: dict[str, Any]) -> ChImage | None:
    """`ref` as ch-convert can read it (it takes names, not IDs: an ID becomes the image's
    first tag); None for an ID of an image that has no tag."""
    config = inspection.get("Config") or {}
    name = ref
    if IMAGE_ID_RE.fullmatch(ref) and str(inspection.get("Id", "")).removeprefix(
            "sha256:").startswith(ref.removeprefix("sha256:")):
        tags = [str(tag) for tag in inspection.get("RepoTags") or [] if tag != "<none>:<none>"]
        if not tags:
            return None
        name = engine_tag(ref, tags[0])
    return ChImage(name, dict(config.get("Labels") or {}), str(config.get("WorkingDir") or ""),
                   list(config.get("Entrypoint") or []))


def engine_tag(ref: str, tag: str) -> str:
    """The engine's tag of image `ref`, held to the reference grammar a person's name is held
    to before it becomes ch-convert's argument: an engine (a remote one, or one whose store
    was tampered with) can answer a tag Docker itself would refuse, such as `--tmp=/`."""
    problem = reference_problem(tag)
    if problem:
        raise InputError([Problem(ref, 1, "RepoTags", f"the engine's tag {tag[:120]!r}: "
                                  f"{problem}; not handed to ch-convert")])
    return tag


@dataclass(frozen=True)
class ChRun:
    """One validation under Charliecloud: the programs, and whom they run as."""

    processes: Processes
    account: Account
    shown: str  # the image as the user named it, in errors

    def tool(self, step: str, argv: list[str], env: dict[str, str], timeout: float,
             unprivileged: bool = False) -> Finished:
        """`argv` run to its end; a missing program or one past `timeout` fails the image."""
        try:
            return self.processes.run(argv, env=env, timeout=timeout,
                                      account=self.account if unprivileged else None)
        except ToolMissing as exc:
            raise StepError(self.shown, step, f"{exc} not found: {INSTALL_HINT}") from None
        except subprocess.TimeoutExpired:
            raise StepError(self.shown, step, f"{argv[0]} ran past {timeout:.0f} s "
                            "and was killed") from None


def validate_charliecloud(
    ch: ChRun, image: ChImage, expected_labels: dict[str, str], gpu_mode: str, out_dir: Path,
    name: str, timeout: int = 1800, baselines: dict[str, Any] | None = None,
) -> ValidationOutcome:
    """Convert, probe, run the runner, and keep the evidence; the copy is always removed."""
    started = time.monotonic()
    environment = run_environment(ch.account, {
        **runner_environment(gpu_mode, baselines),
        "NGC_RUN_AS": f"{ch.account.uid}:{ch.account.gid},read-only"})
    with private_scratch(ch.account) as scratch:
        image_dir = prepare(ch, image, scratch, gpu_mode)
        convert_s = time.monotonic() - started
        runner_argv = run_argv(image_dir, image.workdir, RUNNER_COMMAND)
        entry = check_no_entrypoint(ch, image, image_dir, environment)
        done = ch.tool("ch-run", runner_argv, environment, timeout, unprivileged=True)
    report = parse_report(done.stdout, done.stderr, done.status, gpu_mode)
    report.checks[0:0] = [labels_check(image, expected_labels), entry]
    report.environment["charliecloud"] = evidence(ch, image, image_dir, runner_argv,
                                                  environment, convert_s)
    json_path, junit_path = write_reports(report, out_dir, name, image.ref, done.stderr)
    return ValidationOutcome(report, json_path, junit_path, time.monotonic() - started)


def prepare(ch: ChRun, image: ChImage, scratch: Path, gpu_mode: str) -> Path:
    """The image as a directory in `scratch` (plus the host's NVIDIA libraries for a GPU run)."""
    blocked = unreachable_parent(scratch, ch.account)
    if blocked is not None:
        raise StepError(ch.shown, "charliecloud", f"{ch.account.name} (UID {ch.account.uid}) "
                        f"cannot pass through {blocked}: point TMPDIR at a folder others can "
                        "traverse")
    image_dir, tmp = scratch / "image", scratch / "convert"
    tmp.mkdir()
    converted = ch.tool("ch-convert", convert_argv(image.ref, image_dir, tmp), dict(os.environ),
                        CONVERT_TIMEOUT_S)
    if converted.status != 0:
        raise StepError(ch.shown, "ch-convert", f"exited {converted.status}: "
                        f"{last_line(converted)}")
    if gpu_mode == "required":
        injected = ch.tool("ch-fromhost", fromhost_argv(image_dir), dict(os.environ),
                           PROBE_TIMEOUT_S)
        if injected.status != 0:
            raise StepError(ch.shown, "ch-fromhost", f"exited {injected.status}: "
                            f"{last_line(injected)}")
    return image_dir


def last_line(finished: Finished) -> str:
    lines = [line.strip() for line in (finished.stderr + finished.stdout).splitlines()]
    return next((line for line in reversed(lines) if line), "no output")


def check_no_entrypoint(ch: ChRun, image: ChImage, image_dir: Path,
                        environment: dict[str, str]) -> CheckResult:
    """T0: ch-run started the command itself: no banner (the image's entrypoint did not run),
    its arguments unchanged and its exit status given back."""
    probe = ch.tool("ch-run", run_argv(image_dir, image.workdir, ENTRY_PROBE), environment,
                    PROBE_TIMEOUT_S, unprivileged=True)
    refusal = ch_run_error(probe)
    if refusal is not None:  # ch-run could not start a container here: this host's problem
        raise StepError(ch.shown, "ch-run", refusal)
    evidence = {"command": ENTRY_PROBE, "status": probe.status, "stdout": probe.stdout[-300:],
                "stderr": probe.stderr[-1500:], "image_entrypoint": image.entrypoint}
    problems = entrypoint_problems(probe)
    if problems:
        return CheckResult("charliecloud.entrypoint", "T0", "fail", "; ".join(problems),
                           fault="image", evidence=evidence)
    return CheckResult("charliecloud.entrypoint", "T0", "pass", "no entrypoint ran (no "
                       f"banner); arguments and exit status {ENTRY_STATUS} passed through",
                       evidence=evidence)


def ch_run_error(finished: Finished) -> str | None:
    """ch-run's own error (`ch-run[PID]: error: ...`: no user namespaces, no such image
    directory), when it failed before the command started."""
    if finished.status == 0:
        return None
    lines = finished.stderr.splitlines()
    return next((line.strip() for line in lines if CH_RUN_ERROR_RE.match(line)), None)


def entrypoint_problems(probe: Finished) -> list[str]:
    problems = []
    if probe.status != ENTRY_STATUS:
        problems.append(f"exit status {probe.status}, the command exited {ENTRY_STATUS}: "
                        f"{last_line(probe)}")
    if probe.stdout != ENTRY_STDOUT:
        problems.append(f"the command saw arguments {probe.stdout!r}, not {ENTRY_STDOUT!r}")
    if probe.stderr.startswith("== "):
        problems.append("a banner on stderr: something ran the image's entrypoint")
    return problems


def labels_check(image: ChImage, expected: dict[str, str]) -> CheckResult:
    """T0 labels as the engine path checks them, from the engine's copy of the image."""
    if not expected:
        return CheckResult("labels", "T0", "skip", "no release manifest given (--release)")
    return compare_labels(image.labels, expected)


def evidence(ch: ChRun, image: ChImage, image_dir: Path, runner_argv: list[str],
             environment: dict[str, str], seconds: float) -> dict[str, Any]:
    """Where and how it ran, to repeat by hand (the scratch folder is gone by now)."""
    return {"user": ch.account.name, "uid_gid": f"{ch.account.uid}:{ch.account.gid}",
            "convert_command": shlex.join(convert_argv(image.ref, image_dir,
                                                       image_dir.parent / "convert")),
            "run_command": person_command(runner_argv, ch.account, environment),
            "entrypoint_skipped": image.entrypoint, "convert_s": round(seconds, 1)}

