"""Tearing a second engine down, whatever the test did to it: every step runs, what failed
is raised at the end."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from typing import TYPE_CHECKING

from tests.faults.engine_os import (
    bridges_in,
    listeners_in,
    mounts_under,
    processes_with_argument,
    run,
)

if TYPE_CHECKING:
    from tests.faults.engines import SecondEngine

STOP_SECONDS = 60.0


def teardown(engine: SecondEngine) -> None:
    """Every step runs whatever the previous ones did; what failed is raised at the end."""
    problems: list[str] = []
    for step in (_empty_engine, _stop_engine, _kill_containers_left, _kill_processes_left,
                 _unmount_all, _delete_interfaces, _remove_folder):
        try:
            step(engine)
        except Exception as exc:
            problems.append(f"{step.__name__}: {exc}")
    if problems:
        raise RuntimeError("second engine teardown: " + "; ".join(problems))


def _empty_engine(engine: SecondEngine) -> None:
    """Containers and networks removed by dockerd itself: it knows their netns, mounts and
    br- interfaces. A killed engine is started again first: its restore kills containers
    that outlived it (their shims survive dockerd)."""
    if engine.pid == 0:
        return  # never started: nothing in it
    if not engine.running:
        engine.start()
    containers = engine.docker("ps", "-aq").stdout.split()
    if containers:
        engine.docker("rm", "-f", *containers, timeout=STOP_SECONDS)
    engine.docker("network", "prune", "-f")


def _stop_engine(engine: SecondEngine) -> None:
    engine.stop()


def _kill_containers_left(engine: SecondEngine) -> None:
    """Fallback when dockerd could not clean up: its runc state names its containers."""
    root = engine.folder / "run" / "runtime-runc" / "moby"
    runc = shutil.which("runc")
    if runc is None or not root.is_dir():
        return
    listed = subprocess.run([runc, "--root", str(root), "list", "-q"], capture_output=True,
                            text=True, check=False, timeout=30).stdout.split()
    for container in listed:
        subprocess.run([runc, "--root", str(root), "delete", "--force", container],
                       capture_output=True, check=False, timeout=30)


def _kill_processes_left(engine: SecondEngine) -> None:
    """This engine's containerd and shims (an argument of theirs is its containerd's config or
    socket), and servers bound to its addresses (the builder's package cache on the
    `ngc-offline` gateway outlives its run)."""
    containerd = engine.folder / "run" / "containerd"
    own = {str(containerd / "containerd.toml"), str(containerd / "containerd.sock")}
    for pid in sorted(set(processes_with_argument(own) + listeners_in(engine.subnet))):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _unmount_all(engine: SecondEngine) -> None:
    """Deepest first: overlay and shm mounts of containers, netns files, then the tmpfs.
    A mount still busy is detached lazily so the folder can go."""
    for point in sorted(mounts_under(engine.folder), key=len, reverse=True):
        if subprocess.run(["umount", point], capture_output=True, check=False).returncode:
            run("umount", "--lazy", point)


def _delete_interfaces(engine: SecondEngine) -> None:
    """The fixture's bridge, and any br- left holding one of this engine's addresses."""
    for name in sorted(bridges_in(engine.subnet) | {engine.bridge}):
        subprocess.run(["ip", "link", "delete", name], capture_output=True, check=False)


def _remove_folder(engine: SecondEngine) -> None:
    if mounts_under(engine.folder):
        raise RuntimeError(f"{engine.folder} still has mounts; left in place")
    if engine.folder.exists():
        shutil.rmtree(engine.folder)
