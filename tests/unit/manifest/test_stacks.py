"""A framework layer must reuse its stack's CUDA wheels: mismatches stop the release."""

from __future__ import annotations

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.stacks import check_stacks, is_cuda_library
from ngc_builder.manifest.wheels import Target
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE, fake_fetch

pytestmark = pytest.mark.unit


def mismatches(write_release: WriteRelease, text: str) -> list[str]:
    loaded = load_release(write_release(text))
    try:
        check_stacks(loaded, fake_fetch)
    except InputError as exc:
        return [str(p) for p in exc.problems]
    return []


def test_matching_stack_passes(write_release: WriteRelease) -> None:
    assert mismatches(write_release, GOOD_RELEASE) == []


def test_exact_pin_mismatch_names_image_requirement_and_stack(
    write_release: WriteRelease,
) -> None:
    text = GOOD_RELEASE.replace('nvidia-cudnn-cu13: "9.26.0.51"', 'nvidia-cudnn-cu13: "9.20.0.48"')
    assert mismatches(write_release, text) == [
        "releases/26.11.yaml:22: images[0].version: pytorch: nvidia-cudnn-cu13==9.26.0.51 "
        "(via torch==2.15.0) does not accept 9.20.0.48 from stack cu13: the framework layer "
        "would download its own copy"]


def test_lower_bound_is_met_by_a_newer_stack(write_release: WriteRelease) -> None:
    # jax asks for nvidia-cudnn-cu13>=9.12: 9.26 in the stack is fine, 9.8 is not.
    text = GOOD_RELEASE.replace('nvidia-cudnn-cu13: "9.26.0.51"', 'nvidia-cudnn-cu13: "9.8.0.1"')
    found = mismatches(write_release, text)
    assert any("jax: nvidia-cudnn-cu13<10.0,>=9.12.0.46 (via jax[cuda13]==0.12.0 -> "
               "jax-cuda13-plugin) does not accept 9.8.0.1" in p for p in found)


def test_missing_library_found_through_extras(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('      nvidia-nvshmem-cu13: "3.7.2"\n', "")
    found = mismatches(write_release, text)
    assert found == [
        "releases/26.11.yaml:24: images[1].version: jax: nvidia-nvshmem-cu13>=3.3.20 "
        "(via jax[cuda13]==0.12.0 -> jax-cuda13-plugin) is not in stack cu13: the framework "
        "layer would download its own copy"]


def test_meta_package_extras_are_followed_at_the_stack_version(
    write_release: WriteRelease,
) -> None:
    # torch wants cuda-toolkit[cublas,cudart]: each extra's wheel must be in the stack.
    text = GOOD_RELEASE.replace('      nvidia-cuda-runtime: "13.2.86"\n', "").replace(
        "      cudart: nvidia-cuda-runtime\n", "")
    found = mismatches(write_release, text)
    assert any("nvidia-cuda-runtime==13.2.86.* (via torch==2.15.0 -> cuda-toolkit) is not in "
               "stack cu13" in p for p in found)


def test_extras_not_asked_for_are_ignored(write_release: WriteRelease) -> None:
    # cuda-toolkit[npp] is not requested by torch: nvidia-npp need not be in the stack,
    # and jax's cpu variant asks for no CUDA library at all.
    text = GOOD_RELEASE.replace('version: "0.12.0"', 'version: "0.12.0"\n    variant: cpu')
    assert mismatches(write_release, text) == []


def test_wheel_python_requirement_is_checked(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    object.__setattr__(loaded.base, "python", "3.11")
    with pytest.raises(InputError) as caught:
        check_stacks(loaded, fake_fetch)
    assert any("jax[cuda13]==0.12.0: wheel needs Python >=3.12, base has 3.11" in str(p)
               for p in caught.value.problems)


@pytest.mark.parametrize("name,expected", [
    ("nvidia-cublas", True), ("NVIDIA_cudnn_cu13", True), ("cuda-toolkit", True),
    ("cuda-bindings", False), ("jaxlib", False),
])
def test_cuda_library_names(name: str, expected: bool) -> None:
    assert is_cuda_library(name) is expected


def test_target_platforms_cover_older_manylinux() -> None:
    platforms = Target("3.13", "2.41").platforms()
    assert platforms[0] == "manylinux_2_41_x86_64"
    assert "manylinux_2_17_x86_64" in platforms and "manylinux_2_5_x86_64" in platforms
    assert {"manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"} <= set(platforms)
