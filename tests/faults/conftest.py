"""The fault suite leaves the engine's tags as it found them, as the integration suite does
(its throwaway namespaces, and the `slow` framework's keyed builds), and its `--offline` runs
find the CI lock's files in the shared package cache whatever this machine did before."""

from __future__ import annotations

import pytest

from tests.integration.conftest import (
    docker_client,
    locked_trixie_os,
    test_images_removed,
    trixie_os,
)

__all__ = ["docker_client", "locked_trixie_os", "test_images_removed", "trixie_os"]


@pytest.fixture(autouse=True)
def _packages_cached(ci_packages: None) -> None:
    """Every fault test's release runs `--offline` (tests/faults/running.py)."""
