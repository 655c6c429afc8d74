"""The two-process jobs of validation launched by Slurm's `srun` as well as by `mpirun`.

In the image, `multinode.mpirun` and each framework's distributed check (torch's gloo
all-reduce, JAX's multi-process world) start their workers with Open MPI's mpirun. On a
cluster, jobs are started by `srun` instead: one task per rank, each in its own container.
A Slurm validation job therefore runs the same workers a second time, after the runner, as a
two-task `srun` step; each task hands the worker the rank Slurm gave it. The submit side
judges what the ranks printed with the same check function that judged the mpirun job: the
check's `ctx.mpirun` returns the srun ranks' results instead of starting mpirun.

The checks come from this builder's copy of the probes (the framework folder, or the context
it rendered), never from the image: code from an image does not run on the submit host.
"""

from __future__ import annotations

import ast
import re
import shlex
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.files import DATA_LIMIT, read_tail
from ngc_builder.runner import multinode
from ngc_builder.runner.context import Context, RunEnv
from ngc_builder.runner.mpilaunch import rank_results
from ngc_builder.runner.report import CheckResult
from ngc_builder.runner.suite import Check, Suite, describe
from ngc_builder.runner.suite import _outcome as outcome_of  # as the runner judges its own

TASKS = 2
STEP_MINUTES = 10  # each srun step's own limit (mpirun's is 600 s): a hung rendezvous ends it
WORKER_FILE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.py")  # pasted into the script
IMAGE_RUNNER = "/opt/ngc/lib/ngc_runner"  # where images hold the runner (base.Dockerfile.j2)
IMAGE_PROBES = "/opt/ngc/probes"  # and each framework's probes (framework.Dockerfile.j2)
WORKER_MODULE = f"ngc_runner.{multinode.WORKER}"
# The worker reads its rank as Open MPI sets it (runner/multinode_worker.py); under srun each
# task gets Slurm's instead, so the same worker file runs unchanged in both launches.
RANK_FROM_SLURM = ('OMPI_COMM_WORLD_RANK="$SLURM_PROCID" '
                   'OMPI_COMM_WORLD_SIZE="$SLURM_NTASKS"')


@dataclass(frozen=True)
class Worker:
    """One file whose ``main(rank, size, coordinator)`` runs in each rank."""

    framework: str | None  # None: the runner's own launch check (multinode.mpirun)
    file: str  # its name, in the image's probes (or runner) folder
    source: str = ""  # this builder's copy of a probe: its checks judge the ranks

    @property
    def tag(self) -> str:
        return Path(self.file).stem

    def path_in(self, runner: str, probes: str) -> str:
        """Its path where the runner and the probes are `runner` and `probes`."""
        if self.framework is None:
            return f"{runner}/{self.file}"
        return f"{probes}/{self.framework}/{self.file}"


def workers_for(stack: bool, framework: str | None,
                modules: dict[str, str]) -> tuple[Worker, ...]:
    """What a job runs under srun: nothing for an image without a CUDA stack (it has no
    multi-node userspace, and its runner launches no job); else the runner's launch check and
    the framework's workers, when its probes are known."""
    if not stack:
        return ()
    found = framework_workers(framework, modules) if framework else []
    return (Worker(None, f"{multinode.WORKER}.py"), *found)


def framework_workers(framework: str, modules: dict[str, str]) -> list[Worker]:
    """The probe modules (name -> text) that define a top-level ``main(rank, size,
    coordinator)``: the files the runner's mpirun launches, by the worker contract."""
    return [Worker(framework, name, text) for name, text in sorted(modules.items())
            if WORKER_FILE_RE.fullmatch(name) and _defines_worker_main(text)]


def launching_functions(text: str) -> set[str]:
    """The top-level functions of a probe that call ``ctx.mpirun``: its checks of a launched
    job. Only these run on the submit side; the probe's other checks are the image's."""
    return {node.name for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)
            and any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "mpirun" for call in ast.walk(node))}


def _defines_worker_main(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name == "main"
               and len(node.args.args) == 3 for node in tree.body)


def srun_step(worker: Worker, task_command: str, options: str = "") -> list[str]:
    """The job script's lines for one worker: `task_command` (a shell line each task runs;
    in the container where `options` start one) under srun, its output and status kept by
    the worker's tag. In the background: a TERM runs the job's trap at once."""
    tag = worker.tag
    return [f"srun --ntasks={TASKS} --kill-on-bad-exit=1 --time={STEP_MINUTES} {options}"
            f"bash -c {shlex.quote(task_command)} "
            f"> srun-{tag}.out 2> srun-{tag}.err &", "wait $!",
            f'echo "$?" > srun-{tag}.status']


@dataclass(frozen=True)
class SrunLaunch:
    """What one worker's srun step left in the job's folder."""

    worker: Worker
    command: str
    status: int | None  # None: the step never ran (the job ended before it)
    output: str
    errors: str

    @property
    def results(self) -> dict[int, Any]:
        try:
            return rank_results(self.output)
        except ValueError:  # a rank line cut short: judged as a missing result
            return {}

    def last_error(self) -> str:
        lines = [line.strip() for line in self.errors.splitlines() if line.strip()]
        marked = [line for line in lines if "rror" in line]
        return (marked or lines or ["no output"])[-1][:300]


def read_launch(folder: Path, worker: Worker, command: str) -> SrunLaunch:
    def text(suffix: str) -> str:
        path = folder / f"srun-{worker.tag}.{suffix}"
        return read_tail(path, DATA_LIMIT) if path.is_file() else ""

    status = text("status").strip()
    return SrunLaunch(worker, command, int(status) if status.isdigit() else None,
                      text("out"), text("err"))


class SrunContext(Context):
    """A check's context whose ``mpirun`` hands back the srun ranks' results."""

    def __init__(self, env: RunEnv, check_id: str, launch: SrunLaunch) -> None:
        super().__init__(env, check_id)
        self.launch = launch
        self.launched = False

    def mpirun(self, worker: str, processes: int = 2) -> list[Any]:
        self.launched = True
        self.evidence("command", self.launch.command)
        if Path(worker).name != self.launch.worker.file:
            self.fail(f"the check launches {Path(worker).name}; srun ran "
                      f"{self.launch.worker.file}", fault="host")
        if self.launch.status is None:
            self.fail("the srun step did not run (the job ended before it)")
        results = self.launch.results
        if self.launch.status != 0 or sorted(results) != list(range(processes)):
            self.evidence("stderr_tail", self.launch.errors[-2000:])
            self.fail(f"srun --ntasks={processes} exited {self.launch.status} with "
                      f"{len(results)} rank result(s): {self.launch.last_error()}")
        return [results[rank] for rank in range(processes)]


def judge_launch(launch: SrunLaunch, stack: bool) -> list[CheckResult]:
    """The checks of `launch`'s worker that judge a launched job, re-run on the srun ranks,
    as `<check>.srun`. A check that did not ask for the job (it skipped first) says nothing."""
    env = RunEnv(expect={"stack": stack} if stack else {}, gpu_mode="none",
                 gpu_expected=False, gpu_visible=False)
    verdicts: list[CheckResult] = []
    try:
        checks = _checks_of(launch.worker)
    except Exception as exc:  # this builder's copy of the probe: not the image's fault
        return [CheckResult(f"{launch.worker.tag}.srun", "T2", "fail", "this builder cannot "
                            f"load its copy of {launch.worker.file}: {describe(exc)}", "host")]
    for check in checks:
        if check.needs_gpu:
            continue
        ctx = SrunContext(env, check.id, launch)
        result = outcome_of(check, ctx)
        if ctx.launched:
            result.id = f"{check.id}.srun"
            # A probe's message names the launcher it was written for; here srun launched.
            result.message = result.message.replace("mpirun", "srun")
            result.evidence = {**ctx.evidence_data, **result.evidence}
            verdicts.append(result)
    return verdicts


def check_launch(ctx: Context) -> str:
    """The runner's launch check, as srun starts it: `multinode.mpirun` also wants two PIDs,
    but each srun task may be a container of its own, where both ranks can be PID 7. A rank
    is the task's SLURM_PROCID, so two ranks of one world are two tasks."""
    ranks = ctx.mpirun(f"{multinode.WORKER}.py")
    if sorted(result["rank"] for result in ranks) != [0, 1] or \
            {result["size"] for result in ranks} != {2}:
        ctx.fail(f"srun started ranks {ranks}, expected ranks 0 and 1 of one world of 2")
    hosts = sorted({str(result["host"]) for result in ranks})
    return f"srun started 2 tasks of one world, ranks 0 and 1 (on {', '.join(hosts)})"


def _checks_of(worker: Worker) -> list[Check]:
    if worker.framework is None:
        return [Check("multinode", "T2", False, check_launch)]
    module = types.ModuleType(f"ngc_srun_{worker.tag}")
    module.__file__ = worker.file
    exec(compile(worker.source, worker.file, "exec"), module.__dict__)
    suite = Suite()
    module.register(suite)
    launching = launching_functions(worker.source)
    return [check for check in suite.checks if check.fn.__name__ in launching]
