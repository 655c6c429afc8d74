"""Before the first build: offline, every locked file must already be in the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import StepError
from ngc_builder.pipeline.cache import ready_cache
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.prepare import prepare
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import FakeClient, FakeEngine

pytestmark = pytest.mark.unit


def test_offline_with_an_empty_cache_stops_before_anything_is_built(
        write_release: WriteRelease, tmp_path: Path) -> None:
    prepared = prepare(write_release(GOOD_RELEASE), None, stack_check=False)
    engine = FakeEngine()
    ui = Ui(tmp_path / "logs", show_logs=False)
    with pytest.raises(StepError) as caught:
        ready_cache(FakeClient(engine), prepared.loaded, prepared.lock,
                    prepared.plan.select(["jax"]), offline=True, ui=ui, meanwhile=list)
    ui.close()
    assert caught.value.step == "offline"
    assert "locked files are not in the cache" in caught.value.message
    assert "ngc-builder fetch" in caught.value.message
    assert engine.calls == []  # no network made, nothing built
