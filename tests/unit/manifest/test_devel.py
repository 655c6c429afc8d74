"""Devel variants: which rows may have one, what the plan, the lock and the render make of it."""

from __future__ import annotations

import json

import pytest

from ngc_builder.lock.inputs import apt_requirements, pip_requirements
from ngc_builder.lock.models import load_lock, lock_path
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.contexts import render_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.manifest.test_load import problems

pytestmark = pytest.mark.unit

DEVEL_WHEELS = """    devel_wheels:
      nvidia-cuda-nvcc: "13.2.86"
      nvidia-cuda-crt: "13.2.86"
      nvidia-nvvm: "13.2.86"
      nvidia-cuda-cccl: "13.2.86"
"""
DEVEL_RELEASE = GOOD_RELEASE.replace(
    "      nccl: nvidia-nccl-cu13\n", "      nccl: nvidia-nccl-cu13\n" + DEVEL_WHEELS).replace(
    '    version: "0.12.0"\n    stack: cu13\n', '    version: "0.12.0"\n    stack: cu13\n'
    "    devel: true\n")


def test_a_devel_row_plans_its_own_image_on_the_framework(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(DEVEL_RELEASE))
    plan = plan_release(loaded)
    devel = plan.get("jax-devel")
    assert (devel.kind, devel.parent, devel.tag, devel.shared) == ("devel", "jax", "26.11-py3",
                                                                   False)
    assert devel.labels["org.ngc-builder.devel"] == "true"
    assert devel.labels["org.ngc-builder.image"] == "jax-devel"
    assert [spec.name for spec in plan.images][-1] == "jax-devel"  # parents first
    assert "pytorch-devel" not in {spec.name for spec in plan.images}
    assert pip_requirements(loaded, devel) == [
        "nvidia-cuda-cccl==13.2.86", "nvidia-cuda-crt==13.2.86", "nvidia-cuda-nvcc==13.2.86",
        "nvidia-nvvm==13.2.86"]
    assert apt_requirements(loaded, devel) == ["g++", "ninja-build", "python3-dev"]


def test_the_devel_dockerfile_uses_the_stack_s_own_toolkit(write_release: WriteRelease) -> None:
    manifest = write_release(DEVEL_RELEASE)
    loaded = load_release(manifest)
    lock = load_lock(lock_path(manifest))
    assert lock is not None
    rendered = {image.spec.name: image for image in
                render_release(loaded, plan_release(loaded), lock)}["jax-devel"]
    home = "/opt/venv/lib/python3.13/site-packages/nvidia/cu13"
    assert f'ENV CUDA_HOME="{home}"' in rendered.dockerfile
    assert f"ENV PATH={home}/bin:$PATH" in rendered.dockerfile
    assert f"ln -sfn libcudart.so.13 {home}/lib/libcudart.so" in rendered.dockerfile
    assert sum(line.startswith("FROM ") for line in rendered.dockerfile.splitlines()) == 1
    expect = json.loads(rendered.files["expect/30-devel.json"])
    assert expect["image"] == "jax-devel"
    assert expect["devel"]["cuda_home"] == home and expect["devel"]["nvcc"] == "13.2.86"


def test_a_devel_row_needs_a_stack(write_release: WriteRelease) -> None:
    text = DEVEL_RELEASE.replace('  - framework: jax\n    version: "0.12.0"\n    stack: cu13\n',
                                 '  - framework: pytensor\n    version: "2.30.3"\n')
    found = problems(write_release, text)
    assert len(found) == 1 and found[0].endswith(
        "images[1].devel: a devel variant needs a CUDA stack: nvcc and the headers come "
        "from its wheels")


def test_a_stack_without_the_compiler_is_named_with_what_it_lacks(
        write_release: WriteRelease) -> None:
    text = DEVEL_RELEASE.replace('      nvidia-nvvm: "13.2.86"\n', "")
    found = problems(write_release, text)
    assert len(found) == 1 and "images[1].devel: stack cu13 lacks nvidia-nvvm: add them to " \
        "cuda_stacks.cu13.devel_wheels" in found[0]


def test_devel_wheels_never_repeat_the_runtime_s(write_release: WriteRelease) -> None:
    text = DEVEL_RELEASE.replace('      nvidia-cuda-cccl: "13.2.86"\n',
                                 '      nvidia-cuda-cccl: "13.2.86"\n'
                                 '      nvidia-cuda-runtime: "13.2.86"\n')
    found = problems(write_release, text)
    assert any("devel_wheels repeat wheels (one copy of CUDA): ['nvidia-cuda-runtime']" in line
               for line in found)


def test_a_row_named_like_another_s_devel_image_is_refused(write_release: WriteRelease) -> None:
    text = DEVEL_RELEASE + '  - framework: jax\n    name: jax-devel\n    version: "0.12.0"\n' \
        "    stack: cu13\n"
    found = problems(write_release, text)
    assert len(found) == 1 and found[0].endswith("images[2].name: image name 'jax-devel' is taken")
