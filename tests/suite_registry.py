"""The registry a test session pushes to: one the session starts for itself (Debian's
distribution registry on a free loopback port, its storage a folder of its own under the state
dir), stopped and deleted whole when the session ends. Nothing the tests push lands in the
shared registry that `make release` publishes to, so the tests never garbage-collect or delete
in a registry someone else may be writing to (the Distribution docs ask for a registry stopped
or read-only while it is collected: a session's own, stopped, is simply removed).

`NGC_TEST_REGISTRY=HOST` hands the tests a registry of the user's instead: then the session
deletes only the throwaway repositories it added, and collects nothing.

A session killed before its end leaves its folder and maybe its registry process: the next
session (and `make clean-test-leftovers`) removes the folders whose session process is gone,
stopping a registry still serving one of them."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

from tests.own_registry import OwnRegistry, free_port

FOLDERS = "test-registries"  # under the state dir: one folder per session (its PID, a token)
OWNER_FILE = "session.pid"
SERVER_FILE = "registry.pid"


@dataclass
class SuiteRegistry:
    """The session's registry: planned at import (tests name its host in module constants),
    started by the first test that needs it (tests/integration/conftest.py)."""

    host: str
    own: OwnRegistry | None  # None: the user's ($NGC_TEST_REGISTRY), not ours to delete

    def start(self) -> None:
        if self.own is None or self.own.process is not None:
            return
        sweep_dead_sessions(self.own.folder.parent)
        self.own.folder.mkdir(parents=True, exist_ok=True)
        (self.own.folder / OWNER_FILE).write_text(str(os.getpid()))
        self.own.start()
        assert self.own.process is not None
        (self.own.folder / SERVER_FILE).write_text(str(self.own.process.pid))

    def restart(self) -> None:
        """Serving again on the same port and storage (after a test stopped it)."""
        if self.own is None:
            return
        self.own.stop()
        self.own.start()
        assert self.own.process is not None
        (self.own.folder / SERVER_FILE).write_text(str(self.own.process.pid))

    def finish(self) -> None:
        """Stopped, then its whole storage removed: nothing of the session is left."""
        if self.own is None or self.own.process is None:
            return
        self.own.stop(signal.SIGTERM)
        shutil.rmtree(self.own.folder, ignore_errors=True)


def planned(state_dir: Path) -> SuiteRegistry:
    configured = os.environ.get("NGC_TEST_REGISTRY")
    if configured:
        return SuiteRegistry(configured, None)
    port = free_port()
    folder = state_dir / FOLDERS / f"{os.getpid()}-{secrets.token_hex(4)}"
    own = OwnRegistry(folder, folder / "data", port)
    return SuiteRegistry(f"localhost:{port}", own)


def sweep_dead_sessions(folders: Path) -> list[Path]:
    """Each session folder whose session process is gone, removed (its registry stopped
    first); the folders of live sessions are left alone. Returns what was removed."""
    removed = []
    for folder in sorted(folders.glob("*")) if folders.is_dir() else []:
        if not folder.is_dir() or _alive(_pid(folder / OWNER_FILE)):
            continue
        _stop_server(folder)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _stop_server(folder: Path) -> None:
    """The dead session's registry, when that PID still runs a registry serving this very
    folder's config (a PID reused by another program is left alone)."""
    pid = _pid(folder / SERVER_FILE)
    if pid is None:
        return
    with contextlib.suppress(OSError):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if str(folder / "config.yml").encode() in command:
            os.kill(pid, signal.SIGKILL)


def _pid(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().strip())
    return None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
