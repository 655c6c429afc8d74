"""The one redactor, whatever shape a secret comes in: with a scheme or without one (a docker
reference with `user:token@`), a password holding '@' and ':', quoted in JSON or after an
option's '='; and what holds no secret (an e-mail address, git's `git@host:path`, a
`host:port`, a reference with a tag and a digest) is left as it is. And what a command prints
reaches the terminal with its control characters escaped."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable

import pytest

from ngc_builder.commands.guard import guarded
from ngc_builder.redact import RedactedStream, printable, strip_userinfo

pytestmark = pytest.mark.unit
DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(("text", "shown"), [
    ("robot:TOKEN@host/team/jax:26.11-py3", "host/team/jax:26.11-py3"),
    ("error: robot:TOKEN@localhost:5000/x:t: bad", "error: localhost:5000/x:t: bad"),
    ("robot:p@ss:w@rd@host/x", "host/x"),  # the password's '@' and ':' go with it
    (":TOKEN@host/x", "host/x"),  # a token alone, as some registries take it
    ("--registry=robot:ab=cd@host", "--registry=host"),
    ('"message": "robot:TOKEN@host/x: a digest is"', '"message": "host/x: a digest is"'),
    ("(robot:TOKEN@[::1]:5000/x)", "([::1]:5000/x)"),
    ("x\nrobot:TOKEN@h/y", "x\nh/y"),
    (f"robot:TOKEN@pytorch:24.01@{DIGEST}", f"pytorch:24.01@{DIGEST}"),
    # docker-py quotes a reference's '@' into the URL an engine error names
    ("404 Client Error for http+docker://localhost/v1.41/images/robot:TOKEN%40h:5000/x/json",
     "404 Client Error for http+docker://localhost/v1.41/images/h:5000/x/json"),
    ("https://robot:TOKEN@tail@reg.example/x:t", "https://reg.example/x:t"),
    ("ssh://git@host/x", "ssh://host/x"),
])
def test_a_secret_is_stripped_whatever_its_shape(text: str, shown: str) -> None:
    assert strip_userinfo(text) == shown
    assert "TOKEN" not in strip_userinfo(text)


@pytest.mark.parametrize("text", [
    "git@github.com:org/repo.git",  # a user alone: no secret
    "mail john.doe@example.com",  # an e-mail address
    "localhost:5000/team/jax:26.11-py3",  # host:port, no '@'
    f"nvcr.io/nvidia/pytorch:24.01-py3@{DIGEST}",  # a tag and a digest
    f"pytorch:24.01@{DIGEST}",
    "pkg:pypi/requests@2.31.0",  # a package URL
    "https://registry.npmjs.org/@scope/pkg",
    "time 12:30 at@x",
])
def test_what_holds_no_secret_is_left_as_it_is(text: str) -> None:
    assert strip_userinfo(text) == text


def _best_times(small: str, large: str) -> tuple[float, float]:
    """The shortest of five runs of each, taken in turns: the least disturbed by whatever
    else the machine does, and disturbed alike."""
    times: dict[str, list[float]] = {small: [], large: []}
    for _ in range(5):
        for text, taken in times.items():
            started = time.perf_counter()
            strip_userinfo(text)
            taken.append(time.perf_counter() - started)
    return min(times[small]), min(times[large])


@pytest.mark.parametrize("hostile_run", [lambda n: "@" + "a:" * (n // 2),
                                         lambda n: ":" * n + "@",
                                         lambda n: "%40" * (n // 3),
                                         lambda n: "@sha256:" * (n // 8)])
def test_a_hostile_run_is_read_in_linear_time(hostile_run: Callable[[int], str]) -> None:
    """Eight times the text takes about eight times as long; a backtracking pattern would take
    sixty-four. A ratio of two runs side by side, not a wall-clock bound a loaded machine
    breaks."""
    small, large = _best_times(hostile_run(100_000), hostile_run(800_000))
    assert large / max(small, 1e-4) < 24


def test_control_characters_are_escaped_newlines_tabs_and_line_ends_kept() -> None:
    assert printable("a\x1b]2;pwned\x07b\n\tc\r\nd\re\u202ef\r") == \
        "a\\x1b]2;pwned\\x07b\n\tc\r\nd\\re\\u202ef\\r"


def test_the_stream_escapes_what_a_command_prints() -> None:
    """A hostile reference echoed by any message reaches the terminal as text: an ESC as
    `\\x1b`, a lone CR (which would overwrite the line) as `\\r`; a CR that ends a line, and
    the newline, stay."""
    target = io.StringIO()
    stream = RedactedStream(target)
    stream.write("error: x:t\x1b[2J\x1b]2;t\x07 at robot:TOKEN@")
    stream.write("h/x\rok: verified\r\n")
    stream.write("partial\r")
    assert target.getvalue() == "error: x:t\\x1b[2J\\x1b]2;t\\x07 at h/x\\rok: verified\r\n"
    stream.flush()  # a CR no newline follows is a lone one
    assert target.getvalue().endswith("\r\npartial\\r")


def test_whatever_a_command_prints_is_cleaned_by_the_guard(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Output the command builds itself (a plan line, a finding naming a registry's label),
    with no message_line of its own: the guard's streams clean it."""
    def action() -> int:
        print("image x:t\x1b]2;pwned\x07 from robot:TOKEN@reg.example/x\rok")
        print("finding \x1b[31mred\x1b[0m", file=sys.stderr)
        return 0

    assert guarded(action) == 0
    captured = capsys.readouterr()
    assert captured.out == "image x:t\\x1b]2;pwned\\x07 from reg.example/x\\rok\n"
    assert captured.err == "finding \\x1b[31mred\\x1b[0m\n"
