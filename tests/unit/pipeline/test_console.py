"""The console: a log that cannot be written (a full disk) is said once and the run goes on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ngc_builder.pipeline.console import Ui, print_summary
from ngc_builder.records.record import ImageRecord, ReleaseRecord

pytestmark = pytest.mark.unit


def test_a_log_that_cannot_be_written_is_said_once_and_stops(tmp_path: Path) -> None:
    blocked = tmp_path / "logs"
    blocked.write_text("a file where the log folder should be")
    out = io.StringIO()
    ui = Ui(blocked, show_logs=False, stream=out)
    ui.step("jax", "building")
    ui.line("jax", "Step 1/3")
    lines = out.getvalue().splitlines()
    assert lines[0] == "==> jax: building"
    assert lines[1].startswith(f"!!! jax: log: {blocked}: ")
    assert lines[1].endswith("(the log stops here)") and len(lines) == 2


def test_off_a_terminal_the_summary_is_one_whole_line_per_image() -> None:
    record = ReleaseRecord(release="26.11", registry="registry.example:5000/dl", manifest="m")
    jax = ImageRecord(name="jax", kind="framework")
    jax.build.status, jax.build.seconds, jax.build.size_bytes = "ok", 158.0, 5_960_000_000
    jax.validation.status, jax.validation.verdict = "failed", "fail"
    jax.validation.summary = {"pass": 30, "fail": 1, "skip": 4}
    jax.validation.failed_checks = ["jax.train_cpu"]
    jax.push.status = "blocked"
    jax.push.error = "validation failed " + "because of a long reason " * 6
    out = io.StringIO()  # not a TTY, like a CI log
    print_summary(record, [jax], out)
    lines = out.getvalue().splitlines()
    assert lines == ["release 26.11 -> registry.example:5000/dl",
                     "jax: built 158s | fail (30 pass 1 fail 4 skip) [jax.train_cpu] | "
                     f"blocked: {jax.push.error.strip()} | 5.96 GB"]
