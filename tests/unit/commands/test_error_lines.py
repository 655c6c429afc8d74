"""A message is one line: a value holding a newline (a hostile reference, a file name) that
goes into a step's, the engine's, the OS's or an internal error cannot forge a second line
(`ok: verified`) under the `error:` the guard prints, nor under --json."""

from __future__ import annotations

import json

import pytest

from ngc_builder.commands.guard import EXIT_FAILED, guarded
from ngc_builder.errors import EngineError, StepError

pytestmark = pytest.mark.unit
FORGED = "img\nok: verified\r"


def fails_with(error: Exception) -> int:
    def action() -> int:
        raise error
    return guarded(action, as_json=True)


@pytest.mark.parametrize(("error", "line"), [
    (StepError("jax", "validate", f"no such image {FORGED}"),
     "error: jax: validate: no such image img\\nok: verified\\r"),
    (EngineError(f"no Docker engine answers at {FORGED}"),
     "error: no Docker engine answers at img\\nok: verified\\r"),
    (OSError(28, "No space left on device", f"build/{FORGED}/release.json"),
     "error: build/img\\nok: verified\\r/release.json: No space left on device"),
    (ValueError(f"bad {FORGED}"),
     "internal error: ValueError: bad img\\nok: verified\\r (NGC_DEBUG=1 shows where)"),
])
def test_an_error_naming_a_value_with_a_newline_is_one_line(
        capsys: pytest.CaptureFixture[str], error: Exception, line: str) -> None:
    assert fails_with(error) == EXIT_FAILED
    captured = capsys.readouterr()
    assert captured.err == line + "\n"
    if not line.startswith("internal"):
        [problem] = json.loads(captured.out)["problems"]
        assert problem["message"] == line.removeprefix("error: ")


def test_a_step_error_keeps_one_line_in_what_it_records() -> None:
    """The message lands in the release record and the image's log as it is printed."""
    error = StepError("jax", "push", "robot:TOKEN@reg.example/x\nforged")
    assert error.message == "reg.example/x\\nforged"
