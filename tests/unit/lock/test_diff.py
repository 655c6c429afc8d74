"""Lock changes as a reviewer reads them."""

from __future__ import annotations

import pytest

from ngc_builder.lock.diff import package_changes, release_changes, summary
from ngc_builder.lock.models import ImageLock, ReleaseLock
from tests.unit.locks import deb, wheel

pytestmark = pytest.mark.unit


def test_moved_added_and_removed_packages() -> None:
    old = ImageLock(inputs={}, pip=[wheel("numpy", "2.3.4"), wheel("six", "1.17.0")],
                    apt=[deb("libgomp1", "14.2.0-19")])
    new = ImageLock(inputs={}, pip=[wheel("numpy", "2.3.5"), wheel("ml-dtypes", "0.6.0")],
                    apt=[deb("libgomp1", "14.2.0-19")])
    assert package_changes(old, new) == ["numpy 2.3.4 -> 2.3.5", "+ml-dtypes 0.6.0",
                                         "-six 1.17.0"]
    assert package_changes(None, ImageLock(inputs={}, apt=[deb("python3", "3.13")])) == [
        "+deb:python3 3.13"]


def test_release_changes_leave_unchanged_images_out() -> None:
    same = ImageLock(inputs={}, pip=[wheel("jax", "0.12.0")])
    old = ReleaseLock(release="26.11", images={"jax": same})
    new = ReleaseLock(release="26.12", images={"jax": same, "torch": ImageLock(
        inputs={}, pip=[wheel("torch", "2.16.0")])})
    assert release_changes(old, new) == {"torch": ["+torch 2.16.0"]}


def test_summary_says_how_many_more() -> None:
    assert summary(["a", "b", "c"], limit=2) == "a, b and 1 more"
    assert summary(["a"]) == "a"
