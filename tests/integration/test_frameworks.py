"""A full framework image of the real release (PyTensor: small enough for CI), built and
validated for real, and its probe pointed at a broken environment."""

from __future__ import annotations

import io
import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST, cli

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pytensor_record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    build_dir = tmp_path_factory.mktemp("frameworks") / "build"
    done = cli("release", str(REPO / "releases" / "26.11.yaml"), "--only", "pytensor",
               "--no-push", "--registry", f"{REGISTRY_HOST}/ci-fw-{secrets.token_hex(4)}",
               "--build-dir", str(build_dir), "--json", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def test_the_release_manifests_pytensor_image_validates(pytensor_record: dict[str, Any]) -> None:
    image = pytensor_record["images"]["pytensor"]
    assert image["validation"]["verdict"] == "pass", image["validation"]
    report = json.loads(Path(image["validation"]["report"]).read_text())
    checks = {check["id"]: check for check in report["checks"]}
    for name in ("framework.version", "pytensor.function", "pytensor.grad", "pytensor.train"):
        assert checks[name]["status"] == "pass", checks[name]
    assert checks["pytensor.gpu.function"]["status"] == "skip"
    assert checks["pytensor.gpu.function"]["message"] == "no GPU"
    assert image["labels"]["org.ngc-builder.framework.version"] == "3.3.7"


def test_the_probe_fails_in_a_broken_environment(
    pytensor_record: dict[str, Any], docker_client: Any
) -> None:
    parent = pytensor_record["images"]["pytensor"]["build"]["image_id"]
    dockerfile = f"FROM {parent}\nRUN pip uninstall -y scipy\n".encode()
    image, _ = docker_client.images.build(fileobj=io.BytesIO(dockerfile), rm=True)
    try:
        done = cli("validate", image.id, "--json")
        assert done.returncode == 1
        failed = [c["id"] for c in json.loads(done.stdout)["checks"] if c["status"] == "fail"]
        assert failed, "a framework without scipy must not validate"
        assert "pip.check" in failed or "framework.import" in failed
    finally:
        docker_client.api.remove_image(image.id, force=True)
