"""Host side of validation: reading the runner's answer, crashes, and the label check."""

from __future__ import annotations

import json

import pytest

from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.validate.evidence import environment_lines, parse_report
from ngc_builder.validate.image import (
    check_labels,
    docker_command,
    runner_environment,
)
from tests.unit.fake_engine import FakeClient, FakeEngine

pytestmark = pytest.mark.unit
SEGFAULT = """\
Fatal Python error: Segmentation fault

Current thread 0x00007f (most recent call first):
  File "/site-packages/jax_plugins/xla_cuda13/__init__.py", line 200 in _version_check
  File "/opt/ngc/probes/jax.py", line 93 in train_cpu
"""


def test_runner_json_is_parsed_back() -> None:
    report = RunReport(image="jax", python="3.13", platform="linux", gpu_mode="none",
                       gpu_expected=False,
                       checks=[CheckResult("framework.version", "T0", "pass", "jax 0.12.0")])
    parsed = parse_report(json.dumps(report.to_dict()), "", 0, "none")
    assert parsed.verdict == "pass" and parsed.checks[0].id == "framework.version"


def test_a_crashed_runner_fails_with_signal_and_frame() -> None:
    parsed = parse_report("", SEGFAULT, 139, "none")
    assert parsed.verdict == "fail"
    message = parsed.checks[0].message
    assert message.startswith("runner killed by signal 11 without a JSON report")
    assert "xla_cuda13/__init__.py\", line 200 in _version_check" in message


def test_garbage_on_stdout_is_a_failure_not_a_pass() -> None:
    parsed = parse_report("hello\n", "ImportError: no module named ngc_runner", 1, "required")
    assert parsed.verdict == "fail" and parsed.gpu_expected
    assert "runner exited 1" in parsed.checks[0].message


def labelled(labels: dict[str, str]) -> FakeClient:
    """An engine holding one image, "img", with these labels."""
    engine = FakeEngine()
    engine.images["img"] = {"name": "img", "labels": labels}
    return FakeClient(engine)


def test_labels_equal_to_the_plan_pass() -> None:
    result = check_labels(labelled({"a": "1", "b": "2", "extra": "x"}), "img", {"a": "1"})
    assert result.status == "pass"


def test_a_wrong_or_missing_label_fails_with_both_values() -> None:
    result = check_labels(labelled({"a": "9"}), "img", {"a": "1", "b": "2"})
    assert result.status == "fail" and result.fault == "image"
    assert "a='9' (want '1')" in result.message and "b=None (want '2')" in result.message


def test_no_manifest_means_the_label_check_is_skipped_not_passed() -> None:
    assert check_labels(labelled({}), "img", {}).status == "skip"


def test_markdown_summary_lists_every_check() -> None:
    from ngc_builder.validate.evidence import markdown_summary

    report = RunReport(image="jax", python="3.13.5", platform="linux", gpu_mode="none",
                       gpu_expected=False, checks=[
                           CheckResult("framework.version", "T0", "pass", "jax 0.12.0"),
                           CheckResult("jax.gpu.conv", "T2", "skip", "no GPU"),
                           CheckResult("lib.cudnn", "T0", "fail", "cannot load | x",
                                       fault="image")])
    text = markdown_summary(report, "localhost:5000/jax:26.11-py3", "jax")
    assert "- verdict: **fail** (1 pass, 1 fail, 1 skip)" in text
    assert "| T2 | `jax.gpu.conv` | skip |  | no GPU |" in text
    assert "| T0 | `lib.cudnn` | fail | image | cannot load / x |" in text


def test_runner_environment_and_the_equivalent_docker_command() -> None:
    environment = runner_environment("none", {"floors": {}})
    assert environment["NGC_HOST_GPUS"] == "0" and environment["NGC_GPU"] == "none"
    assert json.loads(environment["NGC_BASELINES"]) == {"floors": {}}
    command = docker_command("ngc/pytorch:26.11-py3", "required", environment)
    assert command.startswith("docker run --rm --gpus all --shm-size 2g --network none")
    assert "-e NGC_GPU=none" in command and "NGC_BASELINES" not in command
    assert command.endswith("ngc/pytorch:26.11-py3 python -X faulthandler -m ngc_runner")


def test_summary_shows_the_command_and_each_gpu_start_and_end() -> None:
    gpu = {"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
           "temperature_c": 31, "sm_clock_mhz": 345}
    environment = {"docker_command": "docker run X",
                   "gpus_start": {"driver": "580.95.05", "gpus": [gpu]},
                   "gpus_end": {"driver": "580.95.05",
                                "gpus": [{**gpu, "temperature_c": 52, "sm_clock_mhz": 1980}]}}
    lines = environment_lines(environment)
    assert lines == ["- command: `docker run X`",
                     "- GPU 0: NVIDIA H100 80GB HBM3 (sm_90), driver 580.95.05, 31->52 C, "
                     "SM clock 345->1980 MHz"]
    assert environment_lines({"gpus_start": {"error": "NVML unavailable: x"}}) == [
        "- GPUs: NVML unavailable: x"]
