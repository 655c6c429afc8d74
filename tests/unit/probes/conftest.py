from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from tests.unit.probes.probing import FRAMEWORKS, LoadProbe


@pytest.fixture
def load_probe(monkeypatch: pytest.MonkeyPatch) -> LoadProbe:
    """A probe module by name, imported the way the runner does: from its framework's folder,
    where its sibling modules resolve (they import each other by bare name)."""

    def load(framework: str, name: str) -> ModuleType:
        monkeypatch.syspath_prepend(str(FRAMEWORKS / framework))
        return importlib.import_module(name)

    return load
