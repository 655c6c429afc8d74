"""The fault suite leaves the engine's tags as it found them, as the integration suite does
(its throwaway namespaces, and the `slow` framework's keyed builds)."""

from __future__ import annotations

from tests.integration.conftest import test_images_removed

__all__ = ["test_images_removed"]
