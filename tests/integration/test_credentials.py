"""A CI runner clones with a token in the origin URL: the token must reach no label, record,
report or log of a real release (real engine, real registry)."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import REGISTRY_HOST, cli, make_ci_root

pytestmark = pytest.mark.integration
TOKEN = "glpat-" + secrets.token_hex(8)
ORIGIN = f"https://gitlab-ci-token:{TOKEN}@gitlab.example.com/ml/ngc-builder.git"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_a_token_in_the_origin_url_is_nowhere(tmp_path: Path, docker_client: Any) -> None:
    root = tmp_path / "project"
    manifest = make_ci_root(root)
    git(root, "init", "-q")
    git(root, "remote", "add", "origin", ORIGIN)
    build_dir = root / "build"
    registry = f"{REGISTRY_HOST}/cred-{secrets.token_hex(4)}"
    # --no-cache: the base is built here, with this run's labels, not adopted from another run.
    done = cli("release", str(manifest), "--only", "base", "--registry", registry,
               "--build-dir", str(build_dir), "--os-source", "bootstrap", "--no-cache",
               "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    assert TOKEN not in done.stdout + done.stderr
    written = [p for p in build_dir.rglob("*") if p.is_file()]
    assert any(p.name == "release.json" for p in written)
    assert [p for p in written if TOKEN in p.read_text(errors="replace")] == []
    # As a researcher sees it: pulled back by its release tag.
    docker_client.api.pull(f"{registry}/base", tag="26.11-py3")
    labels = docker_client.api.inspect_image(f"{registry}/base:26.11-py3")["Config"]["Labels"]
    assert labels["org.opencontainers.image.source"] == (
        "https://gitlab.example.com/ml/ngc-builder.git")
    assert not [key for key, value in labels.items() if TOKEN in value]
