"""Validation through the real engine: a deliberately broken image must fail its check."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from tests.integration.conftest import ReleaseRun, cli

pytestmark = pytest.mark.integration


def derive(client: Any, parent: str, run_line: str, tag: str) -> str:
    dockerfile = f"FROM {parent}\nRUN {run_line}\n".encode()
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    return str(image.id)


def test_validate_command_passes_a_good_image(ci_release: ReleaseRun) -> None:
    image_id = ci_release.record["images"]["jax"]["build"]["image_id"]
    done = cli("validate", image_id, "--release", str(ci_release.manifest), "--json")
    assert done.returncode == 0, done.stdout[-3000:]
    assert json.loads(done.stdout)["verdict"] == "pass"


def test_missing_library_fails_its_check(ci_release: ReleaseRun, docker_client: Any,
                                         tmp_path: Any) -> None:
    parent = ci_release.record["images"]["jax"]["build"]["image_id"]
    broken = derive(docker_client, parent,
                    "find /opt/venv -name 'libcudart.so*' -delete && ldconfig",
                    "ngc-local/test-broken-lib:latest")
    try:
        junit = tmp_path / "junit.xml"
        done = cli("validate", broken, "--json", "--junit", str(junit))
        assert done.returncode == 1
        checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
        assert checks["lib.cudart"]["status"] == "fail"
        assert checks["jax.train_cpu"]["status"] == "pass"
        assert "<failure" in junit.read_text()
    finally:
        docker_client.api.remove_image(broken, force=True)


def test_wrong_label_fails_the_label_check(ci_release: ReleaseRun, docker_client: Any) -> None:
    parent = ci_release.record["images"]["jax"]["build"]["image_id"]
    dockerfile = f"FROM {parent}\nLABEL org.ngc-builder.framework.version=9.9.9\n".encode()
    image, _ = docker_client.images.build(fileobj=io.BytesIO(dockerfile), rm=True)
    try:
        done = cli("validate", image.id, "--release", str(ci_release.manifest), "--json")
        assert done.returncode == 1
        labels = next(c for c in json.loads(done.stdout)["checks"] if c["id"] == "labels")
        assert labels["status"] == "fail" and "9.9.9" in labels["message"]
    finally:
        docker_client.api.remove_image(image.id, force=True)
