"""Containers carry the process that started them; a later run sweeps those of dead ones on
this host, never a live process's, never another host's."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from ngc_builder.services.engine import PROCESS_ID, _of_dead_process

pytestmark = pytest.mark.unit


def test_this_process_is_named_with_its_host_and_pid() -> None:
    assert PROCESS_ID.startswith(f"{socket.gethostname()}:{os.getpid()}-")
    assert not _of_dead_process(PROCESS_ID)


def test_a_process_that_ended_on_this_host_is_dead() -> None:
    ended = subprocess.Popen(["true"])
    ended.wait()  # reaped: its PID names no process now
    pid = ended.pid
    assert _of_dead_process(f"{socket.gethostname()}:{pid}-0a1b2c3d")


def test_another_hosts_process_is_never_judged() -> None:
    assert not _of_dead_process("build-host-2:1-0a1b2c3d")
    assert not _of_dead_process("garbage")
