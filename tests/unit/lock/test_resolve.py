"""The lock builder: parents first, their wheels kept for the children, failures recorded."""

from __future__ import annotations

import pytest

from ngc_builder.lock.models import PipPackage
from ngc_builder.lock.pip import ResolutionError
from ngc_builder.lock.resolve import build_lock, unexpected_errors
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.wheels import Target
from ngc_builder.plan.dag import plan_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import apt_of, pinned

pytestmark = pytest.mark.unit


def test_children_resolve_on_top_of_their_stack(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE, lock=False))
    plan = plan_release(loaded)
    parents: dict[str, list[str]] = {}

    def pip_of(requirements: list[str], target: Target,
               parent: list[PipPackage]) -> list[PipPackage]:
        parents[requirements[0]] = [p.name for p in parent]
        assert target == Target("3.13", "2.41")
        return pinned(requirements, target, parent)

    lock = build_lock(loaded, plan, apt_of(loaded, plan), lambda _: None, pip_of)
    assert parents["torch==2.15.0"] == [p.name for p in lock.images["cuda-cu13"].pip]
    assert [p.name for p in lock.images["base"].apt] == [
        "python3", "python3-venv", "ca-certificates", "libgomp1"]
    assert [p.name for p in lock.images["pytorch"].apt] == ["libquadmath0"]
    assert lock.images["jax"].inputs["pip"] == ["jax[cuda13]==0.12.0", "jaxlib==0.12.0"]


def test_a_stack_that_cannot_resolve_fails_its_frameworks(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE, lock=False))
    plan = plan_release(loaded)

    def pip_of(requirements: list[str], target: Target,
               parent: list[PipPackage]) -> list[PipPackage]:
        if any(line.startswith("nvidia-cudnn") for line in requirements):
            raise ResolutionError("ERROR: No matching distribution found for nvidia-cudnn-cu13")
        return pinned(requirements, target, parent)

    lock = build_lock(loaded, plan, apt_of(loaded, plan), lambda _: None, pip_of)
    assert lock.images["cuda-cu13"].error == (
        "pip: ERROR: No matching distribution found for nvidia-cudnn-cu13")
    assert lock.images["jax"].error == "cuda-cu13 could not be locked"
    errors = [str(e) for e in unexpected_errors(plan, lock)]
    assert errors[0].startswith("cuda-cu13: lock: pip:")
    assert errors[1:] == ["pytorch: lock: cuda-cu13 could not be locked",
                          "jax: lock: cuda-cu13 could not be locked"]


def test_an_expected_failure_may_stay_unlocked(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE + '    expect_failure: "no wheel for this Python"\n'
    loaded = load_release(write_release(text, lock=False))
    plan = plan_release(loaded)

    def pip_of(requirements: list[str], target: Target,
               parent: list[PipPackage]) -> list[PipPackage]:
        if requirements[0].startswith("jax"):
            raise ResolutionError("ERROR: No matching distribution found for jax")
        return pinned(requirements, target, parent)

    lock = build_lock(loaded, plan, apt_of(loaded, plan), lambda _: None, pip_of)
    assert lock.images["jax"].error is not None
    assert unexpected_errors(plan, lock) == []
