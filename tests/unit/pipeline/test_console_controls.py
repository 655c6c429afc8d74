"""What a build prints (a progress bar's CR, a title's ESC sequence) reaches neither the
terminal nor the image's log raw; and the console writes no escape sequence of its own (every
command's output is escaped by RedactedStream, where a colour would show as `\\x1b[1m`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ngc_builder.pipeline.console import Ui, print_summary
from ngc_builder.records.record import ImageRecord, ReleaseRecord
from ngc_builder.redact import RedactedStream

pytestmark = pytest.mark.unit


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_builds_control_characters_are_escaped_on_the_console_and_in_the_log(
        tmp_path: Path) -> None:
    terminal = Terminal()
    ui = Ui(tmp_path, stream=RedactedStream(terminal))  # type: ignore[arg-type]
    ui.step("jax", "building \x1b]2;pwned\x07")
    ui.line("jax", "Collecting x\r 50%\x1b[2K\tdone")
    ui.problem("jax", "build: failed\nok: verified")
    ui.close()
    shown = terminal.getvalue()
    assert "\x1b" not in shown and "\r" not in shown and "\x07" not in shown
    assert "==> jax: building \\x1b]2;pwned\\x07" in shown
    assert "!!! jax: build: failed\\nok: verified" in shown
    assert len(shown.splitlines()) == 3
    assert (tmp_path / "jax.log").read_text().splitlines() == [
        "==> building \\x1b]2;pwned\\x07", "Collecting x\\r 50%\\x1b[2K\tdone",
        "!!! build: failed\\nok: verified"]


def test_the_summary_table_on_a_terminal_has_no_escape_sequence() -> None:
    record = ReleaseRecord(release="26.11", registry="registry.example:5000/dl", manifest="m")
    jax = ImageRecord(name="jax", kind="framework")
    jax.build.status, jax.build.error = "failed", "x"
    terminal = Terminal()
    print_summary(record, [jax], terminal)
    assert "\x1b" not in terminal.getvalue() and "jax" in terminal.getvalue()
