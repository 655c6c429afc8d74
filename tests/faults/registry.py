"""The fault suite's registries are the tests' own kind (tests/own_registry.py)."""

from __future__ import annotations

from tests.own_registry import OwnRegistry, own_registry

__all__ = ["OwnRegistry", "own_registry"]
