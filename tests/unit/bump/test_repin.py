"""Stack re-pinning: exact pins decide, ranges keep what fits, clashes name both sides."""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement

from ngc_builder.bump.repin import Ask, Conflict, WheelChange, cuda_of, repin, settle
from ngc_builder.manifest.models import CudaStack
from ngc_builder.manifest.wheels import Target
from tests.unit.bump.recorded import Recorded, plain

pytestmark = pytest.mark.unit

TARGET = Target("3.13", "2.41")
STACK = CudaStack(cuda="13.2", wheels={
    "nvidia-cuda-runtime": "13.2.86", "nvidia-cudnn-cu13": "9.26.0.51",
    "nvidia-nvshmem-cu13": "3.7.2", "nvidia-cuda-crt": "13.2.86"})
INDEX = Recorded([plain("nvidia-cudnn-cu13", v) for v in ("9.26.0.51", "9.28.0.40", "9.30.1.2")]
                 + [plain("nvidia-nvshmem-cu13", v) for v in ("3.7.2", "3.8.1", "4.0.0")]
                 + [plain("nvidia-cuda-runtime", v) for v in ("13.2.86", "13.3.20")]).index


def ask(owner: str, who: str, requirement: str) -> Ask:
    return Ask(owner, who, Requirement(requirement))


def test_an_exact_pin_moves_the_wheel_and_says_who_pins_it() -> None:
    asks = [ask("0", "torch 2.16.0", "nvidia-cudnn-cu13==9.28.0.40"),
            ask("1", "jax 0.12.0", "nvidia-cudnn-cu13<10.0,>=9.12.0.46")]
    assert settle("nvidia-cudnn-cu13", "9.26.0.51", asks, INDEX, TARGET) == WheelChange(
        "nvidia-cudnn-cu13", "9.26.0.51", "9.28.0.40", "torch 2.16.0 pins it")


def test_a_pin_equal_to_the_stack_is_no_change() -> None:
    asks = [ask("0", "torch 2.15.0", "nvidia-cudnn-cu13==9.26.0.51")]
    assert settle("nvidia-cudnn-cu13", "9.26.0.51", asks, INDEX, TARGET) is None


def test_ranges_keep_the_current_version_while_all_admit_it() -> None:
    asks = [ask("1", "jax 0.13.0", "nvidia-cudnn-cu13>=9.20"),
            ask("2", "tf 2.22.0", "nvidia-cudnn-cu13<10")]
    assert settle("nvidia-cudnn-cu13", "9.26.0.51", asks, INDEX, TARGET) is None


def test_ranges_take_the_newest_version_inside_all_of_them() -> None:
    asks = [ask("1", "jax 0.13.0", "nvidia-nvshmem-cu13>=3.8"),
            ask("2", "other 1.0", "nvidia-nvshmem-cu13<4")]
    assert settle("nvidia-nvshmem-cu13", "3.7.2", asks, INDEX, TARGET) == WheelChange(
        "nvidia-nvshmem-cu13", "3.7.2", "3.8.1", "jax 0.13.0 asks >=3.8, other 1.0 asks <4")


def test_a_pin_outside_another_range_is_a_conflict_naming_both() -> None:
    asks = [ask("0", "torch 2.16.0", "nvidia-cudnn-cu13==9.28.0.40"),
            ask("1", "jax 0.13.0", "nvidia-cudnn-cu13>=9.30")]
    assert settle("nvidia-cudnn-cu13", "9.26.0.51", asks, INDEX, TARGET) == Conflict(
        "nvidia-cudnn-cu13", ("0", "1"),
        "nvidia-cudnn-cu13: torch 2.16.0 pins ==9.28.0.40, jax 0.13.0 asks >=9.30")


def test_two_different_exact_pins_are_a_conflict() -> None:
    asks = [ask("0", "torch 2.16.0", "nvidia-cudnn-cu13==9.28.0.40"),
            ask("1", "jax 0.13.0", "nvidia-cudnn-cu13==9.30.1.2")]
    found = settle("nvidia-cudnn-cu13", "9.26.0.51", asks, INDEX, TARGET)
    assert isinstance(found, Conflict)
    assert found.message == ("nvidia-cudnn-cu13: torch 2.16.0 pins ==9.28.0.40, "
                             "jax 0.13.0 pins ==9.30.1.2")


def test_ranges_no_listed_version_meets_are_a_conflict() -> None:
    asks = [ask("1", "jax 0.13.0", "nvidia-nvshmem-cu13>=4"),
            ask("2", "other 1.0", "nvidia-nvshmem-cu13<3.8")]
    found = settle("nvidia-nvshmem-cu13", "3.7.2", asks, INDEX, TARGET)
    assert isinstance(found, Conflict)
    assert found.message == ("nvidia-nvshmem-cu13: no version of nvidia-nvshmem-cu13 the index "
                             "holds fits: jax 0.13.0 asks >=4, other 1.0 asks <3.8")


def test_a_prefix_pin_is_a_range_and_cuda_follows_the_runtime() -> None:
    asks = [ask("0", "torch 2.16.0", "nvidia-cuda-runtime==13.3.20.*")]
    plan = repin("cu13", STACK, asks, INDEX, TARGET)
    assert [(c.wheel, c.old, c.new) for c in plan.changes] == [
        ("nvidia-cuda-runtime", "13.2.86", "13.3.20")]
    assert (plan.cuda_old, plan.cuda_new) == ("13.2", "13.3")
    assert plan.unasked == ("nvidia-cudnn-cu13", "nvidia-nvshmem-cu13", "nvidia-cuda-crt")


def test_a_wheel_new_to_the_stack_is_added() -> None:
    asks = [ask("0", "torch 2.16.0", "nvidia-cusparselt-cu13==0.9.0")]
    plan = repin("cu13", STACK, asks, INDEX, TARGET)
    assert plan.changes == (WheelChange("nvidia-cusparselt-cu13", None, "0.9.0",
                                        "torch 2.16.0 pins it"),)
    assert plan.wheels["nvidia-cusparselt-cu13"] == "0.9.0"


@pytest.mark.parametrize(("wheels", "cuda"), [
    ({"nvidia-cuda-runtime-cu12": "12.9.79"}, "12.9"),
    ({"nvidia-cuda-runtime": "13.3.20"}, "13.3"),
    ({"nvidia-cublas": "13.4.1.3"}, "13.2"),  # no runtime wheel: as it was
])
def test_cuda_follows_the_cuda_runtime_wheel(wheels: dict[str, str], cuda: str) -> None:
    assert cuda_of(wheels, "13.2") == cuda
