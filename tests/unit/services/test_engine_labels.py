"""Containers carry the process that started them; a later run sweeps those of dead ones on
this host, never a live process's, never another host's; one being removed already is let go."""

from __future__ import annotations

import os
import socket
import subprocess
from typing import cast

import docker.errors
import pytest
import requests

from ngc_builder.services.engine import PROCESS_ID, Container, _of_dead_process, discard

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


class Removing:
    """A container the engine is already removing: its remove answers 409."""

    def __init__(self) -> None:
        self.removes = 0

    def remove(self, *, force: bool) -> None:
        self.removes += 1
        response = requests.Response()
        response.status_code = 409
        raise docker.errors.APIError("Conflict", response, "removal of container c0ffee is "
                                     "already in progress")


def test_a_container_already_being_removed_is_discarded_quietly() -> None:
    """The step's own result (or error) is what the caller sees, not the cleanup's."""
    container = Removing()
    discard(cast(Container, container))
    assert container.removes == 1
