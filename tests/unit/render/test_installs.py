"""Each big install split into layers of wheels released together (render/installs.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ngc_builder.lock.models import PipPackage, load_lock, lock_path
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.contexts import render_release
from ngc_builder.render.installs import (
    VENV_TAR,
    families,
    family_install,
    own_wheels,
    venv_tars,
)
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def wheel(name: str, version: str) -> PipPackage:
    return PipPackage(name=name, version=version, file=f"{name}-{version}-py3-none-any.whl",
                      sha256=f"{len(name):064x}")


def test_pinned_wheels_sharing_a_version_make_one_family_each() -> None:
    locked = [wheel("nvidia-cublas", "13.4.1.3"), wheel("nvidia-cuda-runtime", "13.2.86"),
              wheel("numpy", "2.5.5"), wheel("nvidia-cuda-nvrtc", "13.2.86"),
              wheel("nvidia-cufft", "12.2.0.57")]
    pinned = {"nvidia-cublas": "13.4.1.3", "nvidia-cuda-runtime": "13.2.86",
              "nvidia-cuda-nvrtc": "13.2.86", "nvidia-cufft": "12.1.0"}
    grouped = [[package.name for package in family] for family in families(locked, pinned)]
    # numpy is not pinned, cufft is locked at another version than pinned: both are left to
    # the final install, which installs the whole lock and checks it.
    assert grouped == [["nvidia-cublas"], ["nvidia-cuda-nvrtc", "nvidia-cuda-runtime"]]


def test_pins_are_compared_as_pip_compares_them() -> None:
    locked = [wheel("nvidia-cublas", "13.4.1.0"), wheel("torch", "2.15.0+cu130")]
    pinned = {"Nvidia_Cublas": "13.4.1", "torch": "2.15.0"}
    assert [[p.name for p in family] for family in families(locked, pinned)] == [
        ["nvidia-cublas"], ["torch"]]


def test_a_framework_s_own_wheels_are_its_pinned_names_not_a_shared_version() -> None:
    locked = [wheel("jax", "0.12.0"), wheel("jaxlib", "0.12.0"),
              wheel("jax-cuda13-plugin", "0.12.0"), wheel("pygments", "0.12.0"),
              wheel("jax-extras", "0.11.0")]
    own = own_wheels(locked, ["jax[cuda13]==0.12.0", "jaxlib==0.12.0", "not a requirement ("])
    # pygments shares the version by chance (tensorflow 2.21.0 and pygments 2.21.0 did), and
    # a wheel named after the framework at another version moves on its own: neither is in.
    assert own == {"jax": "0.12.0", "jaxlib": "0.12.0", "jax-cuda13-plugin": "0.12.0"}


def printed_requirements(install: str, tmp_path: Path) -> list[str]:
    """What the layer's printf hands pip on stdin, run by a real shell."""
    printf = install.split(" \\\n  | pip install")[0]
    done = subprocess.run(["sh", "-c", printf], capture_output=True, text=True, check=True,
                          cwd=tmp_path)
    return done.stdout.splitlines()


def test_a_family_layer_hands_pip_exactly_its_requirements(tmp_path: Path) -> None:
    family = [wheel("nvidia-cuda-nvrtc", "13.2.86"), wheel("nvidia-cuda-runtime", "13.2.86")]
    install = family_install(family)
    assert printed_requirements(install, tmp_path) == [p.requirement() for p in family]
    assert "--no-deps --require-hashes" in install and install.endswith("-r /dev/stdin")


def test_a_hostile_lock_value_stays_one_word_of_the_requirements(tmp_path: Path) -> None:
    # The lock's patterns refuse this; the layer's text quotes it all the same.
    hostile = PipPackage.model_construct(name="x'; touch pwned; echo '", version="1$(id)",
                                         file="x.whl", sha256="0" * 64)
    assert printed_requirements(family_install([hostile]), tmp_path) == [hostile.requirement()]
    assert not (tmp_path / "pwned").exists()


def rendered(write_release: WriteRelease, split: bool = True) -> dict[str, str]:
    manifest = write_release(GOOD_RELEASE)
    lock = load_lock(lock_path(manifest))
    assert lock is not None
    loaded = load_release(manifest)
    return {image.spec.name: image.dockerfile
            for image in render_release(loaded, plan_release(loaded), lock, split)}


def run_lines(dockerfile: str) -> list[str]:
    return [line for line in dockerfile.splitlines() if line.startswith(("RUN", "COPY"))]


def test_each_stack_family_is_a_layer_before_the_whole_lock(write_release: WriteRelease) -> None:
    stack = rendered(write_release)["cuda-cu13"]
    steps = run_lines(stack)
    families_at = [i for i, line in enumerate(steps) if line.startswith("RUN printf")]
    lock_at = next(i for i, line in enumerate(steps) if "-r /opt/ngc/stack/requirements.lock"
                   in line)
    assert len(families_at) >= 2 and max(families_at) < lock_at
    # every pinned wheel of the stack is in exactly one family layer
    assert sorted(re.findall(r"'(nvidia-[a-z0-9-]+)==", stack)) == sorted(
        set(re.findall(r"'(nvidia-[a-z0-9-]+)==", stack)))


def test_the_framework_own_wheels_are_a_layer(write_release: WriteRelease) -> None:
    pytorch = rendered(write_release)["pytorch"]
    family = next(line for line in pytorch.split("\n\n") if line.startswith("RUN printf"))
    assert "'torch==2.15.0 --hash=sha256:" in family and "numpy" not in family


def test_one_install_layer_renders_as_before_the_split(write_release: WriteRelease) -> None:
    for name, dockerfile in rendered(write_release, split=False).items():
        assert "--no-deps" not in dockerfile, name


def test_another_platform_gets_a_tar_per_family_then_one_of_the_rest() -> None:
    locked = [wheel("jax", "0.12.0"), wheel("jaxlib", "0.12.0"), wheel("numpy", "2.5.5")]
    context: dict[str, object] = {"pinned": {"jax": "0.12.0", "jaxlib": "0.12.0"}}
    assert venv_tars(locked, context) == {"venv-1.tar": ["jax", "jaxlib"], VENV_TAR: ["numpy"]}
    assert venv_tars(locked, {**context, "split": False}) == {
        VENV_TAR: ["jax", "jaxlib", "numpy"]}
    assert venv_tars([], context) == {}
