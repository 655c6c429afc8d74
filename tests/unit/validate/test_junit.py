from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.validate.junit import write_junit

pytestmark = pytest.mark.unit


def report() -> RunReport:
    return RunReport(
        image="jax",
        python="3.13.1",
        platform="Linux",
        gpu_mode="none",
        gpu_expected=False,
        checks=[
            CheckResult(
                "pip.check", "T0", "pass", "ok", duration_s=0.5, evidence={"output": "fine"}
            ),
            CheckResult(
                "lib.nccl",
                "T0",
                "fail",
                "nccl is 2.30.7, expected 2.30.6",
                "image",
                0.01,
                {"path": "/x/libnccl.so.2"},
            ),
            CheckResult("jax.gpu.conv", "T2", "skip", "no GPU"),
        ],
        duration_s=1.25,
    )


def test_junit_shape(tmp_path: Path) -> None:
    path = tmp_path / "junit" / "jax.xml"
    write_junit(report(), path, "ngc.jax")
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert {
        k: suite.get(k) for k in ("name", "tests", "failures", "skipped", "errors", "time")
    } == {
        "name": "ngc.jax",
        "tests": "3",
        "failures": "1",
        "skipped": "1",
        "errors": "0",
        "time": "1.250",
    }
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert [c.get("classname") for c in cases.values()] == [
        "ngc.jax.T0",
        "ngc.jax.T0",
        "ngc.jax.T2",
    ]
    failure = cases["lib.nccl"].find("failure")
    assert failure is not None and failure.get("message") == "nccl is 2.30.7, expected 2.30.6"
    assert "path: /x/libnccl.so.2" in (failure.text or "") and "fault: image" in (
        failure.text or ""
    )
    skipped = cases["jax.gpu.conv"].find("skipped")
    assert skipped is not None and skipped.get("message") == "no GPU"
    assert cases["pip.check"].find("failure") is None and cases["pip.check"].get("time") == "0.500"


def test_runner_error_becomes_an_errored_case(tmp_path: Path) -> None:
    broken = RunReport(
        image=None,
        python="3.13.1",
        platform="Linux",
        gpu_mode="unknown",
        gpu_expected=False,
        error="expect dir not found: /opt/ngc/expect",
    )
    path = tmp_path / "err.xml"
    write_junit(broken, path, "ngc.base")
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1" and suite.get("tests") == "1"
    error = suite.find("testcase/error")
    assert error is not None and "expect dir not found" in (error.get("message") or "")


def test_report_round_trip_and_rejects_bad_data() -> None:
    data = report().to_dict()
    assert data["verdict"] == "fail" and data["summary"] == {"pass": 1, "fail": 1, "skip": 1}
    assert RunReport.from_dict(data).to_dict() == data
    with pytest.raises(ValueError, match="schema"):
        RunReport.from_dict({**data, "schema": 99})
    with pytest.raises(ValueError, match="bad status"):
        CheckResult.from_dict({"id": "x", "status": "maybe"})
