"""The CI release's images for linux/arm64, built on this amd64 host from the committed
two-platform lock (data/releases/ci-arm64.*): the arm64 OS from its lock, each layer's wheels
installed and compiled on the host platform, only maintainer scripts and the lock check
emulated. The images are arm64 through and through: the engine says so, `uname -m` in them
says aarch64, JAX computes, pip finds nothing broken and the bytecode is valid. Each platform's
time is printed side by side (docs/multiarch.md has the figures).

`make test-extended`: CI's two-platform path is `test_arm64_release.py`, the same images built,
validated emulated, pushed as one index and pulled through `release` (docs/testing.md)."""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from ngc_builder.assemble.image import build_image
from ngc_builder.assemble.osbase import locked_bootstrap
from ngc_builder.assemble.platform import HostStage, platform_context
from ngc_builder.assemble.wheel_install import VenvTree
from ngc_builder.cache.store import default_root, open_cache
from ngc_builder.pipeline.cache import ready_cache
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.prepare import Prepared, prepare
from ngc_builder.publish.oci_index import PlatformImage, push_index
from ngc_builder.publish.push import transfer
from ngc_builder.render.platforms import platform_os_refs, render_platform
from ngc_builder.services.registry import parse_registry
from tests.conftest import DATA
from tests.integration.conftest import REGISTRY_HOST, ci_project

pytestmark = [pytest.mark.integration, pytest.mark.extended]

ARM = "linux/arm64"
SMOKE = ("import importlib.util, os, platform, struct, jax, jax.numpy as jnp\n"
         "pyc = importlib.util.cache_from_source(jax.__file__)\n"
         "_, mtime, size = struct.unpack('<4xIII', open(pyc, 'rb').read(16))[0:3]\n"
         "stat = os.stat(jax.__file__)\n"
         "print(platform.machine(), float(jnp.arange(4.0).sum()),\n"
         "      mtime == int(stat.st_mtime) and size == stat.st_size)\n")


def _project(root: Path) -> Path:
    ci_project(root)
    for name in ("ci-arm64.yaml", "ci-arm64.lock.json"):
        (root / "releases" / name).write_text((DATA / "releases" / name).read_text())
    return root / "releases" / "ci-arm64.yaml"


def _os_images(client: Any, prepared: Prepared) -> None:
    cache = open_cache(default_root())
    arm = prepared.lock.of_platform(ARM)
    wanted = [(prepared.plan.os_refs[name], entry) for name, entry in prepared.lock.os.items()]
    wanted += [(ref, arm.os[name]) for name, ref in platform_os_refs(
        prepared.loaded, prepared.plan, prepared.lock, ARM).items()]
    for ref, entry in wanted:
        try:
            client.images.get(ref)
        except docker.errors.ImageNotFound:  # made once per lock: later runs find it
            locked_bootstrap(entry, cache.deb_path)(client, prepared.loaded.base, ref,
                                                    lambda _: None)


@dataclass(frozen=True)
class Built:
    prepared: Prepared
    arm64: dict[str, str]  # image -> its arm64 build's id
    amd64: dict[str, str]


@pytest.fixture(scope="module")
def built(docker_client: Any, locked_trixie_os: str,
          tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Each image built for both platforms; each one's two build times printed."""
    root = tmp_path_factory.mktemp("arm64")
    prepared = prepare(_project(root), None, stack_check=False)
    ui = Ui(root / "logs", show_logs=False)
    try:
        network, _ = ready_cache(docker_client, prepared.loaded, prepared.lock,
                                 prepared.plan.images, False, ui,
                                 lambda: _os_images(docker_client, prepared))
    finally:
        ui.close()
    cache, arm = open_cache(default_root()), prepared.lock.of_platform(ARM)
    found = Built(prepared, {}, {})
    for host, image in zip(prepared.rendered,
                           render_platform(prepared.loaded, prepared.plan, prepared.lock, ARM),
                           strict=True):
        started = time.monotonic()
        amd64 = build_image(docker_client, host, host.write(root / "context", owned=True), {},
                            lambda _: None, network=network)
        middle = time.monotonic()
        stage = HostStage(docker_client, amd64.image_id, cache.wheel_path,
                          VenvTree(prepared.loaded.base.python,
                                   arm.os[image.spec.base].epoch))
        folder = platform_context(image, root / "context", arm.images[image.spec.name], stage,
                                  lambda _: None)
        arm64 = build_image(docker_client, image, folder, {}, lambda _: None, network=network)
        found.arm64[image.spec.name] = arm64.image_id
        found.amd64[image.spec.name] = amd64.image_id
        print(f"{image.spec.name}: amd64 {middle - started:.1f} s, arm64 "
              f"{time.monotonic() - middle:.1f} s")
    return found


def test_every_layer_is_an_arm64_image(built: Built, docker_client: Any) -> None:
    assert sorted(built.arm64) == ["base", "cuda-mini", "jax"]
    for image_id in built.arm64.values():
        assert docker_client.api.inspect_image(image_id)["Architecture"] == "arm64"


def test_jax_runs_emulated_with_valid_bytecode_and_nothing_broken(
        built: Built, docker_client: Any) -> None:
    image = built.arm64["jax"]
    out = docker_client.containers.run(image, ["python", "-c", SMOKE], entrypoint=[],
                                       remove=True, platform=ARM).decode().split()
    assert out == ["aarch64", "6.0", "True"]
    checks = docker_client.containers.run(image, ["sh", "-c", "uname -m; pip check"],
                                          entrypoint=[], remove=True, platform=ARM).decode()
    assert checks.splitlines() == ["aarch64", "No broken requirements found."]


def _run(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def test_one_tag_two_platforms_as_docker_and_another_client_see_it(
        built: Built, docker_client: Any) -> None:
    """Both builds pushed, one index at the release tag: plain `docker pull` gets amd64 here,
    `--platform linux/arm64` gets arm64 and runs it emulated; `docker manifest inspect`
    (the CLI's own registry client) lists both."""
    registry = parse_registry(f"{REGISTRY_HOST}/arm-{secrets.token_hex(4)}")
    spec = built.prepared.plan.get("jax")
    pushed = [PlatformImage(platform, transfer(docker_client, spec, ids["jax"], registry,
                                               f"{spec.tag}-rc1.{platform.split('/')[1]}",
                                               lambda _: None))
              for platform, ids in (("linux/amd64", built.amd64), (ARM, built.arm64))]
    push_index(registry, "jax", spec.tag, pushed)
    ref = spec.remote_ref(registry)
    _run("docker", "pull", "-q", ref)
    assert docker_client.api.inspect_image(ref)["Architecture"] == "amd64"
    assert _run("docker", "run", "--rm", "--entrypoint", "uname", ref, "-m").strip() == "x86_64"
    _run("docker", "pull", "-q", "--platform", ARM, ref)
    assert docker_client.api.inspect_image(ref)["Architecture"] == "arm64"
    assert _run("docker", "run", "--rm", "--platform", ARM, "--entrypoint", "uname", ref,
                "-m").strip() == "aarch64"
    listed = json.loads(_run("docker", "manifest", "inspect", "--insecure", ref))
    assert sorted((entry["platform"]["architecture"], entry["digest"])
                  for entry in listed["manifests"]) == sorted(
        (image.platform.split("/")[1], image.digest) for image in pushed)
