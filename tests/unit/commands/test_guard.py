"""The guard every command runs in: a JSON error document under --json, a quiet exit when the
reader of stdout goes away, no terminal escape from an input reaching the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.commands.guard import EXIT_BROKEN_PIPE, EXIT_INPUT, guarded
from ngc_builder.errors import InputError, Problem
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def bad_input() -> int:
    raise InputError([Problem("releases/26.11.yaml", 2, "registry", "port 99999 of "
                              "'localhost:99999' is out of range (1-65535)")])


def test_bad_input_under_json_prints_a_json_error_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert guarded(bad_input, as_json=True) == EXIT_INPUT
    out, err = capsys.readouterr()
    assert json.loads(out) == {"ok": False, "exit": 2, "problems": [{
        "file": "releases/26.11.yaml", "line": 2, "field": "registry",
        "message": "port 99999 of 'localhost:99999' is out of range (1-65535)"}]}
    assert err.startswith("releases/26.11.yaml:2: registry: port 99999")


def test_bad_input_without_json_keeps_stdout_empty(capsys: pytest.CaptureFixture[str]) -> None:
    assert guarded(bad_input) == EXIT_INPUT
    assert capsys.readouterr().out == ""


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    # `head -c 0` exits at once: every write of the command meets a closed pipe.
    done = subprocess.run(
        f"{sys.executable} -m ngc_builder render releases/26.11.yaml --out {tmp_path / 'out'} "
        "--offline --json | head -c 0; echo ${PIPESTATUS[0]}", shell=True, executable="bash",
        cwd=REPO, capture_output=True, text=True, check=False)
    assert (done.stdout.strip(), done.stderr) == (str(EXIT_BROKEN_PIPE), "")


def test_a_terminal_escape_in_a_reason_is_refused_at_check(write_release: WriteRelease,
                                                           project: Path) -> None:
    text = GOOD_RELEASE + ('  - framework: jax\n    name: jax-broken\n    version: "0.12.0"\n'
                           '    stack: cu13\n    expect_failure: "fails \\x1b]2;pwned\\x07"\n')
    done = subprocess.run([sys.executable, "-m", "ngc_builder", "check",
                           str(write_release(text)), "--root", str(project), "--offline"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == EXIT_INPUT
    assert "\x1b" not in done.stderr and "expect_failure" in done.stderr


def disk_full() -> int:
    raise OSError(28, "No space left on device", "build/26.11/release.json")


def test_a_full_disk_is_one_line_naming_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert guarded(disk_full, as_json=True) == 1
    out, err = capsys.readouterr()
    assert err == "error: build/26.11/release.json: No space left on device\n"
    assert json.loads(out)["problems"] == [
        {"message": "build/26.11/release.json: No space left on device"}]


def test_an_interrupt_says_how_to_resume_and_exits_as_a_shell_reports_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    from ngc_builder.pipeline.interrupt import Interrupted

    def stopped() -> int:
        raise Interrupted(signal.SIGTERM)

    assert guarded(stopped) == 143
    assert capsys.readouterr().err == (
        "interrupted by SIGTERM: the release record keeps every finished step; run the same "
        "command again to resume\n")
