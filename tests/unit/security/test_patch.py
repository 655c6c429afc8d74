"""A patch release from security fixes: only the fixed .debs move (each platform's own), every
image's inputs are made again so that the lock is not stale, a fix that needs more than the
lock holds is refused, and the manifest says `patch: N` and, only when asked, that the monthly
tag follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.lock.inputs import stale_problems
from ngc_builder.lock.models import OsLock, ReleaseLock, dump_lock, load_lock, lock_path
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.security.patch import (
    patch_id,
    patched_lock,
    patched_manifest,
    refuse_unmet,
    unmet,
)
from ngc_builder.security.scan import Held, Update
from ngc_builder.security.suite import SuitePackage
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.lock.debs import write_deb
from tests.unit.lock.test_platforms import ARM_JAX
from tests.unit.locks import host_lock, sha, write_platform_lock
from tests.unit.security.test_scan import deb

pytestmark = pytest.mark.unit


def fix(name: str, locked: str, fixed: str, arch: str = "amd64") -> Update:
    return Update(Held("trixie-security", arch, name, locked, ("debian-trixie",)),
                  SuitePackage(name, fixed, arch, name, f"pool/updates/main/{name[0]}/{name}/"
                               f"{name}_{fixed}_{arch}.deb", sha(name + fixed), 10))


def test_only_the_fixed_debs_move_and_the_lock_is_not_stale(write_release: WriteRelease) -> None:
    manifest = write_release(ARM_JAX, lock=False)
    lock_file = write_platform_lock(manifest)
    loaded = load_release(manifest)
    plan = plan_release(loaded)
    lock = load_lock(lock_file)
    assert lock is not None
    base_package = lock.images["base"].apt[0]
    found = [fix("libc6", "1.0", "1.0+deb13u1"), fix(base_package.name, "1.0", "1.0+deb13u2")]
    patched = patched_lock(loaded, plan, lock, found, "26.11.1")
    assert patched.release == "26.11.1"
    assert [(p.name, p.version, p.file.split("/")[1]) for p in patched.os["debian-trixie"].apt] \
        == [("libc6", "1.0+deb13u1", "updates")]
    assert patched.images["base"].apt[0].version == "1.0+deb13u2"
    assert patched.images["base"].apt[1:] == lock.images["base"].apt[1:]
    arm64 = patched.platforms["linux/arm64"]
    assert arm64.os["debian-trixie"].apt == lock.platforms["linux/arm64"].os["debian-trixie"].apt
    assert patched.images["jax"].apt == lock.images["jax"].apt
    assert patched.images["jax"].inputs["below"] != lock.images["jax"].inputs["below"]
    lock_file.write_text(dump_lock(patched))
    assert stale_problems(loaded, plan, patched, lock_file) == []
    old_inputs = patched.model_copy(update={"images": {
        name: image.model_copy(update={"inputs": lock.images[name].inputs})
        for name, image in patched.images.items()}})
    assert [p.field for p in stale_problems(loaded, plan, old_inputs, lock_file)] == [
        "images.cuda-cu13", "images.pytorch", "images.jax"]  # what the inputs are made for


def test_the_next_patch_id_counts_from_the_manifests_own(write_release: WriteRelease) -> None:
    monthly = load_release(write_release(ARM_JAX, lock=False))
    assert patch_id(monthly) == "26.11.1"
    patched = load_release(write_release(ARM_JAX.replace('release: "26.11"\n',
                                                         'release: "26.11"\npatch: 1\n'),
                                         name="26.11.1.yaml", lock=False))
    assert patch_id(patched) == "26.11.2"
    assert (patched.release.release_id, plan_release(patched).release) == ("26.11.1", "26.11.1")
    assert {spec.release_tag for spec in plan_release(patched).images} == {"26.11.1-py3"}
    assert {spec.tag for spec in plan_release(patched).images} == {"26.11-py3"}  # contents


def test_the_manifest_says_the_patch_and_the_monthly_tag_moves_only_when_asked() -> None:
    text = '# why\nrelease: "26.11"  # the month\nregistry: r\naliases: [latest]\n'
    once = patched_manifest(text, 1, follow=False, release="26.11")
    assert once.splitlines()[:2] == ["# why", 'release: "26.11"  # the month']
    assert once.splitlines()[2].split() == ["patch:", "1", "#", "security", "fixes", "between",
                                            "months:", "ngc-builder", "security", "--patch"]
    assert "26.11-py3" not in once
    followed = patched_manifest(once, 2, follow=True, release="26.11")
    assert "patch: 2" in followed and "aliases: [latest, 26.11-py3]" in followed
    assert "26.11-py3" not in patched_manifest(followed, 3, follow=False, release="26.11")


def test_a_fix_that_needs_more_than_the_lock_holds_is_refused(tmp_path: Path) -> None:
    needs = write_deb(tmp_path / "needs.deb", "Package: libssl3\nDepends: libc6 (>= 2.41), "
                      "libzstd1 (>= 1.5) | libzstd-compat, unknown-package (>= 9)\n")
    found = [fix("libssl3", "3.0", "3.1")]

    def holding(libc6: str) -> ReleaseLock:
        return ReleaseLock(release="26.12", images={}, os={"debian-trixie": OsLock(
            suite="trixie", epoch=1, apt=[deb("libc6", libc6), deb("libzstd1", "1.5.7")])})

    assert unmet(holding("2.41"), found, lambda _package: needs, {}) == []
    problems = unmet(holding("2.36"), found, lambda _package: needs, {})
    assert problems == ["libssl3 3.1 needs libc6 (>= 2.41); the lock holds 2.36"]
    with pytest.raises(InputError, match="relock with `ngc-builder lock` instead of a patch"):
        refuse_unmet(problems, lock_path(tmp_path / "26.12.1.yaml"))


@pytest.mark.parametrize("flag", ["follow", "force"])
def test_follow_or_force_without_patch_is_refused_before_anything_is_read(
        tmp_path: Path, flag: str) -> None:
    from ngc_builder.commands.security import SecurityOptions, security_command

    options = SecurityOptions(tmp_path / "missing.yaml", **{flag: True})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=f"--{flag}: only with --patch"):
        security_command(options)


def test_a_patch_keeps_the_key_of_every_image_that_holds_no_fix(
        write_release: WriteRelease) -> None:
    """Only what holds a fixed .deb, and what stands on it, is built again: the stack's own
    .deb moves, so base keeps its key (the release adopts it) and the rest get new ones."""
    from tests.unit.render.test_content_keys import _keys_of

    monthly = write_release(GOOD_RELEASE, lock=False)
    loaded = load_release(monthly)
    plan = plan_release(loaded)
    lock = host_lock(loaded, plan)
    lock_path(monthly).write_text(dump_lock(lock))
    package = lock.images["cuda-cu13"].apt[0]
    patched = patched_lock(loaded, plan, lock, [fix(package.name, package.version,
                                                     f"{package.version}+deb13u1")], "26.11.1")
    patch = monthly.with_name("26.11.1.yaml")
    patch.write_text(patched_manifest(monthly.read_text(), 1, follow=False, release="26.11"))
    lock_path(patch).write_text(dump_lock(patched))
    before, after = _keys_of(monthly), _keys_of(patch)
    assert after["base"] == before["base"]
    assert all(after[name] != before[name] for name in ("cuda-cu13", "pytorch", "jax"))
