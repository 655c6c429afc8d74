"""The bump's index through the real pip and the real package index (no engine needed:
`pytest --noconftest tests/integration/test_bump_index.py` runs it alone)."""

from __future__ import annotations

import pytest

from ngc_builder.bump.available import pip_versions
from ngc_builder.manifest.wheels import Target

pytestmark = pytest.mark.integration


def test_jupyterlab_versions_for_python_313() -> None:
    found = pip_versions("jupyterlab", Target("3.13", "2.41"))
    assert "4.6.6" in found  # 26.11's tools pin
    assert found == sorted(found, key=lambda v: tuple(int(p) for p in v.split(".")),
                           reverse=True)
