"""Stage 2, plan: the DAG, NGC-style names and tags, and the labels every image carries."""

from __future__ import annotations

import pytest

from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.plan.dag import LABEL_PREFIX, plan_release
from ngc_builder.services.registry import parse_registry
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE, STACK

pytestmark = pytest.mark.unit

DIGEST = "0123456789abcdef" * 4


@pytest.fixture
def loaded(write_release: WriteRelease) -> LoadedRelease:
    return load_release(write_release(GOOD_RELEASE))


def test_order_is_base_then_cuda_then_frameworks(loaded: LoadedRelease) -> None:
    plan = plan_release(loaded)
    assert [(i.name, i.kind, i.parent) for i in plan.images] == [
        ("base", "base", None),
        ("cuda-cu13", "cuda", "base"),
        ("pytorch", "framework", "cuda-cu13"),
        ("jax", "framework", "cuda-cu13"),
    ]
    assert plan.release == "26.11"
    assert plan.os_refs == {"debian-trixie": "ngc-local/os-debian-trixie:13"}
    assert plan.os_ref(plan.get("base")) == "ngc-local/os-debian-trixie:13"


def test_every_parent_comes_before_its_child(loaded: LoadedRelease) -> None:
    plan = plan_release(loaded)
    seen: set[str] = set()
    for image in plan.images:
        assert image.parent is None or image.parent in seen
        seen.add(image.name)


def test_tags_are_ngc_style(loaded: LoadedRelease) -> None:
    plan = plan_release(loaded)
    assert plan.registry.address == "localhost:5000"
    assert [i.remote_ref(plan.registry) for i in plan.images] == [
        "localhost:5000/base:26.11-py3",
        "localhost:5000/cuda-cu13:26.11-py3",
        "localhost:5000/pytorch:26.11-py3",
        "localhost:5000/jax:26.11-py3",
    ]
    jax = plan.get("jax")
    assert jax.tag == "26.11-py3"
    assert jax.remote_repository(plan.registry) == "localhost:5000/jax"


def test_registry_with_a_namespace(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("registry: localhost:5000", "registry: localhost:5000/team")
    plan = plan_release(load_release(write_release(text)))
    assert plan.get("jax").remote_ref(plan.registry) == "localhost:5000/team/jax:26.11-py3"


def test_registry_option_overrides_the_manifest(loaded: LoadedRelease) -> None:
    plan = plan_release(loaded, parse_registry("registry.example.com:443/ml"))
    assert plan.registry.address == "registry.example.com:443/ml"
    assert plan.get("jax").remote_ref(plan.registry) == (
        "registry.example.com:443/ml/jax:26.11-py3")
    assert plan_release(loaded, None).registry.address == "localhost:5000"


def test_select_returns_the_image_and_its_ancestors_in_order(loaded: LoadedRelease) -> None:
    plan = plan_release(loaded)
    assert [i.name for i in plan.select(["jax"])] == ["base", "cuda-cu13", "jax"]
    assert [i.name for i in plan.select(["cuda-cu13"])] == ["base", "cuda-cu13"]
    assert [i.name for i in plan.select(["jax", "pytorch"])] == [
        "base", "cuda-cu13", "pytorch", "jax"]
    assert [i.name for i in plan.select([])] == ["base", "cuda-cu13", "pytorch", "jax"]


def test_framework_labels(loaded: LoadedRelease) -> None:
    labels = plan_release(loaded).get("jax").labels
    p = LABEL_PREFIX
    assert labels[f"{p}.framework"] == "jax"
    assert labels[f"{p}.framework.version"] == "0.12.0"
    assert labels[f"{p}.cuda"] == "13.2"
    assert labels[f"{p}.cudnn"] == "9.26.0.51"
    assert labels[f"{p}.nccl"] == "2.30.7"
    assert labels[f"{p}.cublas"] == "13.4.1.3"
    assert labels[f"{p}.cudart"] == "13.2.86"
    assert labels[f"{p}.python"] == "3.13"
    assert labels[f"{p}.release"] == "26.11"
    assert labels[f"{p}.stack"] == "cu13"
    assert labels[f"{p}.image"] == "jax"
    assert labels["org.opencontainers.image.title"] == "JAX 26.11"
    assert labels["org.opencontainers.image.version"] == "26.11-py3"


def test_base_and_cuda_labels(loaded: LoadedRelease) -> None:
    plan = plan_release(loaded)
    base = plan.get("base").labels
    assert f"{LABEL_PREFIX}.cuda" not in base
    assert f"{LABEL_PREFIX}.framework" not in base
    assert base[f"{LABEL_PREFIX}.python"] == "3.13"
    cuda = plan.get("cuda-cu13").labels
    assert cuda[f"{LABEL_PREFIX}.cuda"] == "13.2"
    assert cuda[f"{LABEL_PREFIX}.nccl"] == "2.30.7"
    assert f"{LABEL_PREFIX}.framework" not in cuda
    # Shared layers name no release (a later release tags the same digest): their version is
    # what they package.
    assert f"{LABEL_PREFIX}.release" not in base and f"{LABEL_PREFIX}.release" not in cuda
    assert base["org.opencontainers.image.version"] == "debian-13"
    assert cuda["org.opencontainers.image.version"] == "13.2"
    assert plan.get("jax").labels[f"{LABEL_PREFIX}.release"] == "26.11"


def test_local_ref_embeds_the_first_12_digest_chars(loaded: LoadedRelease) -> None:
    jax = plan_release(loaded).get("jax")
    assert jax.local_ref(DIGEST) == "ngc-local/jax:26.11-py3-0123456789ab"
    assert jax.local_ref("f" * 64) != jax.local_ref(DIGEST)
    assert plan_release(loaded).get("cuda-cu13").local_ref(DIGEST) == \
        "ngc-local/cuda-cu13:layer-0123456789ab"


def test_named_variant_image_and_unused_stacks(write_release: WriteRelease) -> None:
    second_stack = STACK.replace("cuda_stacks:\n  cu13:", "cuda_stacks:\n  cu13b:")
    second_stack = second_stack.removeprefix("cuda_stacks:\n")
    text = f"""\
release: "26.11"
registry: localhost:5000
base: debian-trixie
{STACK}{second_stack}
images:
  - framework: jax
    name: jax-cpu
    variant: cpu
    version: "0.12.0"
    stack: cu13b
"""
    plan = plan_release(load_release(write_release(text)))
    assert [(i.name, i.parent) for i in plan.images] == [
        ("base", None), ("cuda-cu13b", "base"), ("jax-cpu", "cuda-cu13b")]
    image = plan.get("jax-cpu")
    assert image.remote_ref(plan.registry) == "localhost:5000/jax-cpu:26.11-py3"
    assert image.labels[f"{LABEL_PREFIX}.framework"] == "jax"
    assert image.labels[f"{LABEL_PREFIX}.stack"] == "cu13b"


@pytest.mark.parametrize("cuda,driver", [("13.2", "580"), ("12.9", "525.60.13"),
                                         ("11.7", "450.80.02"), ("10.2", None)])
def test_minimum_driver_follows_nvidias_table(cuda: str, driver: str | None) -> None:
    from ngc_builder.manifest.drivers import minimum_driver

    assert minimum_driver(cuda) == driver
