"""The real registry behind a fault-injecting TCP proxy (started by the test, on loopback): a
release through it completes, retrying what failed and saying so; with the registry gone for
good it stops in bounded time with one clear line and records nothing as pushed."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ngc_builder.services.registry import parse_registry
from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST, make_ci_root

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class FaultProxy:
    """Forwards 127.0.0.1:<port> to the registry. Connection n gets `faults[n]` while the
    list lasts ("reset": closed with a TCP RST; "503": that answer to its first request;
    "pass"), then `after` for every later one."""

    def __init__(self, target: tuple[str, int], faults: list[str], after: str) -> None:
        self.target, self.faults, self.after = target, list(faults), after
        self.served: list[str] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            for count in itertools.count():
                client, _ = self.server.accept()
                fault = self.faults[count] if count < len(self.faults) else self.after
                self.served.append(fault)
                threading.Thread(target=self._serve, args=(client, fault), daemon=True).start()

    def _serve(self, client: socket.socket, fault: str) -> None:
        with contextlib.suppress(OSError), client:
            if fault == "reset":
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            if fault == "503":
                client.recv(65536)
                client.sendall(UNAVAILABLE)
                return
            with socket.create_connection(self.target, timeout=60) as upstream:
                pump = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
                pump.start()
                _copy(client, upstream)
                pump.join(timeout=60)

    def __enter__(self) -> FaultProxy:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.close()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)


@pytest.fixture
def upstream() -> tuple[str, int]:
    host, _, port = REGISTRY_HOST.partition(":")
    return ("127.0.0.1" if host == "localhost" else host, int(port or 5000))


@contextlib.contextmanager
def project(tmp_path: Path) -> Iterator[Path]:
    yield make_ci_root(tmp_path / "project")


def release(manifest: Path, registry: str, build_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NGC_RETRY_WAIT": "0.5", "NGC_RETRIES": "5"}
    return subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(manifest), "--only", "base",
         "--registry", registry, "--build-dir", str(build_dir), "--os-source", "bootstrap",
         "--offline", "--quiet", "--json"],
        capture_output=True, text=True, check=False, cwd=REPO, timeout=900, env=env)


def test_a_release_through_a_flaky_registry_completes_and_says_its_retries(
    tmp_path: Path, upstream: tuple[str, int],
) -> None:
    faults = ["reset", "503", "pass", "reset", "503", "503", "pass", "reset"]
    with project(tmp_path) as manifest, FaultProxy(upstream, faults, "pass") as proxy:
        namespace = f"faults-{secrets.token_hex(4)}"
        registry = f"127.0.0.1:{proxy.port}/{namespace}"
        done = release(manifest, registry, tmp_path / "build")
        assert done.returncode == 0, done.stderr[-3000:]
        assert {"reset", "503"} <= set(proxy.served[: len(faults)])
    said = done.stderr + "".join(p.read_text() for p in (tmp_path / "build").rglob("*.log"))
    assert "again in" in said and ("HTTP 503" in said or "Connection" in said)
    base = json.loads(done.stdout)["images"]["base"]
    assert base["push"]["status"] == "ok"
    direct = parse_registry(f"{REGISTRY_HOST}/{namespace}")  # not through the proxy
    assert direct.manifest_digest("base", "26.11-py3") == base["push"]["digest"]


def test_a_registry_gone_for_good_stops_in_bounded_time_with_one_line(
    tmp_path: Path, upstream: tuple[str, int],
) -> None:
    with project(tmp_path) as manifest, FaultProxy(upstream, [], "503") as proxy:
        registry = f"127.0.0.1:{proxy.port}/down-{secrets.token_hex(4)}"
        started = time.monotonic()
        done = release(manifest, registry, tmp_path / "build")
        took = time.monotonic() - started
    assert done.returncode == 1
    assert took < 300, took
    problems = [line for line in done.stderr.splitlines() if line.startswith("!!! base:")]
    assert len(problems) == 1 and "gave up after 5 attempts" in problems[0], done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    base = json.loads(done.stdout)["images"]["base"]
    assert base["push"]["status"] == "failed" and base["push"]["digest"] is None
