"""Content keys change when, and only when, an input changes; `changes` says which."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ngc_builder.lock.models import load_lock
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.content_keys import changes, content_keys, image_key
from ngc_builder.render.contexts import RenderedImage, render_release
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import fake_lock

pytestmark = pytest.mark.unit


@pytest.fixture
def rendered(write_release: WriteRelease) -> dict[str, RenderedImage]:
    loaded = load_release(write_release(GOOD_RELEASE))
    plan = plan_release(loaded)
    lock = fake_lock(loaded, plan)
    return {image.spec.name: image for image in render_release(loaded, plan, lock)}


def with_file(image: RenderedImage, name: str, content: bytes) -> RenderedImage:
    return dataclasses.replace(image, files={**image.files, name: content})


def test_keys_are_stable_and_chain_through_parents(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    plan = plan_release(loaded)
    first = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
    second = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
    keys, again = content_keys(loaded, plan, first), content_keys(loaded, plan, second)
    assert {n: k.key for n, k in keys.items()} == {n: k.key for n, k in again.items()}
    assert keys["jax"].parent == keys["cuda-cu13"].key
    assert keys["cuda-cu13"].parent == keys["base"].key
    assert len({k.key for k in keys.values()}) == len(keys)


def test_each_input_changes_the_key(rendered: dict[str, RenderedImage]) -> None:
    jax = rendered["jax"]
    key = image_key(jax, "parent-1")
    assert image_key(jax, "parent-1") == key
    assert image_key(jax, "parent-2").key != key.key
    assert image_key(with_file(jax, "requirements.txt", b"jax==0.12.1\n"), "parent-1").key \
        != key.key
    relabelled = dataclasses.replace(jax, spec=dataclasses.replace(
        jax.spec, labels={**jax.spec.labels, "org.ngc-builder.framework.version": "0.12.1"}))
    assert image_key(relabelled, "parent-1").key != key.key
    restyled = dataclasses.replace(jax, dockerfile=jax.dockerfile + "RUN true\n")
    assert image_key(restyled, "parent-1").key != key.key


def test_changes_name_the_input(rendered: dict[str, RenderedImage]) -> None:
    jax = rendered["jax"]
    before = image_key(jax, "p1").inputs()
    assert changes(before, image_key(jax, "p1"), "cuda-cu13") == []
    assert changes(None, image_key(jax, "p1"), "cuda-cu13") == ["no earlier build recorded"]
    bumped = image_key(with_file(jax, "requirements.txt", b"jax==0.12.1\n"), "p2")
    assert changes(before, bumped, "cuda-cu13") == [
        "parent cuda-cu13 changed", "requirements.txt changed"]
    runner = image_key(with_file(rendered["base"], "ngc_runner/new.py", b"x"), "os")
    base_before = image_key(rendered["base"], "os").inputs()
    assert changes(base_before, runner, None) == ["validation runner changed (1 files)"]
    relabelled = dataclasses.replace(jax, spec=dataclasses.replace(
        jax.spec, labels={**jax.spec.labels, "org.ngc-builder.framework.version": "0.12.1"}))
    assert changes(before, image_key(relabelled, "p1"), "cuda-cu13") == [
        "label org.ngc-builder.framework.version: 0.12.0 -> 0.12.1"]


def test_the_from_line_alone_is_not_reported_as_a_dockerfile_change(
    rendered: dict[str, RenderedImage], tmp_path: Path
) -> None:
    jax = rendered["jax"]
    moved = dataclasses.replace(jax, dockerfile=jax.dockerfile.replace(
        "FROM ngc-local/cuda-cu13", "FROM ngc-local/cuda-cu13-other"))
    assert moved.dockerfile != jax.dockerfile
    reasons = changes(image_key(jax, "p1").inputs(), image_key(moved, "p2"), "cuda-cu13")
    assert reasons == ["parent cuda-cu13 changed"]


def _keys_of(manifest: Path) -> dict[str, str]:
    prepared = prepare(manifest, None, stack_check=False)
    keys = content_keys(prepared.loaded, prepared.plan, prepared.rendered_by_name(),
                        prepared.lock)
    return {name: key.key for name, key in keys.items()}


def test_the_next_release_keeps_the_shared_layers_keys(write_release: WriteRelease) -> None:
    def keys(text: str) -> dict[str, str]:
        loaded = load_release(write_release(text))
        plan = plan_release(loaded)
        rendered = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
        return {name: key.key for name, key in content_keys(loaded, plan, rendered).items()}

    before = keys(GOOD_RELEASE)
    after = keys(GOOD_RELEASE.replace('release: "26.11"', 'release: "26.12"'))
    assert after["base"] == before["base"] and after["cuda-cu13"] == before["cuda-cu13"]
    assert after["jax"] != before["jax"]  # a framework image names its release


def test_26_12_relocked_the_os_and_so_every_layer_but_kept_every_cuda_wheel() -> None:
    # The bump moved jax and pytensor; 26.12 was then relocked whole for Debian's point
    # release (glibc 2.41-12+deb13u5, which the devel images' libc6-dev needs): a new OS lock
    # re-keys every layer on it, while the CUDA stacks' wheels stay exactly 26.11's.
    before = _keys_of(REPO / "releases" / "26.11.yaml")
    after = _keys_of(REPO / "releases" / "26.12.yaml")
    assert all(after[name] != before[name] for name in before)
    old, new = (load_lock(REPO / "releases" / f"{release}.lock.json") for release in
                ("26.11", "26.12"))
    assert old is not None and new is not None
    stacks = sorted(name for name in old.images if name.startswith("cuda-"))
    assert stacks == ["cuda-cu11", "cuda-cu12", "cuda-cu13"]
    assert all(new.images[name].pip == old.images[name].pip for name in stacks)
    assert new.os["debian-trixie"].suite == old.os["debian-trixie"].suite
    assert new.os["debian-trixie"].digest() != old.os["debian-trixie"].digest()


def test_a_base_key_moves_with_its_os_not_with_the_packages_of_layers_above(
        write_release: WriteRelease, project: Path) -> None:
    """The OS recipe keys the base; the apt lists of the layers above key those layers only
    (a -devel image's package list once re-keyed, so rebuilt, every image of its OS)."""
    def keys() -> dict[str, str]:
        loaded = load_release(write_release(GOOD_RELEASE))
        plan = plan_release(loaded)
        rendered = {i.spec.name: i for i in render_release(loaded, plan, fake_lock(loaded, plan))}
        return {name: key.key for name, key in content_keys(loaded, plan, rendered).items()}

    recipe = project / "base-images" / "debian-trixie.yaml"
    before = keys()
    recipe.write_text(recipe.read_text().replace("  - ninja-build\n", "  - ninja-build\n  - gdb\n"))
    assert keys() == before
    recipe.write_text(recipe.read_text().replace("  - openmpi-bin\n",
                                                 "  - openmpi-bin\n  - hwloc\n"))
    after_cuda = keys()
    assert after_cuda["base"] == before["base"] and after_cuda["cuda-cu13"] != before["cuda-cu13"]
    recipe.write_text(recipe.read_text().replace("variant: minbase", "variant: buildd"))
    assert keys()["base"] != before["base"]
