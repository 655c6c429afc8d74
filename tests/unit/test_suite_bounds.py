"""The suite runs under bounds (pyproject.toml, docs/testing.md): a hung test fails, named,
and a whole session stops, instead of CI being killed with nothing said."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.unit


def test_this_session_has_a_per_test_and_a_session_bound(request: pytest.FixtureRequest) -> None:
    assert request.config.pluginmanager.hasplugin("timeout")
    assert 0 < float(request.config.getini("timeout")) <= 1800
    assert 0 < float(request.config.getini("session_timeout")) <= 7200


def test_a_hung_test_fails_with_its_name(tmp_path: Path) -> None:
    hung = tmp_path / "test_hung.py"
    hung.write_text("import time\n\ndef test_waits_for_ever():\n    time.sleep(600)\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider",
                           "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "--timeout", "1", str(hung)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 1, done.stdout
    assert "Failed: Timeout (>1.0s) from pytest-timeout" in done.stdout
    assert "FAILED" in done.stdout and "test_waits_for_ever" in done.stdout
