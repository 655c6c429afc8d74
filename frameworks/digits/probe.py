"""DIGITS probe: the web server starts and answers on its port."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "digits"
PORT = 5000
START_TIMEOUT_S = 60


def register(suite: ProbeSuite) -> None:
    suite.check("digits.server", tier="T2")(server_answers)


def server_answers(ctx: ProbeContext) -> str:
    """`python -m digits` serves its home page (HTTP 200) on localhost."""
    command = [sys.executable, "-m", "digits", "--port", str(PORT)]
    ctx.evidence("command", command)
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        return _wait_for_home_page(ctx, server)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_for_home_page(ctx: ProbeContext, server: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            error = server.stderr.read().decode(errors="replace") if server.stderr else ""
            ctx.fail(f"server exited {server.returncode}: {error.strip()[-300:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/", timeout=5) as answer:
                return f"HTTP {answer.status} from http://127.0.0.1:{PORT}/"
        except (urllib.error.URLError, ConnectionError):
            time.sleep(1)
    ctx.fail(f"no answer on port {PORT} within {START_TIMEOUT_S} s")
    return ""
