"""Another platform's renders: the same templates, FROM that platform's OS image and parents,
its own locked packages, its wheels ADDed from the build host's tar and only the lock check
run; the host platform's renders do not change by a byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ngc_builder.assemble.image import build_image
from ngc_builder.lock.models import load_lock
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.platforms import platform_os_refs, render_platform
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import FakeClient, FakeEngine
from tests.unit.locks import write_platform_lock

pytestmark = pytest.mark.unit

ARM_JAX = GOOD_RELEASE.replace('    version: "0.12.0"\n',
                               '    version: "0.12.0"\n    platforms: [linux/amd64, linux/arm64]\n')


def rendered(write_release: WriteRelease) -> tuple[dict[str, str], dict[str, str], Path]:
    manifest = write_release(ARM_JAX, lock=False)
    write_platform_lock(manifest)
    prepared = prepare(manifest, None, stack_check=False)
    lock = load_lock(manifest.with_name("26.11.lock.json"))
    assert lock is not None
    arm = render_platform(prepared.loaded, prepared.plan, lock, "linux/arm64")
    assert [image.folder_name for image in arm] == ["base.arm64", "cuda-cu13.arm64", "jax.arm64"]
    return ({image.spec.name: image.dockerfile for image in prepared.rendered},
            {image.spec.name: image.dockerfile for image in arm}, manifest)


def test_arm64_layers_add_the_host_installed_venv_and_run_only_the_lock_check(
        write_release: WriteRelease) -> None:
    host, arm, _ = rendered(write_release)
    # a tar per family of wheels released together (here jax's own, and nothing else), as
    # the host platform's install layers (test_installs.py: the rest in venv.tar)
    assert re.search(r"ADD venv-1.tar /\n# COPY requirements.txt requirements.lock "
                     r"/opt/ngc/frameworks/jax/: as a tar, dated SOURCE_DATE_EPOCH\n"
                     r"ADD copy-[0-9]{3}.tar /\nRUN python -m "
                     r"ngc_runner.lockcheck /opt/ngc/frameworks/jax/requirements.lock", arm["jax"])
    assert "pip install" not in arm["jax"] and "pip install" in host["jax"]
    assert "ADD venv-2.tar /" in arm["cuda-cu13"] and "ldconfig" in arm["cuda-cu13"]
    assert "ADD venv.tar /" in arm["base"] and "python3 -m venv" not in arm["base"]
    assert "ADD venv" not in host["jax"] and "RUN python3 -m venv /opt/venv" in host["base"]


def test_arm64_images_stand_on_their_own_platform_s_os_and_parents(
        write_release: WriteRelease) -> None:
    host, arm, manifest = rendered(write_release)
    loaded = load_release(manifest)
    lock = load_lock(manifest.with_name("26.11.lock.json"))
    assert lock is not None
    arm_os = platform_os_refs(loaded, plan_release(loaded), lock, "linux/arm64")
    assert arm["base"].splitlines()[4] == f"FROM {arm_os['debian-trixie']}"
    host_os = f"ngc-local/os-debian-trixie:13-{lock.os['debian-trixie'].digest()[:12]}"
    assert arm_os["debian-trixie"] != host_os
    assert "libc6" not in arm["base"]  # the OS base's own packages are not reinstalled
    assert arm["jax"].count("FROM ngc-local/cuda-cu13:layer-") == 1
    assert [line for line in arm["jax"].splitlines() if line.startswith("FROM")] != \
        [line for line in host["jax"].splitlines() if line.startswith("FROM")]


def test_a_platform_build_asks_the_engine_for_its_platform(write_release: WriteRelease,
                                                          tmp_path: Path) -> None:
    manifest = write_release(ARM_JAX, lock=False)
    write_platform_lock(manifest)
    prepared = prepare(manifest, None, stack_check=False)
    arm = render_platform(prepared.loaded, prepared.plan, prepared.lock, "linux/arm64")[0]
    engine = FakeEngine()
    client = FakeClient(engine)
    build_image(client, arm, arm.write(tmp_path, owned=True), {}, lambda _: None)
    build_image(client, prepared.rendered[0], prepared.rendered[0].write(tmp_path, owned=True),
                {}, lambda _: None)
    platforms = [call[3].get("platform") for call in engine.calls if call[0] == "build"]
    assert platforms == ["linux/arm64", None]


def test_a_debian_package_restricted_to_amd64_is_left_out_of_the_arm64_layer(
        write_release: WriteRelease) -> None:
    """pytorch's libquadmath0 [amd64]: GCC has no libquadmath on arm64 (apt cannot find one)."""
    manifest = write_release(GOOD_RELEASE.replace(
        "    stack: cu13\n", "    stack: cu13\n    platforms: [linux/amd64, linux/arm64]\n", 1),
        lock=False)
    write_platform_lock(manifest)
    prepared = prepare(manifest, None, stack_check=False)
    lock = prepared.lock
    assert lock.images["pytorch"].inputs["apt"] == ["libquadmath0"]
    assert lock.of_platform("linux/arm64").images["pytorch"].inputs["apt"] == []
    arm = {image.spec.name: image.dockerfile
           for image in render_platform(prepared.loaded, prepared.plan, lock, "linux/arm64")}
    host = {image.spec.name: image.dockerfile for image in prepared.rendered}
    assert "libquadmath0" in host["pytorch"] and "libquadmath0" not in arm["pytorch"]
