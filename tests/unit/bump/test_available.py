"""Available versions: final releases only, newest first, asked once, for the image's target."""

from __future__ import annotations

import pytest

from ngc_builder.bump.available import MemoIndex, _command, final_releases
from ngc_builder.manifest.wheels import Target

pytestmark = pytest.mark.unit

TARGET = Target("3.13", "2.41")


def test_final_releases_drop_pre_dev_and_junk_and_sort_newest_first() -> None:
    listed = ["2.9.1", "2.10.0", "2.11.0rc1", "2.11.0.dev20260101", "2.10.0.post1", "nonsense"]
    assert final_releases(listed) == ["2.10.0.post1", "2.10.0", "2.9.1"]


def test_memo_index_asks_once_per_name_and_target() -> None:
    asked: list[tuple[str, Target]] = []

    def inner(name: str, target: Target) -> list[str]:
        asked.append((name, target))
        return ["1.0"]

    memo = MemoIndex(inner)
    assert memo("torch", TARGET) == memo("torch", TARGET) == ["1.0"]
    memo("torch", Target("3.11", "2.36"))
    assert len(asked) == 2


def test_pip_is_asked_for_the_image_target_and_wheels_only() -> None:
    command = _command("torch", TARGET)
    assert command[2:6] == ["pip", "index", "versions", "torch"]
    for flag in ("--only-binary=:all:", "--ignore-requires-python", "--json"):
        assert flag in command
    assert command[command.index("--python-version") + 1] == "3.13"
    assert "manylinux_2_41_x86_64" in command and "manylinux2014_x86_64" in command
