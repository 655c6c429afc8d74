"""The banner's lines and the startup hook that gives an unwritable HOME a private one."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ngc_builder.runner import home
from ngc_builder.runner.banner import banner_lines, driver_version
from ngc_builder.runner.runtime import root_read_only

pytestmark = pytest.mark.unit
GPU_IMAGE = {"image": "pytorch", "release": "26.11", "python": "3.13", "framework": "pytorch",
             "title": "PyTorch", "version": "2.15.0", "stack": "cu13", "cuda": "13.2",
             "min_driver": "580", "libraries": {"cudart": "13.2.86", "cudnn": "9.26.0.51",
                                                 "nccl": "2.30.7"}}


def test_a_gpu_image_without_a_driver_says_so_and_names_its_stack() -> None:
    lines = banner_lines(GPU_IMAGE, None, 64 << 20)
    assert lines[:3] == ["== PyTorch ==", "ngc-builder release 26.11, PyTorch 2.15.0, Python 3.13",
                         "CUDA 13.2 (CUDA runtime 13.2.86, cuDNN 9.26.0.51, NCCL 2.30.7)"]
    assert lines[3].startswith("WARNING: no NVIDIA driver found")
    assert lines[-2].startswith("NOTE: /dev/shm is 64 MB")


def test_an_old_driver_is_named_against_the_minimum_and_a_good_one_quietly() -> None:
    old = banner_lines(GPU_IMAGE, "575.51.03", 8 << 30)
    assert "driver 575.51.03 is older than this image's minimum 580" in old[3]
    assert banner_lines(GPU_IMAGE, "580.95.05", 8 << 30)[3:] == ["NVIDIA driver 580.95.05", ""]
    cpu = banner_lines({"image": "mxnet-cpu", "release": "26.11", "python": "3.13"}, None,
                       8 << 30)
    assert cpu == ["== mxnet-cpu ==", "ngc-builder release 26.11, Python 3.13", ""]
    # A shared layer started on its own names no release: several releases tag it.
    base = banner_lines({"image": "base", "python": "3.13"}, None, 8 << 30)
    assert base == ["== base ==", "ngc-builder base, Python 3.13", ""]


def test_the_driver_version_is_read_from_procfs(tmp_path: Path) -> None:
    proprietary = tmp_path / "a"
    proprietary.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 9"
                           " 2025\nGCC version: gcc version 12.2.0\n")
    open_module = tmp_path / "b"
    open_module.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20"
                           "  Release Build\n")
    assert driver_version(proprietary) == "580.95.05"
    assert driver_version(open_module) == "570.133.20"
    assert driver_version(tmp_path / "missing") is None


def test_an_unwritable_home_moves_to_a_private_one(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path / "absent"), "USER": "someone"}
    moved = home.settle(environ)
    assert moved is not None and environ["HOME"] == moved
    assert Path(moved).name == f"home-{os.getuid()}"
    assert os.stat(moved).st_mode & 0o777 == 0o700
    assert environ["USER"] == "someone"
    writable = {"HOME": str(tmp_path)}
    assert home.settle(writable) is None and writable["HOME"] == str(tmp_path)


SYSTEM_PYTHON = "/usr/bin/python3"  # an interpreter any UID may run (the venv's is root's)


@pytest.mark.skipif(os.getuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK),
                    reason="needs root and the system Python to start a process as another UID")
def test_a_uid_without_a_password_entry_gets_a_name_and_a_home() -> None:
    # Under /tmp itself: pytest's own folders are private to root.
    shared = Path(tempfile.mkdtemp(prefix="ngc-home-"))
    try:
        shared.chmod(0o1777)
        shutil.copy(home.__file__, shared / "ngc_home.py")
        program = ("import getpass, os, sys; sys.path.insert(0, sys.argv[1]); import ngc_home;"
                   " print(getpass.getuser(), os.environ['HOME'])")
        done = subprocess.run([SYSTEM_PYTHON, "-S", "-c", program, str(shared)], cwd="/",
                              capture_output=True, text=True, check=False, user=54321,
                              group=54321, env={"HOME": "/", "TMPDIR": str(shared)}, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["uid54321", str(shared / "home-54321")]
    finally:
        shutil.rmtree(shared)


def test_a_read_only_root_is_read_from_mountinfo(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text("22 1 0:21 / / ro,relatime - overlay overlay rw,lowerdir=/a\n"
                    "23 22 0:22 / /tmp rw,nosuid - tmpfs tmpfs rw\n")
    assert root_read_only(str(info)) is True
    info.write_text("22 1 0:21 / / rw,relatime - overlay overlay rw\n")
    assert root_read_only(str(info)) is False
