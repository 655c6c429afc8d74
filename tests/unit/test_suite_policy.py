"""The suite's own rules (tests/conftest.py): a file's folder decides its suite, and under
CI=true a skip that says the host lacks what .ci/run installs fails instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.unit
NO_MARKER = ("def test_plain(request):\n"
             "    assert request.node.get_closest_marker('unit') is not None\n")
LACKS_ROOT = ("import pytest\n\npytestmark = pytest.mark.unit\n\n\n"
              "def test_root_only():\n    pytest.skip('switching UID needs root')\n")
HONEST_SKIP = ("import pytest\n\npytestmark = pytest.mark.unit\n\n\n"
               "def test_not_here():\n    pytest.skip('this machine has an NVIDIA driver')\n")


def suite(tmp_path: Path, name: str, text: str, *args: str, ci: bool) -> str:
    """Run one test file laid out as this repository's tests/unit/ is, with its conftest."""
    (tmp_path / "tests" / "unit").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "tests" / "conftest.py", tmp_path / "tests" / "conftest.py")
    (tmp_path / "tests" / "__init__.py").touch()
    (tmp_path / "tests" / "unit" / "__init__.py").touch()
    (tmp_path / "tests" / "unit" / name).write_text(text)
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci:
        env["CI"] = "true"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", "-m", "unit", *args, f"tests/unit/{name}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
                          timeout=120)
    return done.stdout + done.stderr


def test_a_file_without_a_marker_runs_with_its_folders_suite(tmp_path: Path) -> None:
    assert "1 passed" in suite(tmp_path, "test_plain.py", NO_MARKER, ci=False)


def test_under_ci_a_skip_for_what_the_host_lacks_fails(tmp_path: Path) -> None:
    assert "1 skipped" in suite(tmp_path, "test_root.py", LACKS_ROOT, ci=False)
    said = suite(tmp_path, "test_root.py", LACKS_ROOT, ci=True)
    assert "1 failed" in said and "CI=true: skipped because this host lacks" in said


def test_under_ci_a_skip_that_is_not_about_the_host_stays_a_skip(tmp_path: Path) -> None:
    assert "1 skipped" in suite(tmp_path, "test_honest.py", HONEST_SKIP, ci=True)
