"""Exit codes, and the guard every command runs in: the errors users cause or meet become one
line each and an exit code, never a traceback.

0 success, 1 a failed image or check, 2 bad input.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from ngc_builder.errors import (
    EngineError,
    InputError,
    Interrupted,
    Problem,
    StepError,
    message_line,
    os_problem,
)
from ngc_builder.files import UnsafeFile
from ngc_builder.redact import redacted_output, strip_userinfo
from ngc_builder.services.environment import check_environment

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a pipeline's early reader


def guarded(action: Callable[[], int], as_json: bool = False) -> int:
    """Run a command; turn the errors users cause or meet into lines and exit codes (and,
    under --json, a JSON error document on stdout, which a machine reading it expects).
    Everything it prints goes out cleaned (redact.py): credentials stripped, control
    characters written as escapes."""
    with redacted_output():
        return _guarded(action, as_json)


def _input_error(exc: InputError, as_json: bool) -> int:
    """Bad input: each problem one line, exit 2."""
    for problem in exc.problems:
        print(problem, file=sys.stderr)
    _json_error(as_json, EXIT_INPUT, [_fields(problem) for problem in exc.problems])
    return EXIT_INPUT


def _guarded(action: Callable[[], int], as_json: bool) -> int:
    try:
        check_environment()  # a typo in a variable never weakens a check in silence
        return action()
    except UnsafeFile as unsafe:  # a FIFO, a device, a link or too large, whoever read it
        problem = Problem(str(unsafe.filename), 1, "(file)", str(unsafe.strerror))
        return _input_error(InputError([problem]), as_json)
    except InputError as exc:
        return _input_error(exc, as_json)
    except (StepError, EngineError) as exc:
        return _failed(str(exc), as_json)
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours, and nothing more to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # a full disk or a read-only folder: the user's to fix, in one line
        return _failed(os_problem(exc), as_json)
    except Interrupted as exc:
        return _interrupted(exc.signal_name, exc.exit_code, as_json, exc.workers_left)
    except KeyboardInterrupt:
        return _interrupted("SIGINT", 130, as_json, workers_left=False)
    except Exception as exc:
        # A bug of ours, not the user's input: one line by default, the traceback on demand.
        if os.environ.get("NGC_DEBUG") == "1":
            raise
        print(f"internal error: {exc.__class__.__name__}: {message_line(str(exc))} "
              "(NGC_DEBUG=1 shows where)", file=sys.stderr)
        return EXIT_FAILED


def _failed(message: str, as_json: bool) -> int:
    """`error: MESSAGE`, one line whatever the message holds (a newline in a hostile name
    would forge a second line), and its JSON document under --json."""
    line = message_line(message)
    print(f"error: {line}", file=sys.stderr)
    _json_error(as_json, EXIT_FAILED, [{"message": line}])
    return EXIT_FAILED


def _interrupted(signal_name: str, code: int, as_json: bool, workers_left: bool) -> int:
    print(f"interrupted by {signal_name}: the release record keeps every finished step; run "
          "the same command again to resume", file=sys.stderr)
    _json_error(as_json, code, [{"message": f"interrupted by {signal_name}"}])
    if workers_left:
        # Workers are mid-build or mid-push: waiting for them would not stop at all. The
        # engine cancels what they asked for once this process hangs up.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _fields(problem: Problem) -> dict[str, object]:
    # The file as it is named (JSON escapes what it holds), so a machine can open it.
    return {"file": strip_userinfo(problem.file), "line": problem.line, "field": problem.field,
            "message": message_line(problem.message)}


def _json_error(as_json: bool, code: int, problems: list[dict[str, object]]) -> None:
    if as_json:
        print(json.dumps({"ok": False, "exit": code, "problems": problems}, indent=2))
