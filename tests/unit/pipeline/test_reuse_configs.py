"""An image pulled from the registry has its config kept by its ID: an image built FROM it
reads there which of its steps wrote a layer (assemble/imageconfig.py). A registry that will
not give it leaves nothing kept and fails nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from ngc_builder.assemble.imageconfig import KnownConfigs
from ngc_builder.pipeline import reuse
from ngc_builder.services.registry import RegistryError

pytestmark = pytest.mark.unit
CONFIG = b'{"history":[{"created_by":"a"},{"created_by":"b","empty_layer":true}]}'
IMAGE_ID = f"sha256:{hashlib.sha256(CONFIG).hexdigest()}"


class Blobs:
    def __init__(self, held: dict[str, bytes]) -> None:
        self.held = held

    def get_blob(self, name: str, digest: str) -> bytes:
        if digest not in self.held:
            raise RegistryError(f"{name}/blobs/{digest}: HTTP 404")
        return self.held[digest]


def _keep(held: dict[str, bytes]) -> None:
    run = SimpleNamespace(registry=Blobs(held))
    reuse._keep_config(cast(Any, run), cast(Any, SimpleNamespace(name="jax")), IMAGE_ID)


def test_a_pulled_images_config_is_kept_by_its_id(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _keep({IMAGE_ID: CONFIG})
    assert KnownConfigs.default().empty_layers(IMAGE_ID) == [False, True]


def test_a_registry_that_will_not_give_it_keeps_nothing(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _keep({})
    assert KnownConfigs.default().empty_layers(IMAGE_ID) is None
