"""The pipeline tests' release: the good manifest planned, locked and rendered against the
fake engine and registry (`Setup.go` runs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.plan.dag import plan_release
from ngc_builder.render.content_keys import content_keys
from ngc_builder.render.contexts import render_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE, fake_fetch
from tests.unit.fake_engine import FakeEngine, Setup, fake_registry
from tests.unit.locks import fake_lock


@pytest.fixture
def setup(write_release: WriteRelease, tmp_path: Path) -> Setup:
    loaded = load_release(write_release(GOOD_RELEASE))
    check_stacks(loaded, fake_fetch)  # as `prepare` does, with the fake index
    engine = FakeEngine()
    plan = plan_release(loaded, fake_registry(engine))
    rendered = {image.spec.name: image
                for image in render_release(loaded, plan, fake_lock(loaded, plan))}
    for image in rendered.values():
        image.write(tmp_path / "context")
    return Setup(plan, rendered, tmp_path, content_keys(loaded, plan, rendered), engine)
