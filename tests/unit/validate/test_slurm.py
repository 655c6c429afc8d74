"""Validation as a Slurm job, against a fake cluster: what is submitted, what the job runs,
and how each way a job can end becomes a verdict."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from ngc_builder.commands.validate import ValidateImageOptions, validate_slurm_command
from ngc_builder.errors import InputError, StepError
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.slurm import JobState, SlurmError, parse_sacct, parse_scontrol
from ngc_builder.validate.slurm import validate_on_slurm
from ngc_builder.validate.slurm_script import enroot_ref
from tests.unit.fake_engine import FakeClient, FakeEngine

pytestmark = pytest.mark.unit
REF = "registry.example/ngc/jax:26.11-py3"
LABELS = {"org.ngc-builder.image": "jax", "org.ngc-builder.release": "26.11"}
Node = Callable[[Path], None]


class FakeSlurm:
    """Submits nothing: `node` plays the job in its folder, `states` are what polls see."""

    def __init__(self, states: list[JobState], node: Node | None = None) -> None:
        self.states = states
        self.node = node
        self.options: list[str] = []
        self.script = ""
        self.cancelled: list[str] = []
        self.polls = 0

    def submit(self, options: list[str], script: Path) -> str:
        self.options, self.script = options, script.read_text()
        if self.node is not None:
            self.node(script.parent)
        return "42"

    def job_state(self, job_id: str) -> JobState | None:
        self.polls += 1
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]

    def cancel(self, job_id: str) -> None:
        self.cancelled.append(job_id)


def site(**fields: object) -> SlurmSite:
    return SlurmSite.model_validate({"poll_seconds": 0.001, "time_limit": "00:01:00", **fields})


def passing_node(labels: dict[str, str] | None = None) -> Node:
    def node(folder: Path) -> None:
        report = RunReport(image="jax", python="3.13", platform="linux", gpu_mode="none",
                           gpu_expected=False,
                           checks=[CheckResult("python.version", "T0", "pass", "3.13")])
        (folder / "report.json").write_text(json.dumps(report.to_dict()))
        (folder / "runner.status").write_text("0\n")
        (folder / "runner.stderr").write_text("runner log\n")
        (folder / "labels.json").write_text(json.dumps(labels if labels is not None else LABELS))
    return node


def failing_node(folder: Path) -> None:
    (folder / "job.out").write_text("ngc-builder: runner exited 125\n"
                                    "docker: Error response from daemon: pull access denied\n")


def run(cluster: FakeSlurm, tmp_path: Path, **fields: object) -> RunReport:
    outcome = validate_on_slurm(cluster, site(**fields), REF, LABELS, "none", tmp_path / "out",
                                "jax_26.11-py3")
    assert outcome.json_path == tmp_path / "out" / "jax_26.11-py3.validation.json"
    assert outcome.junit_path.is_file()
    assert json.loads(outcome.json_path.read_text())["verdict"] == outcome.report.verdict
    return outcome.report


def test_sbatch_asks_for_the_sites_partition_account_qos_time_and_typed_gpus(
    tmp_path: Path,
) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    run(cluster, tmp_path, partition="gpu", account="dl", qos="high", gpus=2, gpu_type="h100")
    assert {"--partition=gpu", "--account=dl", "--qos=high", "--time=00:01:00",
            "--gres=gpu:h100:2", "--job-name=ngc-validate-jax_26.11-py3",
            "--no-requeue"} <= set(cluster.options)
    output = next(o for o in cluster.options if o.startswith("--output="))
    assert output.endswith("/job.out") and Path(output.split("=", 1)[1]).is_absolute()


def test_no_gres_on_a_cpu_cluster_and_untyped_gpus_otherwise(tmp_path: Path) -> None:
    cpu = FakeSlurm([JobState("COMPLETED")], passing_node())
    run(cpu, tmp_path, gpus=0)
    assert not any(option.startswith(("--gres", "--partition")) for option in cpu.options)
    gpu = FakeSlurm([JobState("COMPLETED")], passing_node())
    run(gpu, tmp_path, gpus=1)
    assert "--gres=gpu:1" in gpu.options


def test_a_completed_job_brings_the_runners_report_and_the_nodes_labels_back(
    tmp_path: Path,
) -> None:
    cluster = FakeSlurm([JobState("PENDING"), JobState("RUNNING"), JobState("COMPLETED")],
                        passing_node())
    report = run(cluster, tmp_path)
    assert report.verdict == "pass" and cluster.polls == 3
    assert [c.id for c in report.checks] == ["labels", "python.version"]
    assert report.checks[0].status == "pass"
    assert report.environment["slurm"]["job_id"] == "42"
    assert report.environment["docker_command"].startswith("docker run --rm")
    assert (tmp_path / "out" / "jax_26.11-py3.runner.stderr").read_text() == "runner log\n"


def test_labels_the_node_sees_differ_from_the_plan_fails_the_label_check(tmp_path: Path) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")],
                        passing_node({**LABELS, "org.ngc-builder.release": "26.10"}))
    report = run(cluster, tmp_path)
    assert report.verdict == "fail" and "26.10" in report.checks[0].message


@pytest.mark.parametrize("state", ["FAILED", "NODE_FAIL", "OUT_OF_MEMORY"])
def test_a_job_that_failed_is_an_error_naming_state_exit_code_and_its_last_lines(
    state: str, tmp_path: Path,
) -> None:
    cluster = FakeSlurm([JobState(state, "125:0", "NonZeroExitCode")], failing_node)
    report = run(cluster, tmp_path)
    assert report.verdict == "error"
    assert report.error is not None
    assert state in report.error and "125:0" in report.error
    assert "pull access denied" in report.error


def test_a_job_over_its_time_limit_fails_the_image(tmp_path: Path) -> None:
    report = run(FakeSlurm([JobState("RUNNING"), JobState("TIMEOUT", "0:15")]), tmp_path)
    assert report.verdict == "fail"
    assert report.checks[-1].id == "slurm.job"
    assert report.checks[-1].message == "Slurm job 42 timed out after 00:01:00"


@pytest.mark.parametrize("state", ["PREEMPTED", "REQUEUED", "REQUEUE_HOLD"])
def test_preemption_is_the_hosts_error_not_the_images(state: str, tmp_path: Path) -> None:
    report = run(FakeSlurm([JobState(state)]), tmp_path)
    assert report.verdict == "error" and report.error is not None
    assert "preempted" in report.error and not report.failed()


def test_a_cancelled_job_is_an_error(tmp_path: Path) -> None:
    report = run(FakeSlurm([JobState("CANCELLED", "0:15", "None")]), tmp_path)
    assert report.verdict == "error" and report.error is not None
    assert "cancelled" in report.error


def test_a_job_slurm_forgets_is_an_error_after_a_few_polls(tmp_path: Path) -> None:
    class Forgetful(FakeSlurm):
        def job_state(self, job_id: str) -> JobState | None:
            self.polls += 1
            return None

    cluster = Forgetful([])
    report = run(cluster, tmp_path)
    assert cluster.polls == 3 and report.error is not None and "UNKNOWN" in report.error


def test_ctrl_c_while_waiting_cancels_the_job(tmp_path: Path) -> None:
    class Interrupted(FakeSlurm):
        def job_state(self, job_id: str) -> JobState | None:
            raise KeyboardInterrupt

    cluster = Interrupted([])
    with pytest.raises(KeyboardInterrupt):
        run(cluster, tmp_path)
    assert cluster.cancelled == ["42"]


def test_sbatch_refusing_the_job_fails_the_image_step(tmp_path: Path) -> None:
    class Refusing(FakeSlurm):
        def submit(self, options: list[str], script: Path) -> str:
            raise SlurmError("sbatch: error: invalid partition specified: gpu")

    with pytest.raises(StepError, match="invalid partition"):
        run(Refusing([]), tmp_path)


def test_docker_job_passes_the_allocated_gpus_and_the_runner_environment(
    tmp_path: Path,
) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    validate_on_slurm(cluster, site(gpus=2), REF, LABELS, "required", tmp_path, "jax",
                      baselines={"floors": {}})
    script = cluster.script
    assert '--gpus "$NGC_DOCKER_GPUS"' in script and "NGC_DOCKER_GPUS:-2" in script
    assert "export NGC_GPU=required" in script and "export NGC_HOST_GPUS=2" in script
    assert "export NGC_BASELINES=" in script and "-e NGC_BASELINES" in script
    assert "python -X faulthandler -m ngc_runner > report.json 2> runner.stderr" in script
    # Started as on an engine: an arbitrary UID on a read-only root, which the runner checks.
    assert "--user 54321:54321 --read-only --tmpfs /tmp:rw,exec,nosuid,nodev" in script
    assert "export NGC_RUN_AS=54321:54321,read-only" in script and "-e NGC_RUN_AS" in script


def test_pyxis_job_runs_the_runner_through_srun_with_enroots_ref(tmp_path: Path) -> None:
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    report = validate_on_slurm(cluster, site(runtime="pyxis"), REF, LABELS, "none", tmp_path,
                               "jax").report
    assert ("srun --ntasks=1 --container-image='registry.example#ngc/jax:26.11-py3' python"
            in cluster.script)
    assert report.checks[0].status == "skip" and "pyxis" in report.checks[0].message
    assert "NGC_RUN_AS" not in cluster.script  # enroot starts the image as the job's user


def test_enroot_refs_name_the_registry_with_a_hash() -> None:
    assert enroot_ref("localhost:5000/ci/base:1") == "localhost:5000#ci/base:1"
    assert enroot_ref("ubuntu:24.04") == "ubuntu:24.04"
    assert enroot_ref("library/ubuntu") == "library/ubuntu"


def test_host_job_stages_the_runner_and_probes_and_runs_the_sites_python(
    tmp_path: Path,
) -> None:
    framework = tmp_path / "frameworks" / "tiny"
    framework.mkdir(parents=True)
    (framework / "framework.yaml").write_text("name: tiny\nimport_name: json\n")
    (framework / "probe.py").write_text("IMPORT_NAME = 'json'\n")
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    labels = {"org.ngc-builder.framework.version": "1.2"}
    validate_on_slurm(cluster, site(runtime="host", python="/opt/env/bin/python"), REF, labels,
                      "none", tmp_path / "out", "tiny", framework=framework)
    stage = Path(cluster.script.split("--expect-dir ", 1)[1].split("/expect", 1)[0])
    assert "/opt/env/bin/python -X faulthandler -m ngc_runner" in cluster.script
    assert (stage / "ngc_runner" / "cli.py").is_file()
    assert (stage / "probes" / "tiny" / "probe.py").is_file()
    expect = json.loads((stage / "expect" / "20-framework.json").read_text())
    assert expect["version"] == "1.2" and expect["host_mode"] is True


def test_host_runtime_without_a_framework_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StepError, match="framework folder"):
        run(FakeSlurm([JobState("COMPLETED")]), tmp_path, runtime="host")


def test_a_site_without_slurm_section_is_an_input_error_naming_the_file(tmp_path: Path) -> None:
    site_file = tmp_path / "site.yaml"
    site_file.write_text("ci:\n  runner_labels: [linux]\n")
    options = ValidateImageOptions(REF, slurm=True, site=site_file, root=tmp_path)
    with pytest.raises(InputError) as raised:
        validate_slurm_command(options, FakeSlurm([]))
    assert str(raised.value).startswith(f"{site_file}:1: slurm: no slurm: section")
    result = CliRunner().invoke(main, ["validate", REF, "--slurm", "--site", str(site_file)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [str(raised.value)]


def test_the_command_validates_on_the_cluster_with_the_gpu_mode_the_site_asks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Runtime host takes the framework from the local image's labels."""
    site_file = tmp_path / "site.yaml"
    site_file.write_text("slurm:\n  gpus: 0\n  runtime: host\n  poll_seconds: 0.001\n")
    folder = tmp_path / "frameworks" / "tiny"
    folder.mkdir(parents=True)
    (folder / "framework.yaml").write_text("name: tiny\nimport_name: json\n")
    (folder / "probe.py").write_text("IMPORT_NAME = 'json'\n")
    engine = FakeEngine()
    engine.images["sha256:abc"] = {"name": "tiny", "labels": {
        "org.ngc-builder.image": "tiny", "org.ngc-builder.framework": "tiny"}}
    cluster = FakeSlurm([JobState("COMPLETED")], passing_node())
    options = ValidateImageOptions("sha256:abc", slurm=True, site=site_file,
                                   root=tmp_path, out=tmp_path / "out", as_json=True)
    assert validate_slurm_command(options, cluster, FakeClient(engine)) == 0
    assert "export NGC_GPU=none" in cluster.script
    probes = Path(cluster.script.split("--probes-dir ", 1)[1].split()[0])
    assert (probes / "tiny" / "probe.py").is_file()
    assert json.loads(capsys.readouterr().out)["verdict"] == "pass"
    assert (tmp_path / "out" / "sha256_abc.validation.json").is_file()


def test_scontrol_and_sacct_lines_are_read_as_slurm_writes_them() -> None:
    line = ("JobId=7 JobName=x JobState=TIMEOUT Reason=TimeLimit Dependency=(null) "
            "ExitCode=0:15 RunTime=00:01:20\n")
    assert parse_scontrol(line) == JobState("TIMEOUT", "0:15", "TimeLimit")
    assert parse_sacct("CANCELLED by 0|0:15|None\n") == JobState("CANCELLED", "0:15", "None")
    assert parse_sacct("") is None
