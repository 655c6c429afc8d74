"""Several OS bases and CUDA stacks in one release: who stands on what."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.contexts import render_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import fake_lock

pytestmark = pytest.mark.unit

MIXED = GOOD_RELEASE.replace('''cuda_stacks:
  cu13:''', '''cuda_stacks:
  old:
    cuda: "13.0"
    base: debian-bookworm
    wheels:
      nvidia-cuda-runtime: "13.0.96"
    libraries:
      cudart: nvidia-cuda-runtime
  cu13:''') + '''  - framework: pytorch
    name: torch-old
    version: "2.9.0"
    stack: old
  - framework: jax
    name: jax-cpu
    version: "0.10.2"
    variant: cpu
    base: debian-bookworm
'''


def test_each_image_stands_on_its_base(write_release: WriteRelease, project: Path) -> None:
    # Let this test's JAX run on bookworm's Python 3.11, as JAX 0.10 did.
    definition = project / "frameworks" / "jax" / "framework.yaml"
    definition.write_text(definition.read_text().replace('">=3.12"', '">=3.11"'))
    plan = plan_release(load_release(write_release(MIXED)))
    parents = {spec.name: spec.parent for spec in plan.images}
    assert parents == {"base": None, "base-debian-bookworm": None,
                       "cuda-cu13": "base", "cuda-old": "base-debian-bookworm",
                       "pytorch": "cuda-cu13", "jax": "cuda-cu13",
                       "torch-old": "cuda-old", "jax-cpu": "base-debian-bookworm"}
    assert plan.os_refs == {"debian-trixie": "ngc-local/os-debian-trixie:13",
                            "debian-bookworm": "ngc-local/os-debian-bookworm:12"}


def test_python_is_checked_against_the_images_own_base(write_release: WriteRelease) -> None:
    with pytest.raises(InputError) as caught:
        load_release(write_release(MIXED))
    assert [p.field for p in caught.value.problems] == ["images[3].framework"]
    assert "jax needs Python >=3.12, base debian-bookworm has 3.11" in str(
        caught.value.problems[0])


def test_labels_and_expectations_follow_the_base(write_release: WriteRelease) -> None:
    text = MIXED.replace('name: jax-cpu\n    version: "0.10.2"\n    variant: cpu\n'
                         '    base: debian-bookworm', 'name: jax-cpu\n    version: "0.12.0"\n'
                         '    variant: cpu')
    loaded = load_release(write_release(text))
    plan = plan_release(loaded)
    rendered = {r.spec.name: r for r in render_release(loaded, plan, fake_lock(loaded, plan))}
    old = rendered["torch-old"]
    assert old.spec.labels["org.ngc-builder.python"] == "3.11"
    assert old.spec.labels["org.ngc-builder.os"] == "debian-bookworm"
    assert b'"python": "3.11"' in rendered["base-debian-bookworm"].files["expect/00-base.json"]
    assert "FROM ngc-local/os-debian-bookworm:12\n" in rendered["base-debian-bookworm"].dockerfile
    assert f"FROM {rendered['base'].local_ref}\n" in rendered["jax-cpu"].dockerfile


def test_a_cuda_framework_needs_a_stack(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('    version: "2.15.0"\n    stack: cu13\n',
                                '    version: "2.15.0"\n')
    with pytest.raises(InputError) as caught:
        load_release(write_release(text))
    assert [str(p) for p in caught.value.problems] == [
        "releases/26.11.yaml:21: images[0].stack: pytorch needs a CUDA 13 stack"]


def test_a_stack_image_cannot_pick_another_base(write_release: WriteRelease) -> None:
    entry = '    version: "2.15.0"\n    stack: cu13\n'
    text = GOOD_RELEASE.replace(entry, entry + "    base: debian-bookworm\n")
    with pytest.raises(InputError) as caught:
        load_release(write_release(text))
    assert "images[0].base: an image on stack cu13 uses that stack's base" in str(
        caught.value.problems[0])


def test_unknown_base_of_a_stack(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('    cuda: "13.2"\n', '    cuda: "13.2"\n    base: beos\n')
    with pytest.raises(InputError) as caught:
        load_release(write_release(text))
    assert [str(p) for p in caught.value.problems] == [
        "releases/26.11.yaml:7: cuda_stacks.cu13.base: no base-images/beos.yaml"]
