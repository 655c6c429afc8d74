"""Another platform's lock: resolved for its machine at the host platform's versions, written
under `platforms.<os/arch>`, checked like the host's (stale, missing, not wanted), and a lock
of the host's platform alone keeps its bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.lock.diff import platform_changes
from ngc_builder.lock.foreign import ForeignResolution, foreign_script
from ngc_builder.lock.inputs import stale_problems
from ngc_builder.lock.models import (
    PipPackage,
    PlatformLock,
    dump_lock,
    load_lock,
)
from ngc_builder.lock.pip import ResolutionError
from ngc_builder.lock.platforms import lock_platforms, platform_errors
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import ReleasePlan, plan_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import (
    arm,
    fake_lock,
    foreign_apt,
    host_lock,
    pinned,
    wheel,
    write_platform_lock,
)

pytestmark = pytest.mark.unit

ARM_JAX = GOOD_RELEASE.replace('    version: "0.12.0"\n',
                               '    version: "0.12.0"\n    platforms: [linux/amd64, linux/arm64]\n')


def test_shared_layers_ship_every_platform_of_the_images_above(
        write_release: WriteRelease) -> None:
    plan = plan_release(load_release(write_release(ARM_JAX, lock=False)))
    platforms = {spec.name: spec.platforms for spec in plan.images}
    assert platforms == {"base": ("linux/amd64", "linux/arm64"),
                         "cuda-cu13": ("linux/amd64", "linux/arm64"),
                         "pytorch": ("linux/amd64",), "jax": ("linux/amd64", "linux/arm64")}


def test_arm64_wheels_are_resolved_for_aarch64_at_the_host_versions(
        write_release: WriteRelease) -> None:
    loaded = load_release(write_release(ARM_JAX, lock=False))
    plan = plan_release(loaded)
    lock = host_lock(loaded, plan)
    asked: dict[str, tuple[Target, list[str], list[str]]] = {}

    def pip_of(requirements: list[str], target: Target, parent: list[PipPackage],
               pins: list[PipPackage]) -> list[PipPackage]:
        asked[requirements[0]] = (target, [p.name for p in parent], [p.version for p in pins])
        return [w.model_copy(update={"file": w.file.replace("any", "aarch64")})
                for w in pinned(requirements, target, parent)]

    found = lock_platforms(loaded, plan, lock, foreign_apt(loaded), lambda _: None,
                           pip_of)["linux/arm64"]
    assert sorted(found.images) == ["base", "cuda-cu13", "jax"]
    target, parent, pins = asked["jax[cuda13]==0.12.0"]
    assert target == Target("3.13", "2.41", "aarch64")
    assert parent == [p.name for p in found.images["cuda-cu13"].pip]
    assert pins == [p.version for p in lock.images["jax"].pip]
    assert found.os["debian-trixie"].apt == [arm("libc6")]
    assert found.os["debian-trixie"].epoch == 86400
    assert found.images["jax"].inputs["target"] == ["python 3.13", "glibc 2.41", "aarch64"]
    assert found.images["jax"].inputs["versions"][0].startswith("linux/amd64 ")


def test_a_platform_that_cannot_resolve_fails_the_lock_by_name(
        write_release: WriteRelease) -> None:
    loaded = load_release(write_release(ARM_JAX, lock=False))
    plan = plan_release(loaded)

    def pip_of(requirements: list[str], target: Target, parent: list[PipPackage],
               pins: list[PipPackage]) -> list[PipPackage]:
        raise ResolutionError("ERROR: No matching distribution found for jaxlib")

    lock = host_lock(loaded, plan)
    lock = lock.model_copy(update={"platforms": lock_platforms(
        loaded, plan, lock, foreign_apt(loaded), lambda _: None, pip_of)})
    errors = [str(error) for error in platform_errors(plan, lock)]
    assert errors[0] == ("cuda-cu13: lock linux/arm64: pip: ERROR: No matching distribution "
                         "found for jaxlib")
    assert errors[1] == "jax: lock linux/arm64: cuda-cu13 could not be locked for linux/arm64"


def _written(write_release: WriteRelease, text: str) -> tuple[LoadedRelease, ReleasePlan, Path]:
    manifest = write_release(text, lock=False)
    loaded = load_release(manifest)
    return loaded, plan_release(loaded), write_platform_lock(manifest)


def test_the_platform_lock_is_written_read_back_and_fresh(write_release: WriteRelease) -> None:
    loaded, plan, path = _written(write_release, ARM_JAX)
    lock = load_lock(path)
    assert lock is not None and dump_lock(lock) == path.read_text()
    assert sorted(lock.platforms["linux/arm64"].images) == ["base", "cuda-cu13", "jax"]
    assert stale_problems(loaded, plan, lock, path) == []


def test_a_host_lock_that_moved_makes_the_other_platform_stale(
        write_release: WriteRelease) -> None:
    loaded, plan, path = _written(write_release, ARM_JAX)
    lock = load_lock(path)
    assert lock is not None
    moved = lock.images["jax"].model_copy(update={"pip": [wheel("jax", "0.12.1")]})
    lock = lock.model_copy(update={"images": {**lock.images, "jax": moved}})
    problems = stale_problems(loaded, plan, lock, path)
    assert [problem.field for problem in problems] == ["platforms.linux/arm64.images.jax"]
    assert "versions: -linux/amd64 " in problems[0].message
    assert problems[0].line == path.read_text().splitlines().index(
        '        "jax": {') + 1


def test_a_missing_or_unwanted_platform_entry_is_named(write_release: WriteRelease) -> None:
    loaded, _, path = _written(write_release, ARM_JAX)
    lock = load_lock(path)
    assert lock is not None
    plan = plan_release(loaded)
    bare = lock.model_copy(update={"platforms": {}})
    missing = stale_problems(loaded, plan, bare, path)
    assert {p.field: p.message for p in missing}["platforms.linux/arm64.images.jax"] == (
        "not locked for linux/arm64: lock again")
    amd64_only = load_release(write_release(GOOD_RELEASE, lock=False))
    unwanted = stale_problems(amd64_only, plan_release(amd64_only), lock, path)
    assert "locked for linux/arm64 but the manifest does not ship it there" in \
        unwanted[0].message


def test_a_host_only_lock_has_no_platforms_key(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE, lock=False))
    assert '"platforms"' not in dump_lock(fake_lock(loaded, plan_release(loaded)))


def test_the_foreign_resolver_tells_apt_the_architecture_and_its_own_status() -> None:
    script = foreign_script("arm64", ["python3"], [["python3", "libgomp1"]])
    assert script.count("APT::Architecture=arm64") == script.count("apt-get") + \
        script.count("apt-cache")
    assert "Dir::State::status=/tmp/ngc-empty-status" in script  # the OS closure, from nothing
    assert "Status: install ok installed" in script
    assert "'libgomp1'" in script or " libgomp1" in script


def test_what_moved_on_another_platform_is_reported_by_image(
        write_release: WriteRelease) -> None:
    _, _, path = _written(write_release, ARM_JAX)
    lock = load_lock(path)
    assert lock is not None
    arm = lock.platforms["linux/arm64"]
    moved = arm.images["jax"].model_copy(update={"pip": [wheel("jax", "0.12.1")]})
    newer = lock.model_copy(update={"platforms": {"linux/arm64": arm.model_copy(
        update={"images": {**arm.images, "jax": moved}})}})
    changes = platform_changes(lock, newer)
    assert list(changes) == ["linux/arm64"] and list(changes["linux/arm64"]) == ["jax"]
    assert "jax 0.12.0 -> 0.12.1" in changes["linux/arm64"]["jax"]
    assert platform_changes(lock, lock) == {}


def test_lock_only_keeps_the_other_images_and_the_os_of_each_platform(
        write_release: WriteRelease) -> None:
    _, _, path = _written(write_release, ARM_JAX)
    previous = load_lock(path)
    assert previous is not None
    loaded = load_release(path.with_name("26.11.yaml"))
    plan = plan_release(loaded)
    before = previous.platforms["linux/arm64"]
    kept = {"linux/arm64": PlatformLock(
        images={name: image for name, image in before.images.items() if name != "jax"},
        os=dict(before.os))}
    resolved: list[str] = []

    def pip_of(requirements: list[str], target: Target, parent: list[PipPackage],
               pins: list[PipPackage]) -> list[PipPackage]:
        resolved.append(requirements[0])
        return pinned(requirements, target, parent)

    def no_os(base_name: str, platform: str) -> ForeignResolution:
        found = foreign_apt(loaded)(base_name, platform)
        return ForeignResolution([arm("libc6-other")], found.apt)

    again = lock_platforms(loaded, plan, previous, no_os, lambda _: None, pip_of, kept)
    assert resolved == ["jax[cuda13]==0.12.0"]  # only the image asked for
    assert again["linux/arm64"].images["base"] == before.images["base"]
    assert again["linux/arm64"].os == before.os  # the OS as it was locked


def test_a_lock_naming_a_platform_it_cannot_hold_is_refused_by_line(
        write_release: WriteRelease) -> None:
    _, _, path = _written(write_release, ARM_JAX)
    path.write_text(path.read_text().replace('"linux/arm64": {', '"../../linux/evil": {'))
    with pytest.raises(InputError) as caught:
        load_lock(path)
    problem = caught.value.problems[0]
    assert problem.field == "platforms"
    assert "'../../linux/evil' is not a platform a lock holds" in problem.message


def test_a_platform_no_image_ships_is_stale_even_when_empty(
        write_release: WriteRelease) -> None:
    _, _, path = _written(write_release, ARM_JAX)
    lock = load_lock(path)
    assert lock is not None
    empty = lock.model_copy(update={"platforms": {"linux/arm64": PlatformLock(images={})}})
    amd64_only = load_release(write_release(GOOD_RELEASE, lock=False))
    problems = stale_problems(amd64_only, plan_release(amd64_only), empty, path)
    assert [(p.field, p.message) for p in problems] == [
        ("platforms.linux/arm64", "no image of the manifest ships linux/arm64: lock again")]
