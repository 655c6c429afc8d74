"""The real CLI as a separate process, watched through its stderr file, so a test can act at
an exact step (send a signal, stop a service) and then read what the user saw."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker

from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST


def namespace(prefix: str, host: str = REGISTRY_HOST) -> str:
    """A registry path nobody else pushes to (the session removes its tags from the engine)."""
    return f"{host}/{prefix}-{secrets.token_hex(4)}"


@dataclass
class Release:
    manifest: Path
    registry: str
    build_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[str] | None = None
    stderr_file_override: Path | None = None  # off the build dir's disk, when that one fills
    extra: list[str] = field(default_factory=list)  # more options for the release command

    def args(self) -> list[str]:
        return [sys.executable, "-m", "ngc_builder", "release", str(self.manifest),
                "--registry", self.registry, "--build-dir", str(self.build_dir),
                "--os-source", "bootstrap", "--offline", "--json", *self.extra]

    @property
    def stderr_file(self) -> Path:
        return self.stderr_file_override or self.build_dir.parent / f"{self.build_dir.name}.stderr"

    @property
    def stdout_file(self) -> Path:
        return self.stderr_file.with_suffix(".stdout")

    def start(self) -> subprocess.Popen[str]:
        self.build_dir.parent.mkdir(parents=True, exist_ok=True)
        with self.stderr_file.open("w") as stderr, self.stdout_file.open("w") as stdout:
            self.process = subprocess.Popen(self.args(), cwd=REPO, stdout=stdout, stderr=stderr,
                                            text=True, env={**os.environ, **self.env})
        return self.process

    def wait_for(self, text: str, timeout: float = 600) -> None:
        """Until `text` is in stderr; AssertionError (with the tail) if the run ends first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.stderr():
                return
            assert self.process is not None and self.process.poll() is None, \
                f"the run ended before {text!r}: {self.stderr()[-3000:]}"
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} within {timeout} s: {self.stderr()[-3000:]}")

    def finish(self, timeout: float = 900) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def run(self, timeout: float = 900) -> int:
        self.start()
        return self.finish(timeout)

    def stderr(self) -> str:
        return self.stderr_file.read_text(errors="replace")

    def problems(self) -> list[str]:
        return [line for line in self.stderr().splitlines() if line.startswith("!!! ")]

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(
            (self.build_dir / "26.11" / "release.json").read_text())
        return data


def _client(host: str | None) -> docker.DockerClient:
    return docker.DockerClient(base_url=host) if host else docker.from_env()


def own_containers(pid: int, host: str | None = None) -> list[str]:
    """Containers the builder process `pid` started and that are still there. One listing
    call (no inspect per container): other tests' containers come and go meanwhile."""
    found = _client(host).api.containers(all=True, filters={"label": "org.ngc-builder.process"})
    return [c["Id"] for c in found
            if c["Labels"]["org.ngc-builder.process"].rpartition(":")[2].startswith(f"{pid}-")]


def containers_running(token: str, host: str | None = None) -> list[str]:
    """Containers (a build's too) whose command holds `token`."""
    return [c["Id"] for c in _client(host).api.containers(all=True)
            if token in (c.get("Command") or "")]
