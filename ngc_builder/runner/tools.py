"""T2 checks of the researcher tools an image carries (the manifest's ``tools``).

Each tool's server is started inside the image, as the validating user, on a free loopback
port, and asked over HTTP for a page only a working server answers; then it is stopped.
Evidence includes what the tool costs: the installed bytes of the distributions that only
the tool needs (its dependency closure minus the framework's and everything else's).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from .suite import Check, Context, Suite
from .versions import normalize_name

START_TIMEOUT_S = 120.0  # a first JupyterLab start builds its settings cache
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def register(suite: Suite, expect: dict[str, Any]) -> None:
    tools = expect.get("tools") or {}
    if "jupyterlab" in tools:
        suite.add(Check("tools.jupyterlab", "T2", False, check_jupyterlab))
    if "tensorboard" in tools:
        suite.add(Check("tools.tensorboard", "T2", False, check_tensorboard))


def check_jupyterlab(ctx: Context) -> str:
    token = secrets.token_hex(16)
    root = tempfile.mkdtemp(prefix="lab-")
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}"]
    return serve(ctx, "jupyterlab", command, "--port={port}",
                 lambda port: f"http://127.0.0.1:{port}/api/status?token={token}",
                 lambda body: "started" in json.loads(body))


def check_tensorboard(ctx: Context) -> str:
    logdir = tempfile.mkdtemp(prefix="tb-")
    command = [sys.executable, "-m", "tensorboard.main", f"--logdir={logdir}",
               "--host=127.0.0.1"]
    return serve(ctx, "tensorboard", command, "--port={port}",
                 lambda port: f"http://127.0.0.1:{port}/data/environment",
                 lambda body: json.loads(body).get("data_location") == logdir)


def serve(ctx: Context, tool: str, command: list[str], port_option: str,
          url_of: Callable[[int], str], looks_right: Callable[[bytes], bool]) -> str:
    version = installed(tool)
    wanted = str(ctx.expect["tools"][tool])
    ctx.evidence("version", version)
    if version != wanted:
        ctx.fail(f"{tool} {version or 'is not installed'}, the manifest asks {wanted}")
    cost = exclusive_bytes(tool)
    ctx.evidence("exclusive_bytes", cost)
    port = free_port()
    started = time.monotonic()
    proc = subprocess.Popen([*command, port_option.format(port=port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        answered = poll(url_of(port), proc, looks_right)
    finally:
        stop(proc)
    ctx.evidence("start_s", round(time.monotonic() - started, 2))
    if answered is not None:
        ctx.evidence("stderr_tail", tail(proc))
        ctx.fail(f"{tool} {version} did not serve: {answered}")
    return f"{tool} {version} served on loopback ({cost / 1e6:.0f} MB only it needs)"


def poll(url: str, proc: subprocess.Popen[bytes], looks_right: Callable[[bytes], bool],
         timeout: float = START_TIMEOUT_S) -> str | None:
    """None once `url` answers as expected; otherwise why not (exit, timeout, wrong answer)."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"the server exited {proc.returncode}"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                body = response.read()
            return None if looks_right(body) else f"unexpected answer from {url}: {body[:200]!r}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = str(exc)
        time.sleep(0.5)
    return f"no answer within {timeout:.0f} s ({last})"


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tail(proc: subprocess.Popen[bytes]) -> str:
    data = proc.stderr.read() if proc.stderr else b""
    return "\n".join(data.decode("utf-8", "replace").strip().splitlines()[-8:])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def requires_of(name: str) -> set[str]:
    """The distributions `name` needs (not its optional extras), normalised."""
    try:
        lines = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
        return set()
    found = (_NAME.match(line) for line in lines if "extra ==" not in line)
    return {normalize_name(match.group(0)) for match in found if match}


def closure(roots: set[str], graph: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen and name in graph:
            seen.add(name)
            todo.extend(graph[name])
    return seen


def exclusive_bytes(tool: str) -> int:
    """Bytes on disk of what only `tool` pulls in: its closure minus everything else's."""
    distributions = {normalize_name(d.metadata["Name"]): d
                     for d in importlib.metadata.distributions() if d.metadata["Name"]}
    graph = {name: requires_of(name) for name in distributions}
    needed_by = {needed for name in graph for needed in graph[name]}
    others = {name for name in graph if name not in needed_by} - {normalize_name(tool)}
    only_tool = closure({normalize_name(tool)}, graph) - closure(others, graph)
    return sum(installed_size(distributions[name]) for name in only_tool)


def installed_size(distribution: importlib.metadata.Distribution) -> int:
    total = 0
    for path in distribution.files or []:
        try:
            total += os.path.getsize(str(path.locate()))
        except OSError:
            continue
    return total
