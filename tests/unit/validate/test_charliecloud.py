"""`validate IMAGE --runtime charliecloud` with fake programs and a fake engine: what runs, in
which order, as whom, and what comes back (report, exit codes, one-line errors)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from ngc_builder.commands.guard import guarded
from ngc_builder.commands.validate import ValidateImageOptions, validate_charliecloud_command
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.validate.charliecloud import ChImage, ChRun, image_facts, validate_charliecloud
from ngc_builder.validate.chrun import Account, Finished, ToolMissing
from ngc_builder.validate.image import ENTRY_STATUS, ENTRY_STDOUT
from tests.unit.fake_engine import FakeApi, FakeClient, FakeEngine

pytestmark = pytest.mark.unit
IMAGE_ID = "sha256:" + "ab" * 32
REF = "localhost:5000/jax:26.12-py3"
NOBODY = Account("nobody", 65534, 65534, "/nonexistent")


def runner_json() -> str:
    report = RunReport(image="jax", python="3.13", platform="linux", gpu_mode="none",
                       gpu_expected=False, checks=[
                           CheckResult("image.user", "T0", "pass", "UID:GID 65534:65534",
                                       evidence={"uid_gid": "65534:65534"}),
                           CheckResult("gpu.driver", "T1", "skip", "no GPU"),
                           CheckResult("jax.train_cpu", "T2", "pass", "loss down")])
    return json.dumps(report.to_dict())


@dataclass
class FakeProcesses:
    """Answers per step: ch-convert, ch-fromhost, probe (ch-run of the entry probe), runner."""

    answers: dict[str, Finished | BaseException] = field(default_factory=dict)
    calls: list[tuple[str, list[str], dict[str, str], Account | None]] = field(
        default_factory=list)
    scratch_seen: list[tuple[Path, int]] = field(default_factory=list)

    def run(self, argv: list[str], *, env: dict[str, str], timeout: float,
            account: Account | None = None) -> Finished:
        step = self.step(argv)
        self.calls.append((step, argv, env, account))
        if step == "ch-convert":
            scratch = Path(argv[argv.index("--tmp") + 1]).parent
            self.scratch_seen.append((scratch, scratch.stat().st_mode & 0o777))
        answer = self.answers.get(step) or DEFAULTS[step]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    @staticmethod
    def step(argv: list[str]) -> str:
        if argv[0] != "ch-run":
            return argv[0]
        return "runner" if "ngc_runner" in argv else "probe"

    def steps(self) -> list[str]:
        return [call[0] for call in self.calls]


DEFAULTS = {"ch-convert": Finished(0, "", "done\n"), "ch-fromhost": Finished(0, "", ""),
            "probe": Finished(ENTRY_STATUS, ENTRY_STDOUT, ""),
            "runner": Finished(0, runner_json(), "runner stderr\n")}


class ImageApi(FakeApi):
    """The fake engine's answers, plus what ch-run needs of an image: WORKDIR, ENTRYPOINT, tags."""

    def inspect_image(self, image: str) -> dict[str, Any]:
        found = super().inspect_image(image)
        found["Config"].update(WorkingDir="/workspace",
                               Entrypoint=["python", "-I", "-m", "ngc_runner.entry"])
        found["RepoTags"] = [tag for tag, target in self.engine.tags.items()
                             if target == found["Id"]]
        return found


def engine_with(tags: list[str]) -> FakeClient:
    engine = FakeEngine()
    engine.images[IMAGE_ID] = {"name": "jax", "labels": {"org.ngc-builder.image": "jax"}}
    engine.tags.update({tag: IMAGE_ID for tag in tags})
    client = FakeClient(engine)
    client.api = ImageApi(engine)
    return client


def command(ref: str, tmp_path: Path, processes: FakeProcesses, tags: list[str] | None = None,
            as_json: bool = True) -> int:
    options = ValidateImageOptions(ref, out=tmp_path / "out", junit=tmp_path / "junit.xml",
                                   as_json=as_json, baselines_file=tmp_path / "none.json",
                                   runtime="charliecloud")
    return guarded(lambda: validate_charliecloud_command(
        options, engine_with([REF] if tags is None else tags), processes, NOBODY), as_json)


def test_converts_probes_and_runs_the_runner_unprivileged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    processes = FakeProcesses()
    assert command(REF, tmp_path, processes) == 0
    assert processes.steps() == ["ch-convert", "probe", "runner"]
    convert, probe, runner = processes.calls
    assert convert[3] is None and probe[3] == NOBODY and runner[3] == NOBODY
    assert convert[1][-2] == REF  # one argument, after every option
    assert runner[2]["NGC_RUN_AS"] == "65534:65534,read-only"
    assert runner[2]["USER"] == "nobody" and runner[2]["HOME"] == "/nonexistent"
    assert runner[1][runner[1].index("--cd") + 1] == "/workspace"
    report = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in report["checks"][:3]] == ["labels", "charliecloud.entrypoint",
                                                      "image.user"]
    assert report["environment"]["charliecloud"]["uid_gid"] == "65534:65534"
    assert (tmp_path / "out" / "jax_26.12-py3-charliecloud.validation.json").exists()
    assert "<testsuite" in (tmp_path / "junit.xml").read_text()


def test_the_converted_copy_is_private_and_always_removed(tmp_path: Path) -> None:
    processes = FakeProcesses({"runner": KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt):
        validate_charliecloud(ChRun(processes, NOBODY, REF), ChImage(REF), {}, "none",
                              tmp_path, "jax")
    (scratch, mode), = processes.scratch_seen
    assert not scratch.exists()
    if os.geteuid() == 0:  # root hands the folder to nobody's group, read-only for it
        assert mode == 0o750


def test_a_failed_conversion_is_one_line_naming_image_and_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    failed = Finished(1, "", "input:   docker    x\nch-convert[9]: error: source not found\n")
    processes = FakeProcesses({"ch-convert": failed})
    assert command(REF, tmp_path, processes, as_json=False) == 1
    err = capsys.readouterr().err
    assert err == (f"error: {REF}: ch-convert: exited 1: ch-convert[9]: error: source not "
                   "found\n")
    assert processes.steps() == ["ch-convert"]


def test_a_missing_ch_run_is_one_line(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    processes = FakeProcesses({"probe": ToolMissing("ch-run")})
    assert command(REF, tmp_path, processes, as_json=False) == 1
    assert capsys.readouterr().err == (f"error: {REF}: ch-run: ch-run not found: install "
                                       "Debian's charliecloud (ci/setup-host.sh)\n")


def test_ch_run_refusing_to_start_is_one_line_not_an_image_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    refused = Finished(1, "", "ch-run[42]: error: can't unshare: Operation not permitted\n")
    processes = FakeProcesses({"probe": refused})
    assert command(REF, tmp_path, processes, as_json=False) == 1
    assert capsys.readouterr().err == (f"error: {REF}: ch-run: ch-run[42]: error: can't "
                                       "unshare: Operation not permitted\n")
    assert processes.steps() == ["ch-convert", "probe"]


def test_a_runner_past_its_time_fails_the_image(tmp_path: Path) -> None:
    processes = FakeProcesses({"runner": subprocess.TimeoutExpired("ch-run", 1800)})
    assert command(REF, tmp_path, processes) == 1


@pytest.mark.parametrize("ref", ["-rf", "--help", "a b", "jax\n--privileged", "", "../etc",
                                 "x" * 600])
def test_a_hostile_image_name_is_refused_before_anything_runs(
    ref: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    processes = FakeProcesses()
    assert command(ref, tmp_path, processes, as_json=False) == 2
    assert processes.calls == []
    assert "is not an image name or ID" in capsys.readouterr().err


def test_the_cli_refuses_an_option_passed_as_image() -> None:
    result = CliRunner().invoke(main, ["validate", "--runtime", "charliecloud", "--",
                                       "--privileged"])
    assert result.exit_code == 2
    assert "'--privileged' is not an image name or ID" in result.output


def test_charliecloud_is_for_an_image_not_for_host_mode() -> None:
    result = CliRunner().invoke(main, ["validate", "--runtime", "charliecloud", "--host",
                                       "--framework", "jax"])
    assert result.exit_code == 2 and "--runtime charliecloud runs IMAGE: not with --host" in \
        result.output


def test_an_image_id_is_converted_by_its_tag(tmp_path: Path) -> None:
    processes = FakeProcesses()
    assert command(IMAGE_ID, tmp_path, processes) == 0
    assert processes.calls[0][1][-2] == REF


def test_an_untagged_image_id_is_bad_input(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    processes = FakeProcesses()
    assert command(IMAGE_ID, tmp_path, processes, tags=[], as_json=False) == 2
    assert "has no tag" in capsys.readouterr().err and processes.calls == []


def test_an_image_the_engine_lacks_is_bad_input(tmp_path: Path) -> None:
    assert command("ngc-local/absent:1", tmp_path, FakeProcesses()) == 2


def test_a_banner_means_an_entrypoint_ran_and_fails(tmp_path: Path) -> None:
    banner = Finished(ENTRY_STATUS, ENTRY_STDOUT, "== JAX ==\n")
    processes = FakeProcesses({"probe": banner})
    outcome = validate_charliecloud(ChRun(processes, NOBODY, REF), ChImage(REF), {}, "none",
                                    tmp_path, "jax")
    entry = next(c for c in outcome.report.checks if c.id == "charliecloud.entrypoint")
    assert entry.status == "fail" and "banner" in entry.message
    assert outcome.report.verdict == "fail"


def test_a_gpu_run_brings_the_host_driver_in_before_ch_run(tmp_path: Path) -> None:
    processes = FakeProcesses()
    outcome = validate_charliecloud(ChRun(processes, NOBODY, REF), ChImage(REF), {},
                                    "required", tmp_path, "jax")
    assert processes.steps() == ["ch-convert", "ch-fromhost", "probe", "runner"]
    assert processes.calls[1][1][:2] == ["ch-fromhost", "--nvidia"]
    assert processes.calls[3][2]["NGC_GPU"] == "required"
    assert outcome.report.verdict == "pass"


def test_a_runner_without_a_report_fails_as_on_the_engine(tmp_path: Path) -> None:
    processes = FakeProcesses({"runner": Finished(127, "", "ch-run[1]: error: can't execve")})
    outcome = validate_charliecloud(ChRun(processes, NOBODY, REF), ChImage(REF), {}, "none",
                                    tmp_path, "jax")
    assert outcome.report.checks[-1].id == "runner.output"
    assert outcome.report.verdict == "fail"


def test_image_facts_read_what_ch_run_does_not_apply() -> None:
    facts = image_facts(REF, {"Id": IMAGE_ID, "RepoTags": [REF], "Config": {
        "WorkingDir": "/workspace", "Entrypoint": ["python"], "Labels": {"a": "1"}}})
    assert facts == ChImage(REF, {"a": "1"}, "/workspace", ["python"])
    assert image_facts(IMAGE_ID, {"Id": IMAGE_ID, "RepoTags": [], "Config": {}}) is None
