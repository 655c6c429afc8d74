"""A registry of the test's own (Debian's distribution registry, anonymous, plain HTTP on
loopback), with its storage where the test says, stopped and started again by PID."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tests.integration.registries import free_port

__all__ = ["OwnRegistry", "free_port", "own_registry"]


@dataclass
class OwnRegistry:
    folder: Path
    storage: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    address: str = "127.0.0.1"  # another address of this machine: a test cluster's nodes

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    def start(self) -> None:
        config = {"version": 0.1, "log": {"level": "info"},
                  "storage": {"filesystem": {"rootdirectory": str(self.storage)},
                              "delete": {"enabled": True}},
                  "http": {"addr": self.host}}
        path = self.folder / "config.yml"
        path.write_text(json.dumps(config))  # YAML is a superset of JSON
        with (self.folder / "registry.log").open("ab") as log:
            self.process = subprocess.Popen(["docker-registry", "serve", str(path)],
                                            stdout=log, stderr=subprocess.STDOUT)
        for _ in range(100):
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"http://{self.host}/v2/", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        self.stop()  # never left serving, or holding its port, behind a failed start
        raise RuntimeError(f"test registry did not start: {self.log()[-2000:]}")

    def stop(self, how: signal.Signals = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(how)
            self.process.wait(timeout=30)

    def log(self) -> str:
        return (self.folder / "registry.log").read_text(errors="replace")


@contextlib.contextmanager
def own_registry(folder: Path, storage: Path | None = None) -> Iterator[OwnRegistry]:
    folder.mkdir(parents=True, exist_ok=True)
    registry = OwnRegistry(folder, storage or folder / "data")
    try:
        registry.start()
        yield registry
    finally:
        registry.stop()
