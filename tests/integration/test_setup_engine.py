"""`make engine` on a host where a registry that wants credentials already holds the address
(Debian's packaged docker-registry service with its htpasswd config, as installing the package
starts it on a systemd host): setup leaves it alone, starts ngc-builder's registry on the next
free port, says so, and points `make release` at it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
import requests

from tests.conftest import REPO
from tests.integration.registries import free_port, htpasswd_registry

pytestmark = pytest.mark.integration


def setup_engine(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / "ci" / "setup-engine.sh")], env=env,
                          capture_output=True, text=True, check=False, timeout=300)


def test_a_registry_wanting_credentials_is_left_alone_and_ours_goes_beside_it(
    tmp_path: Path,
) -> None:
    port = free_port()
    state = tmp_path / "state"
    env = {**os.environ, "NGC_STATE_DIR": str(state), "NGC_REGISTRY_ADDR": f"127.0.0.1:{port}"}
    folder = tmp_path / "packaged"
    folder.mkdir()
    with htpasswd_registry(folder, port):
        first = setup_engine(env)
        assert first.returncode == 0, first.stderr
        ours = (state / "registry-address").read_text().strip()
        try:
            assert ours != f"127.0.0.1:{port}" and ours.startswith("127.0.0.1:")
            assert f"127.0.0.1:{port} is held by a registry that wants credentials" in first.stdout
            assert f"started ngc-builder's registry on {ours}" in first.stdout
            assert requests.get(f"http://{ours}/v2/", timeout=5).status_code == 200
            assert requests.get(f"http://127.0.0.1:{port}/v2/", timeout=5).status_code == 401
            again = setup_engine(env)  # a second run finds it and changes nothing
            assert again.returncode == 0
            assert f"ngc-builder's registry answers on {ours}" in again.stdout
            option = subprocess.run(["bash", str(REPO / "ci" / "registry-option.sh")], env=env,
                                    capture_output=True, text=True, check=True)
            assert option.stdout.strip() == f"--registry {ours}"
        finally:
            os.kill(int((state / "registry.pid").read_text()), signal.SIGTERM)
