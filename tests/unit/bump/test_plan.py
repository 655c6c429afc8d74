"""A whole release bumped against recorded metadata: frameworks, stacks, hold-backs, lines."""

from __future__ import annotations

import json

import pytest

from ngc_builder.bump.describe import describe, to_json
from ngc_builder.bump.plan import BumpResult, FrameworkChange, plan_bump
from ngc_builder.manifest.load import load_release
from tests.conftest import WriteRelease
from tests.unit.bump.recorded import TORCH_216, Recorded, jax, jaxlib, plain, plugin
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit

# jax 0.13.0 wants a cuDNN newer than torch 2.16.0 pins.
JAX_013 = (jax("0.13.0"), jaxlib("0.13.0"),
           plugin("0.13.0", cudnn="nvidia-cudnn-cu13<10,>=9.30"))
TENSORRT = """\
  - framework: tensorrt
    version: "11.4.0.106"
    stack: cu13
    expect_failure: "a source stub"
"""


def bump(write_release: WriteRelease, recorded: Recorded, text: str = GOOD_RELEASE) -> BumpResult:
    return plan_bump(load_release(write_release(text)), recorded.index, recorded.fetch)


def test_nothing_newer_changes_nothing(write_release: WriteRelease) -> None:
    result = bump(write_release, Recorded())
    assert result.ok
    assert describe(result) == ["pytorch 2.15.0 unchanged (newest on its track)",
                                "jax 0.12.0 unchanged (newest on its track)"]


def test_torch_pins_move_the_stack_and_its_cuda(write_release: WriteRelease) -> None:
    result = bump(write_release, Recorded().add(*TORCH_216))
    assert result.ok
    assert describe(result) == [
        "pytorch 2.15.0 -> 2.16.0",
        "jax 0.12.0 unchanged (newest on its track)",
        "cu13 cuda 13.2 -> 13.3",
        "cu13 cuda-toolkit 13.2.2 -> 13.3.0 (torch 2.16.0 pins it)",
        "cu13 nvidia-cublas 13.4.1.3 -> 13.5.0.1 (torch 2.16.0 asks ==13.5.0.1.*, "
        "jax 0.12.0 asks >=13.0.0.19)",
        "cu13 nvidia-cuda-runtime 13.2.86 -> 13.3.20 (torch 2.16.0 asks ==13.3.20.*)",
        "cu13 nvidia-cudnn-cu13 9.26.0.51 -> 9.28.0.40 (torch 2.16.0 pins it)",
        "cu13 kept (no framework asks for them): nvidia-nccl-cu13 2.30.7",
    ]
    [stack] = result.stacks
    assert stack.wheels["nvidia-cudnn-cu13"] == "9.28.0.40"
    assert stack.wheels["nvidia-nvshmem-cu13"] == "3.7.2"  # jax's >=3.3.20 still admits it


def test_a_range_that_no_longer_admits_the_stack_takes_the_newest_inside(
    write_release: WriteRelease,
) -> None:
    recorded = Recorded().add(jax("0.12.1"), jaxlib("0.12.1"), plugin(
        "0.12.1", nvshmem="nvidia-nvshmem-cu13>=3.8"),
        *[plain("nvidia-nvshmem-cu13", v) for v in ("3.8.1", "3.9.0")])
    result = bump(write_release, recorded)
    assert "cu13 nvidia-nvshmem-cu13 3.7.2 -> 3.9.0 (jax 0.12.1 asks >=3.8)" in describe(result)


def test_a_conflict_holds_back_the_framework_that_caused_it(
    write_release: WriteRelease,
) -> None:
    result = bump(write_release, Recorded().add(*TORCH_216, *JAX_013))
    assert result.ok
    lines = describe(result)
    assert lines[:2] == [
        "pytorch 2.15.0 -> 2.16.0",
        "jax held at 0.12.0: 0.13.0 conflicts on stack cu13 (nvidia-cudnn-cu13: torch 2.16.0 "
        "pins ==9.28.0.40, jax 0.13.0 asks <10,>=9.30)"]
    assert "cu13 nvidia-cudnn-cu13 9.26.0.51 -> 9.28.0.40 (torch 2.16.0 pins it)" in lines


def test_two_rows_are_held_back_together_when_neither_alone_fits(
    write_release: WriteRelease,
) -> None:
    # jax 0.12.x asks cuDNN below 9.28, which torch 2.16.0 pins: holding back jax alone
    # conflicts with torch 2.16.0, holding back torch alone conflicts with jax 0.13.0.
    below = "nvidia-cudnn-cu13<9.28,>=9.12"
    recorded = Recorded().add(*TORCH_216, *JAX_013, jax("0.12.5"), jaxlib("0.12.5"),
                              plugin("0.12.5", cudnn=below))
    recorded.wheels = [plugin("0.12.0", cudnn=below) if (w.name, w.version) == (
        "jax-cuda13-plugin", "0.12.0") else w for w in recorded.wheels]
    result = bump(write_release, recorded)
    assert result.ok
    lines = describe(result)
    why = ("conflicts on stack cu13 (nvidia-cudnn-cu13: torch 2.16.0 pins ==9.28.0.40, "
           "jax 0.13.0 asks <10,>=9.30)")
    assert lines[:2] == [f"pytorch held at 2.15.0: 2.16.0 {why}",
                         f"jax 0.12.0 -> 0.12.5 (not newer: 0.13.0 {why})"]
    assert result.stacks[0].wheels["nvidia-cudnn-cu13"] == "9.26.0.51"


def test_a_conflict_nothing_can_hold_back_is_reported(write_release: WriteRelease) -> None:
    # Both rows are tracked onto the new versions only: no older version to step back to.
    text = GOOD_RELEASE.replace('version: "2.15.0"', 'version: "2.15.0"\n    track: "2.16.*"')
    text = text.replace('version: "0.12.0"', 'version: "0.12.0"\n    track: "0.13.*"')
    result = bump(write_release, Recorded().add(*TORCH_216, *JAX_013), text)
    assert not result.ok
    assert [c.message for c in result.conflicts] == [
        "nvidia-cudnn-cu13: torch 2.16.0 pins ==9.28.0.40, jax 0.13.0 asks <10,>=9.30"]
    assert result.conflicts[0].owners == ("0", "1")
    assert describe(result)[-1] == ("cu13 conflict: nvidia-cudnn-cu13: torch 2.16.0 pins "
                                    "==9.28.0.40, jax 0.13.0 asks <10,>=9.30")


def test_expect_failure_rows_keep_their_version_and_say_what_is_newer(
    write_release: WriteRelease,
) -> None:
    recorded = Recorded().add(plain("tensorrt", "11.4.0.106"), plain("tensorrt", "11.5.0.7"))
    result = bump(write_release, recorded, GOOD_RELEASE + TENSORRT)
    assert describe(result)[2] == "tensorrt kept at 11.4.0.106 (expect_failure): 11.5.0.7 exists"
    assert not any(f.startswith("tensorrt") for f in recorded.fetched)  # never examined


def test_to_json_carries_every_change(write_release: WriteRelease) -> None:
    result = bump(write_release, Recorded().add(*TORCH_216, *JAX_013))
    data = json.loads(to_json(result))
    assert data["ok"] is True
    assert data["release"] == "26.11"
    assert [(f["image"], f["old"], f["new"], f["changed"]) for f in data["frameworks"]] == [
        ("pytorch", "2.15.0", "2.16.0", True), ("jax", "0.12.0", "0.12.0", False)]
    assert data["stacks"][0]["cuda_new"] == "13.3"
    assert {c["wheel"] for c in data["stacks"][0]["changes"]} >= {"nvidia-cudnn-cu13"}


def test_a_long_list_of_turned_down_versions_is_shortened() -> None:
    change = FrameworkChange("caffe2", "caffe2", None, "1.10.2", "1.12.1",
                             ("2.8.0 needs CUDA", "2.7.1 needs CUDA", "2.7.0 needs CUDA"))
    result = BumpResult("26.11", (change,), ())
    assert describe(result) == ["caffe2 1.10.2 -> 1.12.1 (not newer: 2.8.0 needs CUDA; "
                                "2.7.1 needs CUDA; 1 older versions turned down too)"]
