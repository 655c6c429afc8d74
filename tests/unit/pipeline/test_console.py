"""The console: a log that cannot be written (a full disk) is said once and the run goes on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ngc_builder.pipeline.console import Ui

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
