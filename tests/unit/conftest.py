from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ngc_builder.manifest.wheels import Target, WheelMetadata

if TYPE_CHECKING:
    from ngc_builder.services.registry import HttpRegistry

# Requirements as the real wheels declare them (trimmed), so unit tests need no index.
FAKE_WHEELS = {
    "torch": WheelMetadata("torch", "2.15.0", ">=3.11", (
        "filelock",
        'cuda-toolkit[cublas,cudart]==13.2.2; platform_system == "Linux"',
        'nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"',
        'nvidia-nccl-cu13==2.30.7; platform_system == "Linux"',
        'optree>=0.13.0; extra == "optree"',
    )),
    "cuda-toolkit": WheelMetadata("cuda-toolkit", "13.2.2", "", (
        "nvidia-cublas==13.4.1.3.*; sys_platform == 'linux' and extra == 'cublas'",
        "nvidia-cuda-runtime==13.2.86.*; sys_platform == 'linux' and extra == 'cudart'",
        "nvidia-npp==13.1.0.59.*; sys_platform == 'linux' and extra == 'npp'",
    )),
    "jax": WheelMetadata("jax", "0.12.0", ">=3.12", (
        "jaxlib<=0.12.0,>=0.11.2",
        'jax-cuda13-plugin[with-cuda]<=0.12.0,>=0.12.0; extra == "cuda13"',
    )),
    "jaxlib": WheelMetadata("jaxlib", "0.12.0", ">=3.12", ("numpy>=2.2",)),
    "jax-cuda13-plugin": WheelMetadata("jax-cuda13-plugin", "0.12.0", ">=3.12", (
        "jax-cuda13-pjrt==0.12.0",
        'nvidia-cublas>=13.0.0.19; sys_platform == "linux" and extra == "with-cuda"',
        'nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == "linux" and extra == "with-cuda"',
        'nvidia-nvshmem-cu13>=3.3.20; sys_platform == "linux" and extra == "with-cuda"',
    )),
    "six": WheelMetadata("six", "1.16.0", "", ()),
    "nvidia-cublas": WheelMetadata("nvidia-cublas", "12.0.0", "", ()),
    "nvidia-npp": WheelMetadata("nvidia-npp", "13.1.0.59", "", ()),
}


def fake_fetch(requirement: str, target: Target) -> WheelMetadata:
    name = requirement.split("=")[0].split("<")[0].split(">")[0]
    return FAKE_WHEELS[name]


@pytest.fixture
def fetch() -> object:
    return fake_fetch


STACK = """\
cuda_stacks:
  cu13:
    cuda: "13.2"
    wheels:
      cuda-toolkit: "13.2.2"
      nvidia-cuda-runtime: "13.2.86"
      nvidia-cublas: "13.4.1.3"
      nvidia-cudnn-cu13: "9.26.0.51"
      nvidia-nccl-cu13: "2.30.7"
      nvidia-nvshmem-cu13: "3.7.2"
    libraries:
      cudart: nvidia-cuda-runtime
      cublas: nvidia-cublas
      cudnn: nvidia-cudnn-cu13
      nccl: nvidia-nccl-cu13
"""

GOOD_RELEASE = f"""\
release: "26.11"
registry: localhost:5000
base: debian-trixie
{STACK}
images:
  - framework: pytorch
    version: "2.15.0"
    stack: cu13
  - framework: jax
    version: "0.12.0"
    stack: cu13
"""


def release_text(**replace: str) -> str:
    text = GOOD_RELEASE
    for old, new in replace.items():
        text = text.replace(old.replace("_", " "), new)
    return text


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_local_engine_quick_retries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Unit tests hand in fake engines: one that reaches for the real engine finds none."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    monkeypatch.setenv("NGC_RETRY_WAIT", "0.01")  # retries stay bounded and quick
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker-config"))  # no one's logins
    monkeypatch.setenv("NGC_DOCKER_CERTS_D", str(tmp_path / "certs.d"))
    monkeypatch.setenv("NGC_CACHE_DIR", str(tmp_path / "package-cache"))  # never the user's
    monkeypatch.setenv("NGC_STATE_DIR", str(tmp_path / "state"))  # no one's signing key


@pytest.fixture
def liar(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpRegistry]:
    """A client of a registry on 127.0.0.1 that answers what the test tells it to, however
    wrong (tests/unit/services/hostile_registry.py); no proxy or insecure setting of this
    machine's in the way."""
    from tests.unit.services.hostile_registry import hostile

    for name in ("NGC_REGISTRY_INSECURE", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with hostile() as registry:
        yield registry
