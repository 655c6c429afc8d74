"""Errors that reach the user as one line each, never as a traceback."""

from __future__ import annotations

from dataclasses import dataclass

from ngc_builder.redact import strip_userinfo


@dataclass(frozen=True)
class Problem:
    """One mistake in an input file, printed as `file:line: field: message`."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return strip_userinfo(f"{self.file}:{self.line}: {self.field}: {self.message}")


class InputError(Exception):
    """Bad user input (exit code 2): carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


class StepError(Exception):
    """A failed step on one image (exit code 1): names the image and the step."""

    def __init__(self, image: str, step: str, message: str) -> None:
        message = strip_userinfo(message)  # it lands in records and logs
        super().__init__(f"{image}: {step}: {message}")
        self.image = image
        self.step = step
        self.message = message


class EngineError(Exception):
    """The Docker engine or registry could not be reached or refused a request."""
