"""Known failure texts in a check's output fail it; crash dumps still reach stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.runner.output import known_failures
from ngc_builder.runner.suite import Check, RunEnv, run_check

pytestmark = pytest.mark.unit
ENV = RunEnv({}, "none", False, False)
REPO = Path(__file__).resolve().parents[3]


def test_known_failure_lines_are_found_once_each() -> None:
    text = ("ok\nRuntimeError: CUDA error: no kernel image is available for execution on the "
            "device\nnode:1:2 [0] NCCL WARN Cuda failure\nnode:1:2 [0] NCCL WARN Cuda failure\n")
    assert known_failures(text) == [
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "node:1:2 [0] NCCL WARN Cuda failure"]
    assert known_failures("UserWarning: NVIDIA H100 with CUDA capability sm_90 is not "
                          "compatible with the current PyTorch installation.")
    assert known_failures("Loaded runtime CuDNN library: 9.1.0 but source was compiled with: "
                          "9.3.0.")
    assert known_failures("all fine\nNCCL INFO Bootstrap\n") == []


def printing(text: str) -> Check:
    def check(ctx: object) -> str:
        os.write(2, text.encode())  # straight to the file descriptor, as C libraries do
        return "looked fine"

    return Check("x.printing", "T2", False, check)


def test_a_passing_check_that_printed_a_known_failure_fails() -> None:
    result = run_check(printing("misc [0] NCCL WARN NET/IB : No device found.\n"), ENV)
    assert result.status == "fail" and result.fault == "image"
    assert "NCCL WARN" in result.message
    lines = result.evidence["known_failure_lines"]
    assert lines == ["misc [0] NCCL WARN NET/IB : No device found."]


def test_ordinary_output_keeps_the_pass(capfd: pytest.CaptureFixture[str]) -> None:
    result = run_check(printing("W1122 some warning\n"), ENV)
    assert result.status == "pass"
    assert "W1122 some warning" in capfd.readouterr().err  # still in the log


def test_a_crash_inside_a_check_still_dumps_its_frame(tmp_path: Path) -> None:
    (tmp_path / "expect").mkdir()
    probes = tmp_path / "probes" / "crasher"
    probes.mkdir(parents=True)
    (tmp_path / "expect" / "20.json").write_text(json.dumps(
        {"framework": "crasher", "probe": "crasher", "import_name": None, "distribution": None,
         "version": "1"}))
    (probes / "probe.py").write_text(
        "import ctypes\nIMPORT_NAME = None\n"
        "def installed_version():\n    return '1'\n"
        "def crash(ctx):\n    ctypes.string_at(0)\n"
        "def register(suite):\n    suite.check('crasher.crash')(crash)\n")
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-m", "ngc_builder.runner", "--expect-dir",
         str(tmp_path / "expect"), "--probes-dir", str(tmp_path / "probes"), "--gpu", "none"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert done.returncode < 0 or done.returncode > 128
    assert "Fatal Python error" in done.stderr and "in crash" in done.stderr
