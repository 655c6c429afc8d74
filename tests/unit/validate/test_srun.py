"""The two-process jobs under srun (validate/srun.py) and the Slurm job script's runtimes
(validate/slurm_script.py): which workers run, how each task gets its rank, how the ranks are
judged, and Charliecloud on the node."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.commands.validate import ValidateImageOptions, validate_slurm_command
from ngc_builder.errors import InputError, StepError
from ngc_builder.manifest.paths import probe_modules
from ngc_builder.runner.mpilaunch import RESULT_MARK
from ngc_builder.services.slurm import JobState
from ngc_builder.validate.slurm import validate_on_slurm
from ngc_builder.validate.srun import (
    SrunLaunch,
    Worker,
    framework_workers,
    judge_launch,
    workers_for,
)
from tests.conftest import REPO
from tests.unit.fake_srun import play_srun_steps
from tests.unit.validate.test_slurm import LABELS, REF, FakeSlurm, passing_node, site

pytestmark = pytest.mark.unit
GOOD_TORCH = {"sum": 3.0, "gathered": [0.0, 1.0], "backend": "gloo"}


def probes_of(name: str) -> dict[str, str]:
    return {path.name: path.read_text() for path in probe_modules(REPO / "frameworks" / name)}


def worker(name: str, file: str) -> Worker:
    return next(w for w in framework_workers(name, probes_of(name)) if w.file == file)


def launch(of: Worker, results: list[Any], status: int | None = 0, errors: str = "") -> SrunLaunch:
    output = "".join(f"{RESULT_MARK}{rank} {json.dumps(result)}\n"
                     for rank, result in enumerate(results))
    return SrunLaunch(of, "srun --ntasks=2", status, output, errors)


def test_the_workers_are_the_probe_files_that_define_the_worker_main() -> None:
    assert [w.file for w in framework_workers("pytorch", probes_of("pytorch"))] == \
        ["probe_pytorch_dist.py"]
    assert [w.file for w in framework_workers("jax", probes_of("jax"))] == ["probe_jax_dist.py"]
    assert framework_workers("tiny", {"probe.py": "def main(a):\n    pass\n",
                                      "probe_x.py": "def main(\n"}) == []


def test_only_an_image_with_a_cuda_stack_runs_workers_under_srun() -> None:
    assert workers_for(False, "pytorch", probes_of("pytorch")) == ()
    found = workers_for(True, "pytorch", probes_of("pytorch"))
    assert [w.file for w in found] == ["multinode_worker.py", "probe_pytorch_dist.py"]
    assert found[0].path_in("/r", "/p") == "/r/multinode_worker.py"
    assert found[1].path_in("/r", "/p") == "/p/pytorch/probe_pytorch_dist.py"


def test_the_probes_own_check_judges_the_srun_ranks() -> None:
    dist = worker("pytorch", "probe_pytorch_dist.py")
    [passed] = judge_launch(launch(dist, [GOOD_TORCH, GOOD_TORCH]), stack=True)
    assert (passed.id, passed.status) == ("pytorch.dist.gloo_allreduce.srun", "pass")
    assert passed.evidence["ranks"] == [GOOD_TORCH, GOOD_TORCH]
    wrong = {**GOOD_TORCH, "sum": 2.0}
    [failed] = judge_launch(launch(dist, [GOOD_TORCH, wrong]), stack=True)
    assert failed.status == "fail" and "expected sum 3.0" in failed.message


def test_jax_ranks_that_did_not_gather_both_values_fail() -> None:
    dist = worker("jax", "probe_jax_dist.py")
    rank = {"process_index": 0, "process_count": 2, "global_devices": 2, "gathered": [1, 2],
            "via": "gloo process_allgather"}
    [passed] = judge_launch(launch(dist, [rank, {**rank, "process_index": 1}]), stack=True)
    assert passed.status == "pass" and "one JAX world of 2" in passed.message
    [failed] = judge_launch(launch(dist, [rank, {**rank, "gathered": [1]}]), stack=True)
    assert failed.status == "fail"


def test_a_step_that_failed_ran_short_or_never_ran_fails_with_what_srun_said() -> None:
    runner = Worker(None, "multinode_worker.py")
    one_rank = launch(runner, [{"rank": 0, "size": 2, "pid": 1}], status=1,
                      errors="srun: error: node1: task 1: Exited with exit code 1\n")
    [failed] = judge_launch(one_rank, stack=True)
    assert failed.id == "multinode.srun" and failed.status == "fail"
    assert "exited 1 with 1 rank result(s): srun: error: node1: task 1" in failed.message
    [never] = judge_launch(launch(runner, [], status=None), stack=True)
    assert "did not run" in never.message
    # Each task in its own container: both may be PID 7, and are still two tasks.
    same_pid = [{"rank": rank, "size": 2, "pid": 7, "host": "node1"} for rank in range(2)]
    [two_tasks] = judge_launch(launch(runner, same_pid), stack=True)
    assert two_tasks.status == "pass" and "ranks 0 and 1 (on node1)" in two_tasks.message
    one_world = [{"rank": 0, "size": 2, "pid": 7, "host": "a"}, {"rank": 1, "size": 1,
                                                                   "pid": 7, "host": "a"}]
    [two_worlds] = judge_launch(launch(runner, one_world), stack=True)
    assert two_worlds.status == "fail" and "one world of 2" in two_worlds.message


def test_a_truncated_rank_line_is_a_missing_result_not_a_crash() -> None:
    runner = Worker(None, "multinode_worker.py")
    cut = SrunLaunch(runner, "srun", 0, f'{RESULT_MARK}0 {{"rank": 0, "si\n', "")
    [failed] = judge_launch(cut, stack=True)
    assert failed.status == "fail" and "0 rank result(s)" in failed.message


def test_a_worker_this_builder_cannot_load_is_its_own_failure_not_the_images() -> None:
    broken = Worker("tiny", "probe_tiny.py", "import no_such_module_here\n"
                    "def main(rank, size, coordinator):\n    return {}\n")
    [failed] = judge_launch(launch(broken, [{}, {}]), stack=True)
    assert failed.id == "probe_tiny.srun" and "No module named" in failed.message
    assert failed.fault == "host"


TWO_CHECKS = """
def main(rank, size, coordinator):
    return {"rank": rank}


def register(suite):
    suite.check("tiny.launched", tier="T2")(launched)
    suite.check("tiny.local", tier="T2")(local)


def launched(ctx):
    ranks = ctx.mpirun(__file__, 2)
    return f"{len(ranks)} ranks"


def local(ctx):
    raise SystemExit("an image-side check ran on the submit host")
"""


def test_only_the_checks_that_launch_the_job_run_on_the_submit_side() -> None:
    worker = Worker("tiny", "probe_tiny.py", TWO_CHECKS)
    [judged] = judge_launch(launch(worker, [{"rank": 0}, {"rank": 1}]), stack=True)
    assert (judged.id, judged.status, judged.message) == ("tiny.launched.srun", "pass",
                                                          "2 ranks")


def test_a_check_that_launches_another_file_gets_no_results_of_this_one() -> None:
    other = TWO_CHECKS.replace("ctx.mpirun(__file__, 2)", "ctx.mpirun('/x/probe_other.py', 2)")
    [judged] = judge_launch(launch(Worker("tiny", "probe_tiny.py", other), [{}, {}]),
                            stack=True)
    assert judged.status == "fail" and judged.fault == "host"
    assert "launches probe_other.py; srun ran probe_tiny.py" in judged.message


def test_a_probe_file_whose_name_could_not_be_pasted_safely_is_no_worker() -> None:
    text = "def main(rank, size, coordinator):\n    return {}\n"
    assert framework_workers("x", {"probe x.py": text, "probe;id.py": text, "-p.py": text,
                                   "probe_ok.py": text}) == [Worker("x", "probe_ok.py", text)]


def run_job(tmp_path: Path, runtime: str, workers: tuple[Worker, ...]) -> FakeSlurm:
    def node(folder: Path) -> None:
        passing_node()(folder)
        play_srun_steps(folder, (folder / "job.sh").read_text())

    cluster = FakeSlurm([JobState("COMPLETED")], node)
    report = validate_on_slurm(cluster, site(runtime=runtime, gpus=0), REF, LABELS, "none",
                               tmp_path / "out", "jax", workers=workers).report
    assert report.verdict == "pass", report.to_dict()
    return cluster


def test_a_docker_job_runs_each_worker_as_two_srun_tasks_one_container_each(
    tmp_path: Path,
) -> None:
    workers = workers_for(True, "pytorch", probes_of("pytorch"))
    cluster = run_job(tmp_path, "docker", workers)
    assert "--ntasks=2" in cluster.options
    script = cluster.script
    assert script.index("> report.json") < script.index("srun --ntasks=2")
    steps = [line for line in script.splitlines() if line.startswith("srun ")]
    assert len(steps) == 2 and all("--kill-on-bad-exit=1" in step for step in steps)
    words = shlex.split(steps[1])
    task = words[words.index("-c") + 1]
    assert task.startswith('exec docker run --rm --init --name '
                           '"ngc-srun-$SLURM_JOB_ID-probe_pytorch_dist-$SLURM_PROCID"')
    assert '-e OMPI_COMM_WORLD_RANK="$SLURM_PROCID"' in task and "--network host" in task
    assert task.endswith("python -m ngc_runner.multinode_worker "
                         "/opt/ngc/probes/pytorch/probe_pytorch_dist.py")
    # However the job ends, the tasks' containers go with it, not only the runner's.
    trap = script.split("trap '", 1)[1].split("\n")[0]
    assert trap.endswith("' EXIT") and '"ngc-srun-${SLURM_JOB_ID:-$$}-probe_pytorch_dist-1"' in trap
    assert "trap 'exit 143' TERM INT" in script
    report = json.loads((tmp_path / "out" / "jax.validation.json").read_text())
    assert {"multinode.srun", "pytorch.dist.gloo_allreduce.srun"} <= \
        {check["id"] for check in report["checks"]}


def test_pyxis_and_host_tasks_take_slurms_rank_in_the_container_or_the_stage(
    tmp_path: Path,
) -> None:
    workers = (Worker(None, "multinode_worker.py"),)
    pyxis = run_job(tmp_path / "p", "pyxis", workers).script
    assert ("srun --ntasks=2 --kill-on-bad-exit=1 --time=10 "
            "--container-image='registry.example#ngc/jax:26.11-py3' bash -c") in pyxis
    assert "/opt/ngc/lib/ngc_runner/multinode_worker.py" in pyxis


def test_no_srun_step_and_one_task_for_an_image_without_a_stack(tmp_path: Path) -> None:
    cluster = run_job(tmp_path, "docker", ())
    assert "srun " not in cluster.script and "--ntasks=2" not in cluster.options


def test_charliecloud_on_the_node_converts_runs_unprivileged_and_cleans_up(
    tmp_path: Path,
) -> None:
    workers = (Worker(None, "multinode_worker.py"),)
    script = run_job(tmp_path, "charliecloud", workers).script
    assert "trap 'rm -rf \"$NGC_CH\"' EXIT" in script
    assert ("ch-convert -i docker -o dir --tmp \"$NGC_CH\" registry.example/ngc/jax:26.11-py3 "
            '"$NGC_CH/image"') in script
    assert 'NGC_AS="setpriv --reuid=nobody' in script and "docker pull -q" in script
    runner = next(line for line in script.splitlines() if "> report.json" in line)
    assert runner.startswith("$NGC_AS env -i PATH=") and "--set-env \"$NGC_CH/image\"" in runner
    assert "ngc_runner.entry" not in runner and "docker run" not in script
    assert "labels.json" in script  # read from the node's engine, as for docker
    assert "export NGC_CH NGC_AS NGC_CH_USER NGC_CH_HOME" in script
    assert "ch-fromhost" not in script  # a CPU job: no driver to bring in
    # ch-run's own refusal is the node's problem (126: the runner never ran), not the image's.
    assert "grep -q 'ch-run\\[[0-9]*\\]: error: ' runner.stderr && status=126" in script
    assert '${CUDA_VISIBLE_DEVICES+CUDA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES"}' in runner


def test_charliecloud_tasks_stay_on_the_node_that_holds_the_converted_image(
    tmp_path: Path,
) -> None:
    workers = (Worker(None, "multinode_worker.py"),)
    assert "--nodes=1" in run_job(tmp_path / "c", "charliecloud", workers).options
    assert "--nodes=1" not in run_job(tmp_path / "d", "docker", workers).options


def test_the_generated_job_scripts_are_valid_bash(tmp_path: Path) -> None:
    workers = workers_for(True, "jax", probes_of("jax"))
    for runtime in ("docker", "pyxis", "charliecloud"):
        script = run_job(tmp_path / runtime, runtime, workers).script
        checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True,
                                 check=False)
        assert checked.returncode == 0, (runtime, checked.stderr)


@pytest.mark.parametrize("ref", ["-v/:/host", "--privileged", "a b", "img;id", "x/../y"])
def test_a_ref_that_is_not_an_image_name_never_reaches_a_job(ref: str, tmp_path: Path) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    with pytest.raises(StepError, match="not an image name"):
        validate_on_slurm(cluster, site(), ref, LABELS, "none", tmp_path, "x")
    site_file = tmp_path / "site.yaml"
    site_file.write_text("slurm:\n  gpus: 0\n")
    with pytest.raises(InputError, match="not an image name"):
        validate_slurm_command(ValidateImageOptions(ref, slurm=True, site=site_file,
                                                    root=tmp_path), cluster)
    assert cluster.script == ""
