"""The Docker engine: one place that connects, so every stage gets the same errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from ngc_builder.errors import EngineError

SETUP_HINT = "start one with `make engine` (ci/setup-engine.sh)"


def connect(timeout: int = 900) -> Any:
    """A docker-py client that has answered a ping, or EngineError."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except (docker.errors.DockerException, requests.RequestException) as exc:
        where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise EngineError(f"no Docker engine answers at {where} ({exc}); {SETUP_HINT}") from None
    return client


def connect_if_running() -> Any | None:
    """A client when an engine answers, else None (`plan` works without an engine)."""
    try:
        return connect(timeout=10)
    except EngineError:
        return None


def gpu_mode() -> str:
    """'required' when this host can pass GPUs into containers, else 'none'.

    NGC_GPU overrides (auto|required|none): a CI runner with GPUs can insist on them so
    that a broken driver setup fails instead of quietly validating on the CPU.
    """
    wanted = os.environ.get("NGC_GPU", "auto")
    if wanted in ("required", "none"):
        return wanted
    return "required" if Path("/dev/nvidiactl").exists() else "none"


def image_exists(client: Any, ref: str) -> bool:
    try:
        client.api.inspect_image(ref)
    except docker.errors.ImageNotFound:
        return False
    return True
