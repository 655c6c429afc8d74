"""Errors that reach the user as one line each, never as a traceback."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from ngc_builder.redact import escape_controls, strip_userinfo

# What no path, name or setting that ends up in a script, a pipeline or a line may hold.
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Problem:
    """One mistake in an input file, printed as `file:line: field: message`."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        # Stripped first: a raw newline still ends the word a secret lies in.
        return one_line(strip_userinfo(f"{self.file}:{self.line}: {self.field}: "
                                       f"{self.message}"))


def one_line(text: str) -> str:
    """`text` with its control characters written as escapes: a problem is one line, whatever
    a hostile file name or value holds (a newline would forge a second line of output)."""
    return escape_controls(text)


def message_line(text: str) -> str:
    """A message as it may be printed, recorded or logged: no credential, one line."""
    return one_line(strip_userinfo(text))


class InputError(Exception):
    """Bad user input (exit code 2): carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


class StepError(Exception):
    """A failed step on one image (exit code 1): names the image and the step."""

    def __init__(self, image: str, step: str, message: str) -> None:
        message = message_line(message)  # it lands in records, logs and one line of output
        super().__init__(f"{image}: {step}: {message}")
        self.image = image
        self.step = step
        self.message = message


class EngineError(Exception):
    """The Docker engine or registry could not be reached or refused a request."""

    def __init__(self, message: str) -> None:
        # It names engine URLs and references (hostile input), and is printed as one line.
        super().__init__(message_line(message))


class EngineSetupError(EngineError):
    """The engine cannot even be asked: its URL or its TLS folder is wrong (`reason` says
    which), not an engine that does not answer."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"the Docker engine at {where}: {reason}")
        self.reason = message_line(reason)


def os_problem(error: OSError) -> str:
    """`build/26.11/release.json: No space left on device`: the file and the reason, without
    the errno tuple Python prints."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename else reason


# The OS's reason inside urllib3's retry wrapping (three nested reprs in one line).
CONNECTION_REASON = re.compile(r"\[Errno -?\d+\] ([^'\")(]+)|(Read timed out|Connect timeout)")


def connection_reason(error: Exception) -> str:
    """`ConnectionError: Connection refused`, `ReadTimeout: Read timed out`."""
    found = CONNECTION_REASON.search(str(error))
    reason = next((group for group in found.groups() if group), "") if found else ""
    return f"{error.__class__.__name__}: {reason.strip() or error}"


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived; `exit_code` is what a shell reports for it (128 + number)."""

    def __init__(self, number: int) -> None:
        self.signal_name = signal.Signals(number).name
        self.exit_code = 128 + number
        # Set once a run stopped with its workers mid-build or mid-push: the process must
        # then end without waiting for them (the engine cancels what they asked for).
        self.workers_left = False
        super().__init__(f"interrupted by {self.signal_name}")
