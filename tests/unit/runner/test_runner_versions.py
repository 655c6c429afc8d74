from __future__ import annotations

import pytest

from ngc_builder.runner.versions import (
    normalize_name,
    parse_version,
    prefix_matches,
    release_components,
    versions_equal,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("NVIDIA_cublas.cu13", "nvidia-cublas-cu13"),
        ("cuda--toolkit", "cuda-toolkit"),
        ("jax", "jax"),
    ],
)
def test_normalize_name(name: str, normalized: str) -> None:
    assert normalize_name(name) == normalized


@pytest.mark.parametrize(
    ("installed", "expected"),
    [
        ("13.2.86", "13.2.86"),
        ("1.0", "1.0.0"),  # trailing zeros do not matter
        ("v2.13.0", "2.13.0"),
        ("2.13.0+cpu", "2.13.0"),  # PEP 440: no local label expected, any accepted
        ("2.13.0+CU130", "2.13.0+cu130"),
        ("1.0-alpha-1", "1.0a1"),
        ("1.0.rc.2", "1.0rc2"),
        ("1.0c2", "1.0rc2"),
        ("1.0-1", "1.0.post1"),
        ("1.0.post", "1.0.post0"),
        ("1.0.dev", "1.0.dev0"),
        ("0!1.0", "1.0"),
    ],
)
def test_versions_equal(installed: str, expected: str) -> None:
    assert versions_equal(installed, expected)


@pytest.mark.parametrize(
    ("installed", "expected"),
    [
        ("13.2.85", "13.2.86"),
        ("2.13.0+cpu", "2.13.0+cu130"),
        ("2.13.0", "2.13.0+cu130"),
        ("1.0rc1", "1.0"),
        ("1.0.post1", "1.0"),
        ("1!1.0", "1.0"),
        ("1.0.1", "1.0"),
    ],
)
def test_versions_differ(installed: str, expected: str) -> None:
    assert not versions_equal(installed, expected)


def test_unparseable_versions_compare_as_text() -> None:
    assert parse_version("not a version") is None
    assert versions_equal("Nightly", "nightly")
    assert not versions_equal("nightly", "1.0")


def test_release_components_and_prefix() -> None:
    assert release_components("13.4.1.3") == (13, 4, 1, 3)
    assert prefix_matches((13, 4, 1), "13.4.1.3", 3)
    assert not prefix_matches((13, 4, 0), "13.4.1.3", 3)
    assert prefix_matches((13, 2), "13.2.86", 2)
    assert prefix_matches((9, 26, 0), "9.26", 3)  # a shorter expectation compares what it gives
    with pytest.raises(ValueError):
        release_components("abc")
