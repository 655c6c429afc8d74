"""The images' entrypoint: arguments, exit status and signals pass through (ngc_runner.entry)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.unit
# `supervise` is what PID 1 runs; here it runs in a child interpreter that is not PID 1.
SUPERVISE = ("import sys; from ngc_builder.runner.entry import supervise;"
             " sys.exit(supervise(sys.argv[1:]))")
QUIET = {"NGC_BANNER": "off", "PATH": "/usr/bin:/bin"}


def supervised(*command: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", SUPERVISE, *command], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_arguments_and_status_pass_through_unchanged() -> None:
    proc = supervised("sh", "-c", 'printf "%s|" "$@"; exit 7', "sh", "a b", "$HOME", "*")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 7 and out == "a b|$HOME|*|"


def test_a_forwarded_sigterm_ends_the_command_with_128_plus_15() -> None:
    proc = supervised(sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)")
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    begun = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 143 and time.monotonic() - begun < 10


def test_the_commands_own_handler_decides_its_status() -> None:
    program = ("import signal, sys, time\n"
               "signal.signal(signal.SIGINT, lambda *_: sys.exit(42))\n"
               "print('up', flush=True); time.sleep(60)")
    proc = supervised(sys.executable, "-c", program)
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 42


def test_a_missing_command_is_127_as_in_a_shell() -> None:
    done = subprocess.run([sys.executable, "-m", "ngc_builder.runner.entry", "no-such-command"],
                          capture_output=True, text=True, check=False, env=QUIET, timeout=30)
    assert done.returncode == 127
    assert done.stderr == "ngc entrypoint: no-such-command: No such file or directory\n"
    proc = supervised("no-such-command")
    proc.communicate(timeout=30)
    assert proc.returncode == 127
