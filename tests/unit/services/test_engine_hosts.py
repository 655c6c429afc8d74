"""Engines of build hosts: a client made from the host's URL (TLS files for tcp, the ssh binary
for ssh) and the host's GPU mode asked of its own `docker info`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest

from ngc_builder.errors import EngineError
from ngc_builder.services.engine import DockerEngine
from ngc_builder.services.hosts import gpus_in_info, host_gpu_mode

pytestmark = pytest.mark.unit
RUNC_ONLY = {"Runtimes": {"runc": {"path": "runc"}}, "DefaultRuntime": "runc"}


class FixedInfo:
    """An engine whose `docker info` is the given document (or fails)."""

    def __init__(self, info: dict[str, Any] | None) -> None:
        self.document = info
        self.asked = 0

    def info(self) -> dict[str, Any]:
        self.asked += 1
        if self.document is None:
            raise docker.errors.APIError("engine gone")
        return self.document


def _tls_folder(tmp_path: Path) -> Path:
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text(f"not read until a connection: {name}\n")
    return tmp_path


def test_a_tcp_url_with_a_tls_folder_makes_a_client_with_its_cert_files(tmp_path: Path) -> None:
    folder = _tls_folder(tmp_path)
    engine = DockerEngine(url="tcp://builder-2.example:2376", tls=folder, name="builder-2")
    # docker-py's real client from the engine's options; a fixed API version: no connection.
    api = docker.DockerClient(**engine.client_options(), version="1.41").api
    assert api.base_url == "https://builder-2.example:2376"
    assert api.cert == (str(folder / "cert.pem"), str(folder / "key.pem"))
    assert api.verify == str(folder / "ca.pem")


def test_an_ssh_url_uses_the_ssh_binary_not_paramiko() -> None:
    options = DockerEngine(url="ssh://builder@builder-3.example").client_options()
    assert options["use_ssh_client"] is True and "tls" not in options


def test_a_host_that_does_not_answer_is_named_in_the_error(tmp_path: Path) -> None:
    engine = DockerEngine(10, url=f"unix://{tmp_path}/none.sock", name="builder-2")
    with pytest.raises(EngineError, match=r"no Docker engine answers at builder-2 \(unix://"):
        engine.ping()


@pytest.mark.parametrize(("info", "expected"), [
    (RUNC_ONLY, False),
    ({"Runtimes": {"runc": {}, "nvidia": {"path": "nvidia-container-runtime"}}}, True),
    ({"Runtimes": {"runc": {}}, "DefaultRuntime": "nvidia"}, True),
    ({"DiscoveredDevices": [{"Source": "cdi", "ID": "nvidia.com/gpu=0"}]}, True),
    ({"DiscoveredDevices": [{"Source": "cdi", "ID": "vendor.example/fpga=0"}]}, False),
])
def test_gpus_are_read_from_the_engines_info(info: dict[str, Any], expected: bool) -> None:
    assert gpus_in_info(info) is expected


def test_auto_asks_the_hosts_engine_and_a_fixed_mode_does_not() -> None:
    nvidia = FixedInfo({"Runtimes": {"nvidia": {}}})
    assert host_gpu_mode(nvidia, "auto", "gpu-1") == "required"
    assert host_gpu_mode(FixedInfo(RUNC_ONLY), "auto", "cpu-1") == "none"
    fixed = FixedInfo(RUNC_ONLY)
    assert host_gpu_mode(fixed, "required", "gpu-2") == "required"
    assert fixed.asked == 0


def test_an_engine_whose_info_fails_is_named() -> None:
    with pytest.raises(EngineError, match="build host gpu-1: `docker info` failed"):
        host_gpu_mode(FixedInfo(None), "auto", "gpu-1")
