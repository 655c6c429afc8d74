"""A lock is stale for an image when what it was resolved from changed: each image named,
with what changed, and everything stacked on it."""

from __future__ import annotations

import pytest

from ngc_builder.lock.apt import AptResolution
from ngc_builder.lock.inputs import layer_apt_sets, minus_parents, stale_problems, with_locked_os
from ngc_builder.lock.models import OsLock, lock_path
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import deb, fake_lock

pytestmark = pytest.mark.unit


def messages(write_release: WriteRelease, text: str, **lock_changes: object) -> list[str]:
    """Lock GOOD_RELEASE, then check `text` against that lock."""
    locked = load_release(write_release(GOOD_RELEASE, lock=False))
    lock = fake_lock(locked, plan_release(locked))
    for name, image in lock_changes.items():
        lock.images[name] = image  # type: ignore[assignment]
    loaded = load_release(write_release(text, lock=False))
    problems = stale_problems(loaded, plan_release(loaded), lock, lock_path(loaded.manifest))
    return [str(problem) for problem in problems]


def test_a_fresh_lock_has_no_problem(write_release: WriteRelease) -> None:
    assert messages(write_release, GOOD_RELEASE) == []


def test_a_changed_requirement_names_the_image_and_the_change(
        write_release: WriteRelease) -> None:
    found = messages(write_release, GOOD_RELEASE.replace('"2.15.0"', '"2.16.0"'))
    assert found == ["releases/26.11.lock.json:1: images.pytorch: lock is stale "
                     "(pip: -torch==2.15.0 +torch==2.16.0): lock again"]


def test_a_changed_stack_is_named(write_release: WriteRelease) -> None:
    found = messages(write_release, GOOD_RELEASE.replace('"13.2.86"', '"13.2.87"', 1))
    assert [line.split(": ")[1] for line in found] == ["images.cuda-cu13"]
    assert "pip: -nvidia-cuda-runtime==13.2.86 +nvidia-cuda-runtime==13.2.87" in found[0]


def test_a_relocked_base_makes_its_children_stale(write_release: WriteRelease) -> None:
    locked = load_release(write_release(GOOD_RELEASE, lock=False))
    base = fake_lock(locked, plan_release(locked)).images["base"]
    moved = base.model_copy(update={"apt": [deb("python3", "3.13.6-1")]})
    found = messages(write_release, GOOD_RELEASE, base=moved)
    assert [line.split(": ")[1] for line in found] == [
        "images.cuda-cu13", "images.pytorch", "images.jax"]
    assert "below: -base " in found[0]


def test_an_image_left_out_or_gone_is_named(write_release: WriteRelease) -> None:
    without_jax = GOOD_RELEASE[: GOOD_RELEASE.index("  - framework: jax")]
    assert messages(write_release, without_jax) == [
        "releases/26.11.lock.json:1: images.jax: locked but not in the manifest: lock again"]
    locked = load_release(write_release(without_jax, lock=False))
    lock = fake_lock(locked, plan_release(locked))
    loaded = load_release(write_release(GOOD_RELEASE, lock=False))
    found = stale_problems(loaded, plan_release(loaded), lock, lock_path(loaded.manifest))
    assert [str(p) for p in found] == [
        "releases/26.11.lock.json:1: images.jax: not in the lock: lock again"]


def test_a_locked_os_names_its_image_and_goes_stale_with_its_suite(
        write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE, lock=False))
    plan = plan_release(loaded)
    entry = OsLock(suite="trixie", epoch=1763856000, apt=[deb("libc6", "2.41-12")])
    lock = fake_lock(loaded, plan).model_copy(update={"os": {"debian-trixie": entry}})
    locked = with_locked_os(plan, lock)
    assert locked.os_refs["debian-trixie"] == (
        f"ngc-local/os-debian-trixie:13-{entry.digest()[:12]}")
    moved = entry.model_copy(update={"apt": [deb("libc6", "2.41-13")]})
    assert moved.digest() != entry.digest()
    assert stale_problems(loaded, plan, lock, lock_path(loaded.manifest)) == []
    wrong = lock.model_copy(update={"os": {"debian-trixie": entry.model_copy(
        update={"suite": "sid"})}})
    found = [str(p) for p in stale_problems(loaded, plan, wrong, lock_path(loaded.manifest))]
    assert found == ["releases/26.11.lock.json:1: os.debian-trixie: lock is stale (suite sid "
                     "locked, trixie wanted): lock again"]


def test_a_framework_on_a_stack_resolves_after_the_stack_s_packages_and_locks_only_its_own(
    write_release: WriteRelease,
) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    plan = plan_release(loaded)
    sets = layer_apt_sets(loaded, plan, "debian-trixie")
    stack = list(loaded.bases["debian-trixie"].cuda_apt_packages)
    assert sets["cuda-cu13"] == stack and "openmpi-bin" in stack
    assert sets["pytorch"] == [*stack, "libquadmath0"]  # the stack's first, then its own
    assert sets["jax"] == stack
    resolved = AptResolution([deb("libc6")], {
        "cuda-cu13": [deb("openmpi-bin"), deb("libucx0")],
        "pytorch": [deb("openmpi-bin"), deb("libucx0"), deb("libquadmath0")],
        "jax": [deb("openmpi-bin"), deb("libucx0")]})
    own = minus_parents(plan, resolved).layers
    assert own == {"cuda-cu13": [deb("openmpi-bin"), deb("libucx0")],
                   "pytorch": [deb("libquadmath0")], "jax": []}
