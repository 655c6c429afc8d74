"""`check` on a lock that records an image as unresolvable (its `error`) although the manifest
expects that image to work: refused in one line naming the error's line, exit 2. `lock` never
writes such a lock (it fails instead): it is a lock edited by hand, or one whose manifest lost
an expect_failure since; and the lock's content check skips an image with an error, so a
wheel appended to it would pass unseen."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from ngc_builder.lock.models import PipPackage, ReleaseLock, dump_lock, load_lock, lock_path
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import write_platform_lock

pytestmark = pytest.mark.unit

ERROR = "pip: ERROR: No matching distribution found for jaxlib==0.12.0"
EXPECTED_TO_FAIL = GOOD_RELEASE.replace(
    '    version: "0.12.0"\n', '    version: "0.12.0"\n    expect_failure: "no jaxlib wheel"\n')
ARM_JAX = GOOD_RELEASE.replace(
    '    version: "0.12.0"\n', '    version: "0.12.0"\n    platforms: [linux/amd64, linux/arm64]\n')


def check(manifest: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", str(manifest), "--offline"])
    return result.exit_code, result.stdout, result.stderr


def with_error(manifest: Path, image: str, error: str, platform: str | None = None) -> int:
    """The lock beside `manifest` with `error` recorded for `image` (on `platform`, else the
    host's); the line the error is written on."""
    path = lock_path(manifest)
    lock = load_lock(path)
    assert lock is not None
    path.write_text(dump_lock(_edited(lock, image, error, platform)), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(("        " if platform else "    ") + f'"{image}": {{')
    return next(n for n, line in enumerate(lines[start:], start + 1) if '"error": ' in line)


def _edited(lock: ReleaseLock, image: str, error: str, platform: str | None) -> ReleaseLock:
    closure = lock.of_platform(platform) if platform else lock
    images = {**closure.images, image: closure.images[image].model_copy(
        update={"error": error})}
    if platform is None:
        return lock.model_copy(update={"images": images})
    moved = lock.platforms[platform].model_copy(update={"images": images})
    return lock.model_copy(update={"platforms": {**lock.platforms, platform: moved}})


def test_an_error_on_an_image_expected_to_work_is_refused(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    line = with_error(manifest, "jax", ERROR)
    code, out, err = check(manifest)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"releases/26.11.lock.json:{line}: images.jax.error: jax could not be locked "
        f"('{ERROR}'), but the manifest expects it to work (no expect_failure): lock again"]


def test_an_error_hides_a_wheel_from_the_content_check_no_more(
        write_release: WriteRelease) -> None:
    """The attack: an error switches the closure check off for its image, so a wheel added
    beside it went unseen; the error itself is now refused."""
    manifest = write_release(GOOD_RELEASE)
    path = lock_path(manifest)
    lock = load_lock(path)
    assert lock is not None
    extra = PipPackage(name="six", version="1.16.0", file="six-1.16.0-py2.py3-none-any.whl",
                       sha256="1" * 64)
    jax = lock.images["jax"]
    lock = lock.model_copy(update={"images": {**lock.images, "jax": jax.model_copy(
        update={"pip": [*jax.pip, extra], "error": "x"})}})
    path.write_text(dump_lock(lock), encoding="utf-8")
    code, _, err = check(manifest)
    assert code == 2 and "images.jax.error: jax could not be locked ('x')" in err


def test_an_error_on_an_image_expected_to_fail_is_its_lock(write_release: WriteRelease) -> None:
    manifest = write_release(EXPECTED_TO_FAIL)
    with_error(manifest, "jax", ERROR)
    code, out, err = check(manifest)
    assert code == 0, err
    assert "lock fresh" in out


def test_an_error_on_a_generated_image_is_refused(write_release: WriteRelease) -> None:
    """The base and the CUDA stack have no manifest row, so nothing expects them to fail."""
    manifest = write_release(EXPECTED_TO_FAIL)
    line = with_error(manifest, "cuda-cu13", "E: Unable to locate package openmpi-bin")
    code, _, err = check(manifest)
    assert code == 2
    assert err.startswith(f"releases/26.11.lock.json:{line}: images.cuda-cu13.error: ")


def test_an_error_on_another_platform_is_refused(write_release: WriteRelease) -> None:
    manifest = write_release(ARM_JAX, lock=False)
    write_platform_lock(manifest)
    line = with_error(manifest, "jax", ERROR, "linux/arm64")
    code, _, err = check(manifest)
    assert code == 2
    assert err.splitlines() == [
        f"releases/26.11.lock.json:{line}: platforms.linux/arm64.images.jax.error: jax could "
        f"not be locked ('{ERROR}'), but the manifest expects it to work (no expect_failure): "
        "lock again"]


def test_a_hostile_error_is_one_short_line(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    with_error(manifest, "jax", "\x1b]2;pwned\x07\nlock fresh: ok" + "x" * 100_000)
    code, _, err = check(manifest)
    [line] = err.splitlines()
    assert code == 2 and "\x1b" not in line and len(line) < 500
    assert "images.jax.error: jax could not be locked ('\\x1b]2;pwned\\x07\\nlock fresh" in line
