"""A lock's wheels are exactly the closure of each image's requirements through the locked
wheels' metadata: a wheel appended by hand, or one taken out, is named with its image."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from ngc_builder.lock.closure import (
    LockText,
    Metadata,
    applies,
    cached_requires,
    check_closure,
    wheel_requires,
)
from ngc_builder.lock.debian import DebControl
from ngc_builder.lock.models import PipPackage, ReleaseLock, dump_lock
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import plan_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import fake_lock, wheel

pytestmark = pytest.mark.unit
TARGET = Target("3.13", "2.41")


def checked(write_release: WriteRelease, edit: dict[str, list[PipPackage]] | None = None,
            requires: dict[str, tuple[str, ...] | None] | None = None) -> tuple[list[str],
                                                                                 list[str]]:
    loaded = load_release(write_release(GOOD_RELEASE))
    plan = plan_release(loaded)
    lock = fake_lock(loaded, plan)
    images = {name: image.model_copy(update={"pip": edit[name]}) if edit and name in edit
              else image for name, image in lock.images.items()}
    lock = ReleaseLock(release=lock.release, images=images, os=lock.os)
    answers = requires or {}
    metadata = Metadata(lambda package, target: answers.get(package.name, ()),
                        lambda package: DebControl(depends=(), provides=()))
    found = check_closure(loaded, plan, lock, plan.images, metadata,
                          LockText("26.11.lock.json", dump_lock(lock)))
    return [str(problem) for problem in found.problems], found.unchecked


def line_of(write_release: WriteRelease, edit: dict[str, list[PipPackage]], text: str,
            after: str = "") -> int:
    """The line of the edited lock that holds `text` (where a reviewer must look), the first
    after the line holding `after`."""
    loaded = load_release(write_release(GOOD_RELEASE))
    lock = fake_lock(loaded, plan_release(loaded))
    images = {name: image.model_copy(update={"pip": edit.get(name, image.pip)})
              for name, image in lock.images.items()}
    dumped = dump_lock(ReleaseLock(release=lock.release, images=images, os=lock.os))
    lines = dumped.splitlines()
    start = next(number for number, line in enumerate(lines) if after in line)
    return next(number for number, line in enumerate(lines, 1) if number > start and text in line)


def jax_wheels(write_release: WriteRelease) -> list[PipPackage]:
    loaded = load_release(write_release(GOOD_RELEASE))
    jax = fake_lock(loaded, plan_release(loaded)).images["jax"]
    return list(jax.pip)


def test_a_lock_as_resolved_is_its_closure(write_release: WriteRelease) -> None:
    assert checked(write_release) == ([], [])


def test_a_wheel_appended_by_hand_is_named_with_its_image(write_release: WriteRelease) -> None:
    added = [*jax_wheels(write_release), wheel("evil-helper", "1.0")]
    problems, _ = checked(write_release, {"jax": added})
    line = line_of(write_release, {"jax": added}, '"evil-helper"')
    assert line > 1
    assert problems == [f"26.11.lock.json:{line}: images.jax.pip: evil-helper==1.0 is locked, "
                        "but no requirement of the image and no locked wheel's metadata asks "
                        "for it (lock again)"]


def test_a_dependency_taken_out_or_at_another_version_is_named(
        write_release: WriteRelease) -> None:
    wheels = jax_wheels(write_release)
    first = wheels[0]
    edit = {"jax": [*wheels, wheel("numpy", "1.0")]}
    problems, _ = checked(write_release, edit,
                          {first.name: ("numpy>=2", "scipy; python_version >= '3.10'",
                                        "typing-extensions; python_version < '3.8'")})
    numpy_line = line_of(write_release, edit, '"numpy"')
    list_line = line_of(write_release, edit, '      "pip": [', after='    "jax": {')
    assert problems == [
        f"26.11.lock.json:{numpy_line}: images.jax.pip: numpy==1.0 is locked, but {first.name} "
        f"{first.version} asks for numpy>=2",
        f"26.11.lock.json:{list_line}: images.jax.pip: scipy; python_version >= \"3.10\" (asked "
        f"by {first.name} {first.version}) is not locked"]


def test_without_every_wheels_metadata_nothing_is_called_unasked(
        write_release: WriteRelease) -> None:
    wheels = jax_wheels(write_release)
    problems, unchecked = checked(write_release, {"jax": [*wheels, wheel("extra", "1.0")]},
                                  {wheels[0].name: None})
    assert problems == [] and unchecked == ["jax"]


def test_markers_are_read_for_the_images_target_and_its_extras() -> None:
    from packaging.markers import Marker

    assert applies(Marker("sys_platform == 'linux' and python_version >= '3.12'"), TARGET, set())
    assert not applies(Marker("sys_platform == 'win32'"), TARGET, set())
    assert not applies(Marker("extra == 'cuda'"), TARGET, set())
    assert applies(Marker("extra == 'cuda'"), TARGET, {"cuda"})


def test_requires_dist_is_read_from_the_wheel_itself(tmp_path: Path) -> None:
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as made:
        made.writestr("x-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: x\n"
                      "Version: 1.0\nRequires-Dist: numpy>=2\nRequires-Dist: rich; extra == "
                      "'cli'\n\nlong description\nRequires-Dist: not-a-header\n")
    assert wheel_requires(path) == ("numpy>=2", "rich; extra == 'cli'")
    (tmp_path / "bad.whl").write_bytes(b"not a zip")
    assert wheel_requires(tmp_path / "bad.whl") is None


def test_a_cached_wheels_requires_are_read_once_then_kept_by_its_hash(tmp_path: Path) -> None:
    path = tmp_path / "files" / ("a" * 64) / "x-1.0-py3-none-any.whl"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w") as made:
        made.writestr("x-1.0.dist-info/METADATA", "Name: x\nRequires-Dist: numpy>=2\n\n")
    package = PipPackage(name="x", version="1.0", file=path.name, sha256="a" * 64)
    memo = tmp_path / "memo"
    assert cached_requires(lambda _: path, memo)(package, TARGET) == ("numpy>=2",)
    kept = memo / f"{'a' * 64}.json"
    assert json.loads(kept.read_text())["requires"] == ["numpy>=2"]
    assert not list(path.parent.glob("*.json"))  # nothing beside the wheel, in the served tree
    path.write_bytes(b"not read again")  # the next run reads what was kept
    assert cached_requires(lambda _: path, memo)(package, TARGET) == ("numpy>=2",)


@pytest.mark.parametrize("memo_text", [
    '{"not": "a list"}', "[]", "not json",
    '{"format": 1, "sha256": "' + "b" * 64 + '", "requires": ["evil"]}',  # another wheel's
    '{"format": 0, "sha256": "' + "a" * 64 + '", "requires": ["evil"]}',  # an older format
])
def test_a_memo_that_does_not_hold_for_this_wheel_is_read_anew(tmp_path: Path,
                                                               memo_text: str) -> None:
    path = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as made:
        made.writestr("x-1.0.dist-info/METADATA", "Name: x\nRequires-Dist: numpy>=2\n\n")
    package = PipPackage(name="x", version="1.0", file=path.name, sha256="a" * 64)
    (tmp_path / "memo").mkdir()
    (tmp_path / "memo" / f"{'a' * 64}.json").write_text(memo_text)
    assert cached_requires(lambda _: path, tmp_path / "memo")(package, TARGET) == ("numpy>=2",)


def test_a_wheel_pip_locked_for_its_own_pythons_markers_is_explained_not_required(
        write_release: WriteRelease, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip reads markers with the Python it runs under: Jupyter's `overrides; python_version
    < "3.12"` came into 3.13 images locked under 3.11. Explained, never required."""
    from ngc_builder.lock import closure

    wheels = jax_wheels(write_release)
    asks: dict[str, tuple[str, ...] | None] = {
        wheels[0].name: ("overrides; python_version < '3.12'",)}
    monkeypatch.setattr(closure, "RESOLVER_PYTHON", "3.11")
    with_it = checked(write_release, {"jax": [*wheels, wheel("overrides", "7.7.0")]}, asks)
    assert with_it == ([], []) and checked(write_release, None, asks) == ([], [])
    monkeypatch.setattr(closure, "RESOLVER_PYTHON", "3.13")
    problems, _ = checked(write_release, {"jax": [*wheels, wheel("overrides", "7.7.0")]}, asks)
    assert [p.split(": ", 2)[2] for p in problems] == [
        "overrides==7.7.0 is locked, but no requirement of the image and no locked wheel's "
        "metadata asks for it (lock again)"]
