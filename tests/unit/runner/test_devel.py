"""The devel checks' decisions without a compiler: where they run, what a built library must
carry, and the flags they build with. The compilers themselves run in the devel images
(tests/integration/test_devel_image.py) and on GPU nodes (docs/validation-gpu.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ngc_builder.runner import devel, toolkit
from ngc_builder.runner.context import CheckFailed, CheckSkipped, Context, RunEnv
from ngc_builder.runner.run import build_suite
from tests.unit.runner.test_archs import elf_with, fatbin, write

pytestmark = pytest.mark.unit
TARGETS: dict[str, object] = {"gpu_targets": ["8.0", "9.0"]}


def ctx(expect: dict[str, object], host_mode: bool = False) -> Context:
    return Context(RunEnv(expect, "none", False, False, host_mode=host_mode), "devel.check")


def test_the_devel_checks_exist_only_in_devel_images_and_on_hosts(tmp_path: Path) -> None:
    def ids(expect: dict[str, object]) -> set[str]:
        return {check.id for check in build_suite(expect, tmp_path).checks}

    assert "devel.toolchain" not in ids({"image": "jax", **TARGETS})
    devel_checks = {"devel.toolchain", "devel.nvcc_targets", "devel.nvcc_kernel_run"}
    assert devel_checks <= ids({"image": "jax-devel", "devel": {"cuda_home": "/x"}, **TARGETS})
    assert devel_checks <= ids({"image": "host:jax", "host_mode": True, **TARGETS})


def test_outside_a_devel_image_a_framework_s_devel_check_is_skipped_with_the_tag() -> None:
    with pytest.raises(CheckSkipped, match=r"not a devel image.*-devel tag"):
        ctx({"image": "jax"}).cuda_home()


def test_a_host_without_a_toolkit_says_so(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    nowhere = (str(tmp_path / "none"),)
    with pytest.raises(CheckSkipped, match="host mode: no CUDA toolkit here"):
        toolkit.cuda_home(ctx({"host_mode": True}, host_mode=True), nowhere)
    (tmp_path / "cuda" / "bin").mkdir(parents=True)
    (tmp_path / "cuda" / "bin" / "nvcc").write_text("")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    found = toolkit.cuda_home(ctx({"host_mode": True}, host_mode=True), nowhere)
    assert found == tmp_path / "cuda"


def test_a_built_library_must_carry_sass_for_every_target(tmp_path: Path) -> None:
    both = write(tmp_path, elf_with(fatbin([(2, 80), (2, 90), (1, 90)])), "libok.so")
    assert ctx(TARGETS).gpu_code_covers(str(both)) == "sm_80, sm_90, compute_90"
    # PTX alone is not enough for a release target: it needs SASS (as T0 cuda.archs).
    ptx_only = write(tmp_path, elf_with(fatbin([(2, 80), (1, 90)])), "libptx.so")
    with pytest.raises(CheckFailed, match=re.escape("libptx.so has no sm_90 code")):
        ctx(TARGETS).gpu_code_covers(str(ptx_only))
    host_only = write(tmp_path, b"\x7fELF" + bytes(60), "libhost.so")
    with pytest.raises(CheckFailed, match="carries no GPU code"):
        ctx(TARGETS).gpu_code_covers(str(host_only))


def test_gencode_flags_give_sass_per_target_and_ptx_of_the_newest() -> None:
    assert devel.gencode_flags(["9.0", "8.0", "8.0"]) == [
        "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
        "-gencode=arch=compute_90,code=compute_90"]


def test_nvcc_of_another_version_is_a_second_toolkit(tmp_path: Path) -> None:
    home = tmp_path / "cu13"
    (home / "bin").mkdir(parents=True)
    nvcc = home / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.9, V12.9.86'\n")
    nvcc.chmod(0o755)
    context = ctx({"devel": {"cuda_home": str(home), "nvcc": "13.2.86"}})
    with pytest.raises(CheckFailed, match=re.escape(
            "nvcc is V12.9.86, the stack's nvidia-cuda-nvcc is 13.2.86: a second CUDA toolkit")):
        devel.check_toolchain(context)


def test_under_emulation_nvcc_builds_for_the_newest_target_only() -> None:
    """Another platform's nvcc, cicc and ptxas are proven by one compile; a native node's full
    tier builds every target."""
    expect: dict[str, object] = {"gpu_targets": ["9.0", "8.0", "10.0"]}
    assert devel.compiled_targets(ctx(expect)) == ["9.0", "8.0", "10.0"]
    emulated = Context(RunEnv(expect, "none", False, False, scope="emulated"), "devel.check")
    assert devel.compiled_targets(emulated) == ["10.0"]
    assert emulated.evidence_data["emulated_targets"] == \
        "only 10.0 of 9.0, 8.0, 10.0 under emulation"
