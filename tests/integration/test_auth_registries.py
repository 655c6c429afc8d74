"""Publishing to registries that need `docker login`, as users' registries do: the
distribution registry with htpasswd behind TLS (CA in certs.d), and with token auth. For each:
login, release, a rerun that skips by key, verify, a plain `docker pull` back; wrong
credentials end in one line naming the registry, exit 1, nothing recorded as pushed."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.integration.conftest import make_ci_root
from tests.integration.registries import (
    PASSWORD,
    USER,
    RunningRegistry,
    htpasswd_tls_registry,
    token_registry,
)

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
TAG = "26.11-py3"


@pytest.fixture(params=["htpasswd-tls", "token"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunningRegistry]:
    start = htpasswd_tls_registry if request.param == "htpasswd-tls" else token_registry
    folder = tmp_path / "registry"
    folder.mkdir()
    with start(folder) as running:
        yield running


def docker_config(folder: Path, host: str, password: str) -> dict[str, str]:
    """An environment whose Docker config holds what `docker login` stored."""
    env = {**os.environ, "DOCKER_CONFIG": str(folder)}
    subprocess.run(["docker", "login", host, "-u", USER, "--password-stdin"],
                   input=password, text=True, env=env, check=True, capture_output=True)
    return env


def forged_config(folder: Path, host: str, password: str) -> dict[str, str]:
    """A config with wrong credentials (`docker login` itself would refuse to store them)."""
    folder.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{USER}:{password}".encode()).decode()
    (folder / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return {**os.environ, "DOCKER_CONFIG": str(folder)}


def builder(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ngc_builder", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False, timeout=900)


@contextlib.contextmanager
def project(tmp_path: Path) -> Iterator[Path]:
    yield make_ci_root(tmp_path / "project")


def release_args(manifest: Path, address: str, build: Path) -> list[str]:
    return ["release", str(manifest), "--only", "base", "--registry", address, "--build-dir",
            str(build), "--os-source", "bootstrap", "--offline", "--quiet", "--json"]


def test_login_release_rerun_verify_and_pull(registry: RunningRegistry, tmp_path: Path) -> None:
    env = docker_config(tmp_path / "docker", registry.host, PASSWORD)
    address = f"{registry.host}/team-{secrets.token_hex(3)}"
    with project(tmp_path) as manifest:
        build = tmp_path / "build"
        first = builder(env, *release_args(manifest, address, build))
        assert first.returncode == 0, first.stderr[-3000:]
        base: dict[str, Any] = json.loads(first.stdout)["images"]["base"]
        assert base["push"]["status"] == "ok" and base["push"]["digest"]
        planned = builder(env, "plan", str(manifest), "--registry", address, "--build-dir",
                          str(build), "--json")
        assert planned.returncode == 0, planned.stderr[-2000:]
        rows = {row["image"]: row for row in json.loads(planned.stdout)["images"]}
        assert (rows["base"]["build"], rows["base"]["push"]) == ("skip", "none")
        again = builder(env, *release_args(manifest, address, build))
        assert again.returncode == 0 and json.loads(again.stdout)["images"]["base"]["push"][
            "reused"]
        verified = builder(env, "verify", str(manifest), "--registry", address, "--build-dir",
                           str(build))
        assert "ok       " + f"{address}/base:{TAG}" in verified.stdout, verified.stderr
    pulled = subprocess.run(["docker", "pull", f"{address}/base:{TAG}"], env=env,
                            capture_output=True, text=True, check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert base["push"]["digest"] in pulled.stdout
    assert PASSWORD not in first.stdout + first.stderr + again.stderr + verified.stdout


def test_wrong_credentials_fail_in_one_line_and_push_nothing(registry: RunningRegistry,
                                                             tmp_path: Path) -> None:
    env = forged_config(tmp_path / "docker", registry.host, "not-" + PASSWORD)
    address = f"{registry.host}/denied-{secrets.token_hex(3)}"
    with project(tmp_path) as manifest:
        done = builder(env, *release_args(manifest, address, tmp_path / "build"))
    assert done.returncode == 1
    problems = [line for line in done.stderr.splitlines() if line.startswith("!!! base:")]
    assert len(problems) == 1, done.stderr[-3000:]
    assert registry.host in problems[0] and "docker login" in problems[0]
    assert "Traceback" not in done.stderr and "not-" + PASSWORD not in done.stderr
    base = json.loads(done.stdout)["images"]["base"]
    assert base["push"]["status"] == "failed" and base["push"]["digest"] is None
